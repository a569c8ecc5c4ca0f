@must
Feature: Explicit master modes and the client's reconnect
  The master is create-only or attach-only, never "create if missing": a create-only
  master on a taken path fails loud and leaves what is there (reaping an orphan is the
  broker's, under the lock), an attach-only master with no master to reach fails loud
  and creates nothing. Run through the profile's `master_create` and `master_attach`
  commands (dtach's `-n` and `-a` are the same two modes). The seed's one literal
  MUST is the client's: a transient reconnect never sends force=1; only a take-over
  the user asked for does, once. The suite plays the terminal route, drops every
  connection of the profile's `client`, and reads each reconnect's query.

  @part-master @sw-mode-explicit
  Scenario Outline: A create-only master refuses a taken path (<what>) and leaves it as it was
    Given the profile's create-only master is accepted on a free path of its own (the refusal's control)
    And <what> is at the master path
    When the profile's create-only master runs on the master path
    Then the master fails loud
    And the master path is as it was

    Examples:
      | what |
      | a regular file |
      | a socket nobody listens on |
      | a listener of the suite |

  @part-master @sw-mode-explicit
  Scenario: A create-only master on a free path serves there
    Given nothing is at the master path
    When the profile's create-only master runs on the master path
    Then it serves on the master path

  @part-master @sw-mode-explicit
  Scenario Outline: An attach-only master with no master to reach (<what>) fails loud and creates nothing
    Given the profile's attach-only master is accepted on a free path of its own (the refusal's control)
    And <what> is at the master path
    When the profile's attach-only master runs on the master path
    Then the master fails loud
    And the master path is as it was

    Examples:
      | what |
      | nothing |
      | a socket nobody listens on |

  @part-client @sw-client-no-force
  Scenario: The client's automatic reconnects after drops never send force
    Given a terminal route of the suite's that drops every connection
    When the profile's client views "claude:6a73c0de-1234-4abc-8def-0123456789ab" through it
    Then the client's first connect does not send force
    And the client reconnects 5 times, none of them with force

  @part-client @sw-client-no-force
  Scenario: A take-over the user asked for forces once; the reconnects after it do not
    Given a terminal route of the suite's that drops every connection
    When the profile's client takes over "claude:6a73c0de-1234-4abc-8def-0123456789ab" through it
    Then the client's first connect sends force
    And the client reconnects 5 times, none of them with force
