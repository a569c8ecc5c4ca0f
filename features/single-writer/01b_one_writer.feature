@must @part-broker
Feature: One writer per key
  One session key is one lock and at most one running agent: however many viewers
  open a key at once, and from however many brokers sharing the lock directory, one
  `vxstub agent` runs and no agent ever finds a second writer of its history. A
  running key is attached, never relaunched; a lock held elsewhere with no live
  socket is BUSY (close 4409) and spawns nothing. Judged live: the profile's broker
  in a sandbox, the suite's WebSocket viewer, process probes from /proc, and a
  non-blocking flock of the lock file from the suite's own process.

  Background:
    Given a broker is running

  @sw-one-writer
  Scenario: Sixteen concurrent opens of one key start one agent
    When 16 viewers open "claude:6a73c0de-1234-4abc-8def-0123456789ab" at once
    Then "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent
    And every one of the 16 viewers streams or was told to retry
    And no agent reported a second writer

  @sw-attach-live
  Scenario: A running key is attached, never relaunched
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And the suite notes the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    Then viewer B sees the agent ready
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" is served by the noted agent

  @sw-busy
  Scenario: A lock held elsewhere with no live socket is BUSY and spawns nothing
    Given the suite holds the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A is closed with code 4409
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent
    And the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is absent

  @sw-cross-instance
  Scenario: A second broker sharing the lock directory cannot launch a held key
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And a second broker shares the lock directory
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" on the second broker
    Then viewer B is closed with code 4409
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent
    And no agent reported a second writer

  @sw-busy @sw-key-injective @sw-pin-refusal-style @sw-pin-error-codes @sw-pin-close-codes
  Scenario Outline: A request the broker must refuse is refused before the upgrade: <case>
    When its valid twin "<twin_key>" with "<twin_query>" opens first
    And viewer A opens "<key>" with "<query>"
    Then viewer A is refused with HTTP <status> and "<code>"
    And the refused open started no agent

    Examples:
      | case | key | query | status | code | twin_key | twin_query |
      | unknown-engine | nosuch:6a73c0de-1234-4abc-8def-0123456789ab | new=1 | 404 | not_found.engine | claude:6a73c0de-1234-4abc-8def-0123456789ab | new=1 |
      | bare-uuid | 6a73c0de-1234-4abc-8def-0123456789ab | new=1 | 400 | invalid_params.key | claude:6a73c0de-1234-4abc-8def-0123456789ab | new=1 |
      | placeholder-not-new | opencode:new-6a73c0de-1234-4abc-8def-0123456789ab | | 400 | invalid_params.key | opencode:new-6a73c0de-1234-4abc-8def-0123456789ab | new=1 |

    # The seed does not say these are refused: "Else → full replay" for any other have, fp/tab are what a client sends; the kit refuses them (SHOULD).
    @should
    Examples:
      | case | key | query | status | code | twin_key | twin_query |
      | uppercase-uuid | claude:6A73C0DE-1234-4ABC-8DEF-0123456789AB | new=1 | 400 | invalid_params.key | claude:6a73c0de-1234-4abc-8def-0123456789ab | new=1 |
      | have-negative | claude:6a73c0de-1234-4abc-8def-0123456789ab | have=-1 | 400 | invalid_params.have | claude:6a73c0de-1234-4abc-8def-0123456789ab | have=0 |
      | have-fraction | claude:6a73c0de-1234-4abc-8def-0123456789ab | have=1.5 | 400 | invalid_params.have | claude:6a73c0de-1234-4abc-8def-0123456789ab | have=1 |
      | fp-not-hex | claude:6a73c0de-1234-4abc-8def-0123456789ab | fp=zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz&tab=1 | 400 | invalid_params.fp | claude:6a73c0de-1234-4abc-8def-0123456789ab | fp=a&tab=1 |
