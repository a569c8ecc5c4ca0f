@optional-takeover @part-broker
Feature: Take-over across broker instances
  With take-over on, brokers that share one runtime directory arbitrate one owner
  per session through a claim they all read (the reference: an owner file beside the
  socket, refreshed every second). A viewer of another instance streams read-only
  and is told who holds the session; a second tab of the owner's browser (same fp)
  is passive and never takes the claim; force=1 through any instance demotes the
  holder in place. Input gating is server-side, with the seed's frames only.

  Background:
    Given two brokers with take-over share one runtime directory
    And viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1&fp=a&tab=1&label=desk"
    And viewer A sees the agent ready

  @sw-takeover
  Scenario: A viewer of the other broker is read-only and told who holds the session
    When viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "fp=b&tab=2&label=phone" on the second broker
    Then viewer A is told it is owner
    And viewer B is told it is secondary, held by "desk"
    When viewer B types "from-other-broker"
    And viewer A types "from-holder"
    Then the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" got the line "from-holder"
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" never got the line "from-other-broker"
    And viewer B got only role, seq and id control frames

  @sw-takeover
  Scenario: A second tab of the owner's browser is passive and does not take the claim
    When viewer T opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "fp=a&tab=3&label=tablet" on the second broker
    Then viewer T is told it is secondary
    When viewer C opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "fp=c&tab=4&label=laptop" on the second broker
    Then viewer C is told it is secondary, held by "desk"
    When viewer A types "still-mine"
    Then the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" got the line "still-mine"

  @sw-takeover
  Scenario: force=1 through the other broker demotes the holder in place
    When viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "fp=b&tab=2&label=phone&force=1" on the second broker
    Then viewer B is told it is owner
    And viewer A is told it is secondary, held by "phone"
    When viewer A types "from-demoted"
    And viewer B types "from-new-owner"
    Then the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" got the line "from-new-owner"
    And the agent of "claude:6a73c0de-1234-4abc-8def-0123456789ab" never got the line "from-demoted"
