@rfc-8-orphans-pid-reuse @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Orphans / PID reuse
  RFC §7: a new daemon never adopts, signals or waits on an old process, and an
  unrelated process (standing in for one that reuses a former PID) stays untouched.

  @rfc-7-no-adoption @rfc-7-pid-reuse-untouched
  Scenario: Startup after a crash signals neither a surviving descendant nor an unrelated process
    Given an unrelated process is running
    And a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "trap '' HUP TERM; echo TRAPS-SET; while :; do sleep 1; done"
    And the pane has printed "TRAPS-SET"
    When the daemon is killed with SIGKILL
    And the daemon is restarted on the same socket
    And 500 ms pass
    Then the process $pid is still alive
    And the unrelated process is still alive
    When the owner calls "session.list"
    Then the result "sessions" is []

  @rfc-7-no-adoption @rfc-7-pid-reuse-untouched @rfc-1-restore-zero-processes
  Scenario: Restore after a crash signals no old or unrelated process and launches nothing
    Given an unrelated process is running
    And a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "trap '' HUP TERM; echo TRAPS-SET; while :; do sleep 1; done"
    And the pane has printed "TRAPS-SET"
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $cp
    And the daemon is killed with SIGKILL
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$cp"}
    Then the call succeeds
    And the daemon has no child processes
    And the process $pid is still alive
    And the unrelated process is still alive

  @rfc-7-pid-reuse-untouched @rfc-7-no-adoption
  Scenario: A process that reuses a crashed pane's PID is left untouched by startup and restore
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "echo STARTED; while :; do sleep 1; done"
    And the pane has printed "STARTED"
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $cp
    And the daemon is killed with SIGKILL
    And the pane's process is killed and an unrelated process takes its PID
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$cp"}
    Then the call succeeds
    And the daemon has no child processes
    When 500 ms pass
    Then the unrelated process is still alive
    And the process $unrelated_pid is still alive

  @rfc-7-no-adoption
  Scenario: A descendant that left the pane's process group survives the crash, restart and restore untouched
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "setsid sleep 300 & echo ESCAPED=$!; while :; do sleep 1; done"
    And the pane has printed a process ID after "ESCAPED=", saved as $escaped
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $cp
    And the daemon is killed with SIGKILL
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$cp"}
    Then the call succeeds
    And the daemon has no child processes
    When 500 ms pass
    Then the process $escaped is still alive

  @rfc-7-no-sandbox-claim
  Scenario: Diagnostics after a restore never assert cleanup
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the owner calls "doctor"
    Then the call succeeds
    And the transcript contains "cleanup_unverified"
    And no doctor check claims "cleanup_verified"
