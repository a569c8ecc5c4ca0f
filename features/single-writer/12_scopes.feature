@optional-scopes @part-broker
Feature: Per-session scopes
  On LAUNCH the master's argv is wrapped in `systemd-run --user --scope --collect
  --quiet --unit <name> -p K=V … --`, so each session is its own cgroup; the PTY,
  the controlling terminal and the single-writer lock pass through the wrapper's
  exec. Attaches are never scoped. Properties are strict `Key=Value` tokens (others
  are dropped, never passed as argv). The ladder fails open: a probe that fails means
  a plain spawn; a scope that fails at spawn closes the viewer 4502 (retryable). The
  suite's stand-in for systemd-run logs its arguments and execs what follows `--`.

  @sw-scopes
  Scenario: A launch runs in its own scope, holding the lock; an attach does not
    Given a broker runs launches through a working scope wrapper with properties "TasksMax=64 bad;token"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer B sees the agent ready
    Then the scope wrapper was probed before the first launch
    And the scope wrapper ran one launch
    And every launch ran as a collected user scope with "TasksMax=64" and never "bad"
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is held
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent

  @sw-scopes
  Scenario: Kill, then relaunch at once: each launch has its own unit name
    Given a broker runs launches through a working scope wrapper with properties "TasksMax=64"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" is retired
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer B sees the agent ready
    Then the scope wrapper ran two launches
    And the two launches' unit names differ

  @sw-scopes
  Scenario: A wrapper whose probe fails: a plain spawn, never a refusal
    Given a broker runs launches through a failing scope wrapper with properties "TasksMax=64"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A sees the agent ready
    And the scope wrapper was probed before the first launch
    And the scope wrapper ran no launch
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is held

  @sw-scopes
  Scenario: A scope that fails at spawn closes the viewer 4502 and frees the lock
    Given a broker runs launches through a spawn-failing scope wrapper with properties "TasksMax=64"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A is closed with code 4502
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is free
