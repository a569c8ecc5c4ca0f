@rfc-8-on-demand @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file @rfc-pin-cli-no-daemon-json
Feature: On-demand interaction
  RFC §3 and Open questions: recovery commands are never auto-start triggers; disk
  checkpoints alone do not keep an on-demand daemon alive; shutdown is bounded by
  2000 ms when recovery is disabled and 4000 ms when it is enabled.

  Scenario Outline: A recovery command with no daemon fails as JSON and launches none
    When the owner runs the CLI "<words>" with no daemon listening
    Then the CLI exits with a nonzero code
    And no daemon is listening on the socket

    Examples:
      | words                                                                |
      | recovery list                                                        |
      | recovery inspect --checkpoint c01234567-89ab-4cde-8fab-0123456789ab  |
      | recovery restore --checkpoint c01234567-89ab-4cde-8fab-0123456789ab  |
      | recovery checkpoint                                                  |

  Scenario: Disabled recovery keeps the foundation's 2000 ms shutdown bound
    Given a daemon started with the default configuration
    And the owner has created session "work" with a pane running "trap '' TERM HUP; echo TRAPS-SET; while :; do sleep 1; done"
    And the pane has printed "TRAPS-SET"
    When the daemon is stopped with SIGTERM
    Then the daemon exited successfully within 2600 ms
    And the process $pid is gone

  Scenario: Enabled recovery shuts down within 4000 ms and leaves a clean checkpoint
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "trap '' TERM HUP; echo TRAPS-SET; while :; do sleep 1; done"
    And the pane has printed "TRAPS-SET"
    When the daemon is stopped with SIGTERM
    Then the daemon exited successfully within 4600 ms
    And the process $pid is gone
    And the newest checkpoint in the store is valid with shutdown "clean"

  @optional-on-demand
  Scenario: Disk checkpoints alone do not keep an on-demand daemon alive
    Given checkpoint "old" of format 3 with generation 1 is planted in the store
    And an on-demand daemon started with recovery enabled
    When 6500 ms pass
    Then no daemon is listening on the socket
    And the store still holds the file of "old"

  @optional-on-demand
  Scenario: A nonempty restore makes an on-demand daemon active before its grace ends
    Given checkpoint "old" of format 3 with generation 1 is planted in the store
    And an on-demand daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$old"}
    Then the call succeeds
    When 6500 ms pass
    Then the first daemon is still serving
