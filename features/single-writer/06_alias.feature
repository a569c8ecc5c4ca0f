@must @part-broker
Feature: Aliases
  An engine that mints its own ids (pin = "none", here `opencode`) launches under a
  placeholder `new-<uuid>` (only with new=1). After its first turn exactly one new
  id in the engine's index becomes the session's real id: the viewer is told it (an
  `id` frame), the list shows one row under it, and an open by the real id attaches
  to the same agent, across a broker restart. Two new ids at once, or none, keep the
  placeholder (never a guess). The broker reads the index and never writes it; an
  open without an id always launches a new session.

  Background:
    Given a broker is running
    And viewer A opens "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And the suite notes the only "opencode" agent

  @sw-alias
  Scenario: One new id: the placeholder resolves to it everywhere
    When viewer A types "first turn"
    Then viewer A is told the real key of the minted session
    And the session list has one row for the minted session, aliased to "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab"
    When viewer B opens the minted session
    Then viewer B sees the agent ready
    And the only "opencode" agent is the noted one
    And the engine's index holds only the minted id

  @sw-list-scan
  Scenario: Retired, a reconciled session is still listed once, by its real id, from the engine's index
    When viewer A types "first turn"
    Then viewer A is told the real key of the minted session
    When the minted session is retired
    Then the session list has one row for the minted session, aliased to "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab", not alive

  @sw-alias
  Scenario: After a broker restart the real id still attaches to the same agent
    When viewer A types "first turn"
    Then viewer A is told the real key of the minted session
    When the broker goes down by SIGKILL
    And a new broker starts on the same runtime directory
    And viewer B opens the minted session
    Then viewer B sees the agent ready
    And the only "opencode" agent is the noted one
    And the session list has one row for the minted session, aliased to "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab"

  @sw-alias
  Scenario: Two new ids at once: the placeholder is kept
    When two other sessions' ids appear in the engine's index at once
    And viewer A types "first turn"
    Then viewer A is never told a real key
    And the session list has at most one row for "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab", under that key
    When viewer A types "seq 20"
    Then viewer A sees the output of "seq 20"

  @sw-alias
  Scenario: No new id: the placeholder keeps serving
    Then viewer A is never told a real key
    And the session list has at most one row for "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab", under that key
    When viewer A types "seq 20"
    Then viewer A sees the output of "seq 20"

  @sw-new-landing
  Scenario: An open without an id launches a new session, never resumes one
    When viewer A types "first turn"
    Then viewer A is told the real key of the minted session
    When viewer B opens "opencode:new-0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3" with "new=1"
    Then viewer B sees the agent ready
    And there are 2 "opencode" agents
    And the noted "opencode" agent is one of them
