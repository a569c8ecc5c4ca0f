@must @part-broker
Feature: Lifecycle
  A session's state in the list moves attached → detached → exited; closing the last
  viewer leaves the master and agent running; retire (the seed's "archive") stops the
  master, frees the lock and the socket, and leaves the history as the agent wrote it.

  Background:
    Given a broker is running
    And viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready

  @sw-states @sw-pin-close-codes
  Scenario: The listed state follows the viewers and the agent
    Then the session list shows "claude:6a73c0de-1234-4abc-8def-0123456789ab" as attached
    When viewer A drops
    Then the session list shows "claude:6a73c0de-1234-4abc-8def-0123456789ab" as detached
    When viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer B types "exit 0"
    And viewer B is closed as the agent exited (1000)
    Then the session list shows "claude:6a73c0de-1234-4abc-8def-0123456789ab" as exited or no longer lists it

  @sw-detach-not-kill
  Scenario: Closing the last viewer leaves the master
    When the suite notes the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer A drops
    Then "claude:6a73c0de-1234-4abc-8def-0123456789ab" is served by the noted agent
    And the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" accepts
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is held

  @sw-retire
  Scenario: Retire frees the runtime footprint and never the history
    When viewer A types "a turn to keep"
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" got the line "a turn to keep"
    And the suite keeps a copy of the history of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" is retired
    Then "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent
    And the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is absent
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is free
    And the history of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is unchanged
