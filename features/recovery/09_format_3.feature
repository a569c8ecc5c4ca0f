@rfc-8-format-3 @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Format 3
  RFC §4.2: writers emit format 3 and each split's ratio (omitted for equal splits);
  a resized split restores with the same ratio; formats 1 and 2 restore as equal
  splits; a ratio outside 1-9999, on a pane node or in a format-1/2 file is corrupt.

  Scenario: The writer emits format 3
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "pane.split" with {"pane":"$pane","axis":"cols","argv":["/bin/sh","-c","sleep 60"],"ratio":6250}
    Then the call succeeds
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the newest checkpoint in the store is valid with format 3
    And the newest checkpoint in the store has a split with ratio 6250

  Scenario: A checkpointed resized split restores with the same ratio
    Given checkpoint "f3" of format 3 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f3"}
    Then the call succeeds
    When the owner calls "session.list"
    Then the result "sessions.0.windows.0.nodes.0.ratio" is 6250

  @rfc-4-strict-reader @rfc-pin-reader-result-names
  Scenario Outline: A misplaced or out-of-range ratio is corrupt
    Given checkpoint "bad" of format 3 with generation 1 is planted in the store as "<defect>"
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$bad" with status "corrupt"
    When the owner calls "recovery.restore" with {"checkpoint":"$bad"}
    Then the call fails with "conflict.checkpoint_corrupt"

    Examples:
      | defect               |
      | ratio 0              |
      | ratio 10000          |
      | ratio 62.5           |
      | ratio on a pane node |
      | read as format 2     |
      | read as format 1     |
