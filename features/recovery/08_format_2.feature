@rfc-8-format-2 @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Format 2
  RFC §4.1: format 2 adds pane `layer`/`float` and `tags`; format-1 files read as all
  tiled with no tags and get owner = the restoring namespace; a format-1 file with a
  format-2 field and any invalid float or tag field are corrupt; floats restore in
  the float layer with fresh z in saved order; popups are never checkpointed.

  @rfc-4-strict-reader @rfc-pin-reader-result-names
  Scenario: A format-2 file with floats and tags lists valid and restores its floats in the float layer
    Given checkpoint "f2" of format 2 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$f2" with status "valid"
    When the owner calls "recovery.restore" with {"checkpoint":"$f2"}
    Then the call succeeds
    When the owner calls "pane.list"
    Then the result "panes.0.layer" is absent
    And the result "panes.0.tags" is [{"key":"owner","value":"venom"},{"key":"role","value":"agent"}]
    And the result "panes.1.layer" is "float"
    And the result "panes.2.layer" is "float"

  Scenario: A format-1 file restores as all tiled with owner = the restoring namespace
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    When the owner calls "pane.list"
    Then the result "panes.0.layer" is absent
    And the result "panes.0.tags" is [{"key":"owner","value":"venomx"}]

  @rfc-4-strict-reader @rfc-pin-payload-rules @rfc-pin-reader-result-names
  Scenario Outline: Invalid format-2 content is corrupt and restores nothing
    Given checkpoint "bad" of format <format> with generation 1 is planted in the store as "<defect>"
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$bad" with status "corrupt"
    When the owner calls "recovery.restore" with {"checkpoint":"$bad"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner calls "session.list"
    Then the result "sessions" is []

    Examples:
      | format | defect                     |
      | 1      | format-2 field in format 1 |
      | 2      | read as format 1           |
      | 2      | layer tile                 |
      | 2      | popup layer                |
      | 2      | z 0                        |
      | 2      | empty tags                 |
      | 2      | unsorted tags              |
      | 2      | float in a tree            |
      | 2      | bad anchor                 |

  Scenario: Inspect of a format-2 file gives its counts and shutdown marker
    Given checkpoint "f2" of format 2 with generation 7 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.inspect" with {"checkpoint":"$f2"}
    Then the call succeeds
    And the result "checkpoint" is "$f2"
    And the result "generation" is 7
    And the result "shutdown" is "clean"
    And the result "sessions" is 1
    And the result "windows" is 1
    And the result "panes" is 3
    And the result "text_panes" is 0
