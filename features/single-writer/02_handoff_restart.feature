@must @part-broker
Feature: Lock hand-off and broker restart
  After a LAUNCH the master holds the session's lock, not the broker: the broker
  going away (SIGTERM or SIGKILL) leaves master and agent running and the lock held,
  and the next broker attaches. A launch that fails before a master serves frees the
  lock at once, whether it was refused before anything was spawned (a cwd that does
  not exist) or its spawn failed (the engine's program does not exist; the profile's
  missing_program_engine names that engine). When the agent exits, its socket goes,
  the lock frees, and the next open launches again through the engine's resume
  template.

  Background:
    Given a broker is running

  @sw-handoff
  Scenario: After LAUNCH the master holds the lock, even with the broker gone
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    Then the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is held
    When the broker goes down by SIGKILL
    Then the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is held
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent

  @sw-busy @sw-launch-fail-frees @sw-pin-close-codes @sw-pin-refusal-style
  Scenario Outline: A launch that fails before the master serves frees the lock: <case>
    When viewer A opens "<key>" with "<query>"
    Then viewer A is closed as <failure> (4502)
    And the lock of "<key>" is free
    And the socket of "<key>" is absent

    Examples:
      | case | key | query | failure |
      | bad-cwd | claude:6a73c0de-1234-4abc-8def-0123456789ab | new=1&cwd=/nonexistent/vxcert | a failed launch |
      | missing-program | ghost:6a73c0de-1234-4abc-8def-0123456789ab | new=1 | a failed spawn |

  @sw-busy @sw-launch-fail-frees @sw-pin-close-codes @sw-pin-refusal-style
  Scenario: After a failed launch the next open launches
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1&cwd=/nonexistent/vxcert"
    And viewer A is closed as a failed launch (4502)
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer B sees the agent ready
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent

  @sw-restart
  Scenario Outline: The broker goes down by <how>: master and agent stay, the next broker attaches
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And the suite notes the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And the broker goes down by <how>
    And a new broker starts on the same runtime directory
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    Then viewer B sees the agent ready
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" is served by the noted agent

    Examples:
      | how |
      | SIGTERM |
      | SIGKILL |

  @sw-restart
  Scenario: The whole tree killed (a reboot's stand-in) frees the lock; the orphan socket is reaped
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And the suite notes the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And the broker goes down by a reboot
    Then the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is free
    When a new broker starts on the same runtime directory
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    Then viewer B sees the agent ready
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" is served by a new agent
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" started by resume

  @sw-agent-exit @sw-pin-close-codes
  Scenario: The agent exits: socket gone, lock free, the next open launches with resume
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And viewer A types "exit 0"
    Then viewer A is closed as the agent exited (1000)
    And the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is absent
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is free
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent
    When viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    Then viewer B sees the agent ready
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" started by resume
