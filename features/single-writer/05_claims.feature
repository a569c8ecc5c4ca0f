@must @part-broker
Feature: Claims
  Tabs claim a session by (fp, tab): the first is owner, another tab is secondary,
  the same (fp, tab) stays owner, and a claim silent for 5000 ms lets a newcomer own.
  force=1 demotes the owner in place (a role frame; it keeps streaming read-only).
  A secondary's input and resizes never reach the agent or the PTY size. A viewer
  without fp/tab is a legacy owner: no claim, no role frame, no gate.

  Background:
    Given a broker is running
    And viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1&fp=a&tab=1"
    And viewer A sees the agent ready

  @sw-roles
  Scenario: A second tab is secondary; the same (fp, tab) stays owner
    When viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "fp=b&tab=2"
    Then viewer A is told it is owner
    And viewer B is told it is secondary
    When viewer A drops and reconnects with what it has
    Then viewer A is told it is owner

  # A claim may age from the owner's last heartbeat, up to a beat before it dropped
  # (the seed sets no interval; the reference beats every second): the newcomer of the
  # secondary row comes 2 s inside the lease, one beat and a second for its connect;
  # the owner row's a second past it, so a lease kept in whole seconds is judged too.
  @sw-lease
  Scenario Outline: An owner silent for <silent> s: the newcomer is <role>
    When viewer A drops
    And <silent> seconds pass
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "fp=b&tab=2"
    Then viewer B is told it is <role>

    Examples:
      | silent | role |
      | 3 | secondary |
      | 6 | owner |

  @sw-force
  Scenario: force=1 demotes the owner in place; it keeps streaming
    When viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "fp=b&tab=2&force=1"
    Then viewer B is told it is owner
    And viewer A is told it is secondary
    When viewer B types "seq 40"
    Then viewer A sees the output of "seq 40"
    When viewer A types "from-demoted"
    And viewer B types "from-new-owner"
    Then the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" got the line "from-new-owner"
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" never got the line "from-demoted"

  @sw-gate
  Scenario: A secondary's input and resize reach neither the agent nor the PTY
    When viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "fp=b&tab=2"
    And viewer B is told it is secondary
    And viewer B resizes to 51x21
    And viewer B types "from-secondary"
    And viewer A types "from-owner"
    And viewer A resizes to 101x31
    Then the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" got the line "from-owner"
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" saw the size 101x31
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" never got the line "from-secondary"
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" never saw the size 51x21

  @sw-legacy
  Scenario: A viewer without fp/tab is a legacy owner
    When viewer L opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer L sees the agent ready
    And viewer L types "from-legacy"
    Then viewer L gets no role frame
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" got the line "from-legacy"
