@rfc-8-topology @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Topology
  RFC §5: restore needs an empty tree, commits atomically, gives fresh runtime IDs from
  the current counters with an old-to-new mapping, and restarts window revisions at 1.

  @rfc-5-no-partial-graph
  Scenario: Restore maps every resource to a fresh ID and restarts revisions at 1
    Given checkpoint "f3" of format 3 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f3"}
    Then the call succeeds
    And the result "checkpoint" is "$f3"
    And the result "sessions.0.previous" is "s0"
    And the result "windows.0.previous" is "w0"
    And the result "panes.1.previous" is "p1"
    When the owner calls "session.list"
    Then the result "sessions.0.windows.0.revision" is 1
    And the result "sessions.0.windows.0.nodes.0.kind" is "split"

  Scenario: IDs consumed before the restore are not reused by it
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "session.create" with {"name":"temp"}
    And the owner calls "session.kill" with {"session":"s0"}
    And the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    And the result "sessions.0.previous" is "s0"
    And the result "sessions.0.current" is "s1"
