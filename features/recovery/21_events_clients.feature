@rfc-8-events-clients @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
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
    Then the result's pane 2 is exited
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
    And the refusal's control, the same call by the owner, succeeds

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

  @rfc-8-restore-event-order @rfc-pin-float-event-shape
  Scenario: Restore while subscribed emits created events in numeric order, pane.exited per archive, then recovery.restored
    Given checkpoint "f2" of format 2 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner subscribes to events as "owner"
    Then the call succeeds
    And the result "resumed" is false
    And the result "reason" is absent
    And the result "snapshot.sessions" is []
    When the owner calls "recovery.restore" with {"checkpoint":"$f2"}
    Then the call succeeds
    And "owner" receives the restore's events in the RFC's order
    And the events of "owner" are, in order: session.created, window.created, pane.created, pane.created, pane.created, pane.exited, pane.exited, pane.exited, recovery.restored
    And in "owner", the pane restored from "p0" exited with code 0
    And in "owner", the pane restored from "p1" exited with no code
    And in "owner", the pane restored from "p1" was created with layer "float"
    And in "owner", the pane restored from "p2" was created with layer "float"
    And in "owner", the floats restored from "p2" then "p1" carry the restored window, a geometry and fresh z in that order

  @rfc-6-failed-restore-no-events
  Scenario: A refused second restore emits no event
    Given checkpoint "f3" of format 3 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner subscribes to events as "owner"
    And the owner calls "recovery.restore" with {"checkpoint":"$f3"}
    Then "owner" receives the restore's events in the RFC's order
    And in "owner", the pane restored from "p1" exited with code 3
    When the owner calls "recovery.restore" with {"checkpoint":"$f3"}
    Then the call fails with "conflict.not_empty"
    When the owner calls "session.create" with {"name":"marker"}
    Then the events of "owner" after its "recovery.restored" event are, in order: session.created

  @rfc-5-no-partial-graph
  Scenario: Restore snapshot race exposes all or none
    Given checkpoint "f2" of format 2 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner subscribes to events as "witness"
    And 6 owner subscriptions start while the owner restores "$f2"
    Then the call succeeds
    And "witness" receives the restore's events in the RFC's order
    And every racing snapshot shows all or none of the restored resources, consistent with the events of "witness"

  @rfc-6-relaunch-closes-streams
  Scenario: Relaunch closes the archive's stream with pane_removed; the old ID cannot be attached; the new pane's stream starts at 0
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the result "panes.0.current" is saved as $archive
    And the owner subscribes to events as "current"
    And the owner attaches to pane "$archive" as "old"
    Then the call succeeds
    And the result "offset" is 0
    And the stream of "old" is a snapshot, READY, then EXIT
    When the owner calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}
    Then the call succeeds
    And the result "pane" is saved as $fresh
    And the stream of "old" closes with reason "pane_removed"
    When the owner attaches to pane "$archive" as "again" resuming source "$current_source" at offset 0
    Then the call fails with "not_found.pane"
    When the owner attaches to pane "$archive" as "again"
    Then the call fails with "not_found.pane"
    When the owner attaches to pane "$fresh" as "fresh"
    Then the call succeeds
    And the result "pane" is "$fresh"
    And the result "pane" is not "$archive"
    And the result "resumed" is false
    And the result "offset" is 0
    And the stream of "fresh" begins with a snapshot, then READY

  @rfc-8-restored-event-read-root @rfc-pin-event-names
  Scenario: A client with read on one session sees neither another session's restored resources nor their events
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the result "panes.0.current" is saved as $archive
    And the owner calls "session.create" with {"name":"other"}
    And the result "session" is saved as $other
    And the owner calls "grant.issue" with {"grants":["read@session:$other"]}
    And the result "token" is saved as $scoped
    And a client with token "$scoped" subscribes to events as "scoped"
    Then the call succeeds
    And the result "snapshot.sessions.0.session" is "$other"
    And the result "snapshot.sessions.1" is absent
    And the result "snapshot.panes" is []
    When the owner subscribes to events as "owner"
    Then the result "snapshot.panes.0.pane" is "$archive"
    And the result "snapshot.panes.0.recovery.previous_pane" is "p0"
    When the owner calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}
    And the owner calls "window.create" with {"session":"$other","name":"marker"}
    Then the events of "owner" are, in order: principal.issued, pane.removed, pane.created, window.layout_changed, window.created
    And the events of "scoped" are, in order: window.created

  @rfc-8-restored-event-read-root
  Scenario: A client with read on one session gets no event of a restore and no recovery.restored; the owner gets them
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "session.create" with {"name":"other"}
    And the result "session" is saved as $other
    And the owner calls "grant.issue" with {"grants":["read@session:$other"]}
    And the result "token" is saved as $scoped
    And a client with token "$scoped" subscribes to events as "scoped"
    And the owner subscribes to events as "owner"
    And the owner calls "session.kill" with {"session":"$other"}
    And the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    And "owner" receives the restore's events in the RFC's order
    When the daemon is stopped with SIGTERM
    Then the event stream of "scoped" ends
    And "scoped" received no event about the restored resources and no "recovery.restored"

  @rfc-5-literal-hydration
  Scenario: Restored text that looks like an OSC stays literal text in capture and in the attach snapshot
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "plain text like an OSC"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    And the result "panes.0.current" is saved as $new
    And the owner calls "pane.capture" with {"pane":"$new"}
    Then the result "screen.0" is "]0;PWNED-TITLE;[31mLITERAL"
    When the owner attaches to pane "$new" as "v"
    Then the stream of "v" is a snapshot, READY, then EXIT
    And the snapshot of "v" contains "]0;PWNED-TITLE;[31mLITERAL"
    And the snapshot of "v" does not contain the bytes "\e]0;PWNED"

  @rfc-5-literal-hydration @rfc-6-failed-restore-no-events
  Scenario: A checkpoint whose text holds a real OSC sequence is refused, and the failed restore emits no event
    Given checkpoint "bad" of format 1 with generation 1 is planted in the store as "plain text with an OSC"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner subscribes to events as "owner"
    And the owner calls "recovery.restore" with {"checkpoint":"$bad"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner calls "session.create" with {"name":"marker"}
    Then the events of "owner" are, in order: session.created

  @rfc-8-restore-event-order
  Scenario: Restored pane IDs past p9 are announced in numeric order, not text order
    Given checkpoint "f2" of format 2 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner has used up 8 pane IDs and left the tree empty
    And the owner subscribes to events as "owner"
    And the owner calls "recovery.restore" with {"checkpoint":"$f2"}
    Then the call succeeds
    And the result "panes.2.current" is not "p2"
    And "owner" receives the restore's events in the RFC's order
