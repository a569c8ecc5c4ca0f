@rfc-8-events-clients @must
Feature: Events/clients
  RFC §8: restore emits ordinary created events then pane.exited per archive and
  recovery.restored; relaunch closes old streams and never reuses the old pane ID;
  per-resource grants filter what clients see.

  @rfc-5-no-partial-graph
  Scenario: Listing after restore shows all restored resources at once
    Given checkpoint "f2" of format 2 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f2"}
    Then the call succeeds
    When the owner calls "pane.list"
    Then the result "panes.2.state" is "exited"
    And the result "panes.3" is absent

  Scenario: A relaunched pane gets a fresh ID and the old one is gone
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the result "panes.0.current" is saved as $archive
    And the owner calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}
    Then the call succeeds
    When the owner calls "pane.capture" with {"pane":"$archive"}
    Then the call fails with "not_found.pane"

  Scenario: A client scoped to another session sees no restored archive
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    When the owner calls "session.create" with {"name":"other"}
    And the result "session" is saved as $other
    And the owner calls "grant.issue" with {"grants":["read@session:$other"]}
    And the result "token" is saved as $scoped
    And a client with token "$scoped" calls "pane.list"
    Then the call succeeds
    And the result "panes" is []
    When a client with token "$scoped" calls "pane.capture" with {"pane":"p0"}
    Then the call fails with a code starting "denied."

  @rfc-5-doctor-cut-rows @rfc-5-cut-rows-shown
  Scenario: Doctor reports the archive check and the cut_rows sum
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the owner calls "doctor"
    Then the call succeeds
    And the transcript contains "cut_rows"
    And the transcript contains "cleanup_unverified"

  @rfc-5-rechkpt-keeps-process-state
  Scenario: Recheckpointing an archive keeps its process state
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "checkpoint" is saved as $again
    When the daemon is killed with SIGKILL
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$again"}
    Then the call succeeds
    When the owner calls "pane.list"
    Then the result "panes.0.recovery.process_state" is "exited"
    And the result "panes.0.exit_code" is 0

  @rfc-8-event-field-types
  Scenario: Restored archives keep the existing pane field types and add a closed recovery object
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the owner calls "pane.list"
    Then the result "panes.0.pane" has JSON type "string"
    And the result "panes.0.cols" has JSON type "integer"
    And the result "panes.0.rows" has JSON type "integer"
    And the result "panes.0.state" has JSON type "string"
    And the result "panes.0.exit_code" has JSON type "integer"
    And the result "panes.0.recovery" has exactly the keys "checkpoint,cut_rows,previous_pane,process_state,text_state"
    And the result "panes.0.recovery.cut_rows" has JSON type "integer"
    And the result "panes.0.argv0" is absent

  @rfc-1-relaunch-no-old-state
  Scenario: A relaunched pane carries nothing of the archive: no text, no metadata, its own argv0
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "plain text"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    And the result "panes.0.current" is saved as $archive
    And the owner calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sleep","60"],"ack_orphans":true}
    Then the call succeeds
    And the result "pane" is saved as $fresh
    And the result "pane" is not "$archive"
    When the owner calls "pane.list"
    Then the result "panes.0.pane" is "$fresh"
    And the result "panes.0.argv0" is "sleep"
    And the result "panes.0.state" is "running"
    And the result "panes.0.recovery" is absent
    When the owner calls "pane.capture" with {"pane":"$fresh"}
    Then the call succeeds
    And the result "recovery" is absent
    And the result "history" is []
