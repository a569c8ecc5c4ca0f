@rfc-8-forced-sigkill @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Forced SIGKILL
  RFC §3: a crash uses the last published checkpoint and can lose every change since;
  §5: running records become interrupted archives; §7: cleanup_unverified.

  @rfc-1-missing-exit-not-success @rfc-3-open-not-clean
  Scenario: The last durable generation restores and running panes become interrupted archives
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "checkpoint" is saved as $cp
    And the newest checkpoint in the store is valid with shutdown "open"
    When the owner calls "session.create" with {"name":"later"}
    And the daemon is killed with SIGKILL
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$cp"}
    Then the call succeeds
    When the owner calls "pane.list"
    Then the result's pane 0 is exited
    And the result "panes.0.recovery.process_state" is "interrupted"
    And the result "panes.0.exit_code" is absent
    And the result "panes.0.signal" is absent
    When the owner calls "session.list"
    Then the result "sessions.0.name" is "work"
    And the result "sessions.1" is absent

  @rfc-1-restore-zero-processes @rfc-7-no-sandbox-claim
  Scenario: Restore after a crash starts no process and reports cleanup unverified
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $cp
    And the daemon is killed with SIGKILL
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$cp"}
    Then the call succeeds
    And the daemon has no child processes
    When the owner calls "doctor"
    Then the transcript contains "cleanup_unverified"
