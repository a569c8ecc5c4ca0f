@must @part-broker
Feature: Reconnect continuity
  A transient drop is invisible: the viewer reconnects with the bytes it has and the
  generation it saw, gets exactly what it missed (no replay, no reset, no gap; a `seq`
  frame after it only as the profile's seq_after_delta says), and the agent is never
  relaunched. A non-delta attach replays the ring and ends with a `seq` frame
  carrying the total; with the alternate screen active it replays nothing and nudges
  the agent to redraw (SIGWINCH).

  Background:
    Given a broker is running
    And viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready

  @sw-seq
  Scenario: A non-delta attach replays the ring and ends with seq = total
    When viewer A types "seq 500"
    And viewer A sees the output of "seq 500"
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    Then viewer B gets a replay ending in a seq frame of its length
    And viewer B's replay holds the output of "seq 500"

  # Exactly the missed bytes is the seed's; a seq frame after them is the broker's
  # choice (pin seq_after_delta), and any one must carry the viewer's offset.
  @sw-never-blank @sw-delta @sw-pin-seq-after-delta
  Scenario: A viewer that dropped gets exactly what it missed, without a reset
    When viewer A types "seq 100"
    And viewer A sees the output of "seq 100"
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer A drops
    And viewer B types "seq 300"
    And viewer B sees the output of "seq 300"
    And viewer A reconnects with what it has
    Then viewer A receives exactly the output of "seq 300"
    And viewer A's seq frames after its delta are as the profile says

  @sw-never-relaunch
  Scenario: Twenty reconnects keep one agent
    When the suite notes the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And viewer A types "seq 50"
    And viewer A sees the output of "seq 50"
    And viewer A drops and reconnects with what it has 20 times
    Then "claude:6a73c0de-1234-4abc-8def-0123456789ab" is served by the noted agent
    And no agent reported a second writer

  @sw-nudge
  Scenario: With the alternate screen active a non-delta attach replays nothing and nudges
    When viewer A types "alt on"
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" got the line "alt on"
    And viewer A sees the alternate screen entered
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    Then viewer B gets no replay before its seq frame
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" logged a redraw nudge
