@rfc-8-corrupt-partial @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Corrupt/partial state
  RFC §3/§4: damaged files fail atomically; a corrupt newest file never silently
  restores an older one; list marks it invalid; the caller names a valid file.

  @rfc-3-corrupt-newest-no-fallback @rfc-4-strict-reader @rfc-pin-json-reading @rfc-pin-envelope-order @rfc-pin-payload-rules @rfc-pin-reader-result-names
  Scenario Outline: A damaged newest file is listed corrupt, refuses restore, and restores nothing
    Given checkpoint "older" of format 3 with generation 1 is planted in the store
    And checkpoint "newest" of format 3 with generation 2 is planted in the store as "<defect>"
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$newest" with status "corrupt"
    And the result lists checkpoint "$older" with status "valid"
    When the owner calls "recovery.restore" with {"checkpoint":"$newest"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner calls "session.list"
    Then the result "sessions" is []
    When the owner calls "recovery.restore" with {"checkpoint":"$older"}
    Then the call succeeds

    Examples:
      | defect                             |
      | truncated                          |
      | bad checksum                       |
      | duplicate key                      |
      | duplicate pane id                  |
      | invalid tree                       |
      | unknown field                      |
      | trailing data                      |
      | unsafe integer                     |
      | running pane in a clean checkpoint |
      | format 1.0                         |

  @rfc-3-duplicate-generation
  Scenario: Two files with the same generation are refused for restore
    Given checkpoint "a" of format 3 with generation 2 is planted in the store
    And checkpoint "b" of format 3 with generation 2 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$a"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner calls "session.list"
    Then the result "sessions" is []

  Scenario: Inspect of a corrupt file reveals no payload
    Given checkpoint "bad" of format 1 with generation 1 is planted in the store as "bad checksum"
    And a daemon started with recovery enabled
    When the owner calls "recovery.inspect" with {"checkpoint":"$bad"}
    Then the call fails with "conflict.checkpoint_corrupt"
    And no reply or error contains "shell"
