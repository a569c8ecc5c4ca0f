@rfc-8-clean-restart @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Clean restart
  RFC §3: clean SIGTERM terminates and reaps supervised groups within 2000 ms, then
  writes a final checkpoint with shutdown="clean" only if cleanup succeeded. §5:
  explicit restore reproduces topology and known exits as archives, with no process.

  Scenario: Children are terminated and reaped within the foundation deadline
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "trap '' TERM HUP; echo TRAPS-SET; while :; do sleep 1; done"
    And the pane has printed "TRAPS-SET"
    When the daemon is stopped with SIGTERM
    Then the daemon exited successfully within 4600 ms
    And the process $pid is gone

  @rfc-4-clean-no-running
  Scenario: The final durable checkpoint of a clean stop is clean and holds no running pane
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "sleep 60"
    When the daemon is stopped with SIGTERM
    Then the newest checkpoint in the store is valid with shutdown "clean"
    And every store directory has mode 0700 and every store file mode 0600, owned by the daemon UID

  @rfc-1-restore-zero-processes @rfc-1-missing-exit-not-success
  Scenario: Explicit restore reproduces topology and known exit codes without processes
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "exit 3"
    And 500 ms pass
    When the daemon is restarted on the same socket
    And the owner calls "recovery.list"
    Then the newest checkpoint the result lists is valid and saved as $cp
    When the owner calls "recovery.restore" with {"checkpoint":"$cp"}
    Then the call succeeds
    And the daemon has no child processes
    When the owner calls "pane.list"
    Then the result's pane 0 is exited
    And the result "panes.0.exit_code" is 3
    And the result "panes.0.recovery.process_state" is "exited"
    When the owner calls "session.list"
    Then the result "sessions.0.name" is "work"

  @rfc-3-empty-shutdown-keeps-state
  Scenario: An untouched empty daemon's stop does not overwrite or prune the archive
    Given checkpoint "old" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the daemon is stopped with SIGTERM
    Then the store holds exactly 1 checkpoint file
    And the store still holds the file of "old"

  Scenario: A final checkpoint that cannot be published makes the clean stop an operational failure
    Given the fault plan "rename@*.json=EIO" applies to the next start
    And a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "sleep 60"
    When the daemon is stopped with SIGTERM
    Then the daemon exited with a failure status within 4600 ms
    And the process $pid is gone
    And the store holds exactly 0 checkpoint files
