@must @part-broker
Feature: Liveness
  A master is live when connect() to its socket succeeds, never because the file is
  there: a socket nobody listens on is an orphan, unlinked only under the key's lock
  before the launch; anything other than a socket at the path is an error and is left
  as it is. Two viewers of one key share one agent and one writer.

  Background:
    Given a broker is running

  @sw-liveness-connect @sw-reap-under-lock
  Scenario: A socket nobody listens on is an orphan: the open launches
    Given a socket nobody listens on is at the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A sees the agent ready
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent
    And the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" accepts

  @sw-reap-under-lock
  Scenario: An orphan socket is not reaped while the lock is held elsewhere
    Given a socket nobody listens on is at the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And the suite holds the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A is closed with code 4409
    And the orphan socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is still there
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent

  # The seed reaps "a socket with no live master" and its unlink_if_stale removes
  # "any orphan .sock ... a stale file from a previous generation": what else at the
  # socket path is left alone is the kit's reading, a SHOULD.
  @sw-busy @sw-not-socket @sw-pin-close-codes @should
  Scenario: A regular file at the socket path is an error and is kept
    Given a regular file is at the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A is closed as refused (4500)
    And the regular file at the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is unchanged
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent

  @sw-viewers-share
  Scenario: Two viewers share one agent and one writer
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer B sees the agent ready
    And viewer A types "seq 300"
    Then viewer A sees the output of "seq 300"
    And viewer B sees the output of "seq 300"
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent
    And no agent reported a second writer
