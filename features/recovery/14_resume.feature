@rfc-8-resume @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Resume
  RFC §5: callers must rediscover restored resources; an unmapped old ID is an
  ordinary authorized not_found.pane; restored panes are exited archives.

  Scenario: An unmapped old pane ID fails normally after restore
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    When the owner calls "pane.capture" with {"pane":"p77"}
    Then the call fails with "not_found.pane"

  @rfc-5-cut-rows-shown
  Scenario: A mapped archive reads as exited through capture
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    And the result "panes.0.current" is saved as $new
    When the owner calls "pane.capture" with {"pane":"$new"}
    Then the call succeeds
    And the result "exited" is true
    And the result "recovery.previous_pane" is "p0"
    And the result "recovery.cut_rows" is 0

  # A daemon's source is read where the seed's cursors carry it, on an event
  # subscription (a verb that names it, like server.info, is another RFC's).
  Scenario: Every start has a fresh source, and restore does not change it
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner subscribes to events as "first"
    And the daemon is restarted on the same socket
    And the owner subscribes to events as "second"
    Then the result "source" is not "$first_source"
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    When the owner subscribes to events as "third"
    Then the result "source" is "$second_source"

  @rfc-5-old-cursor-snapshot
  Scenario: A new authenticated client with an old event cursor gets a source_changed snapshot
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner subscribes to events as "before"
    And the owner calls "session.create" with {"name":"early"}
    Then "before" receives a "session.created" event
    And the cursor of "before" is saved as $old
    When the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    And the result "panes.0.current" is saved as $new
    When the owner subscribes to events as "after" from the cursor $old
    Then the call succeeds
    And the result "resumed" is false
    And the result "reason" is "source_changed"
    And the result "source" is not "$before_source"
    And the result "snapshot.sessions.0.name" is "work"
    And the result "snapshot.sessions.1" is absent
    And the result "snapshot.panes.0.pane" is "$new"
    And the result "snapshot.panes.0.recovery.previous_pane" is "p0"
    When the owner calls "session.create" with {"name":"other"}
    And the result "session" is saved as $other
    And the owner calls "grant.issue" with {"grants":["read@session:$other"]}
    And the result "token" is saved as $scoped
    And a client with token "$scoped" subscribes to events as "scoped" from the cursor $old
    Then the call succeeds
    And the result "resumed" is false
    And the result "reason" is "source_changed"
    And the result "snapshot.sessions.0.session" is "$other"
    And the result "snapshot.sessions.1" is absent
    And the result "snapshot.panes" is []

  @rfc-5-old-stream-offset
  Scenario Outline: An old stream offset on a mapped pane gets resumed=false, a fresh snapshot, READY, then EXIT
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "plain text"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner subscribes to events as "old"
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$t"}
    And the result "panes.0.current" is saved as $new
    And the owner attaches to pane "$new" as "v" resuming source "$old_source" at offset <offset>
    Then the call succeeds
    And the result "pane" is "$new"
    And the result "resumed" is false
    And the result "offset" is 0
    And the stream of "v" is a snapshot, READY, then EXIT
    And the snapshot of "v" contains "PLANTED-TEXT-ROW"
    And the EXIT of "v" has exit code 0

    Examples:
      | offset   |
      | 0        |
      | 16777216 |

  @rfc-5-old-stream-offset
  Scenario: Attaching to an unmapped old pane ID with its old source fails normally
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner subscribes to events as "old"
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    When the owner attaches to pane "p77" as "gone" resuming source "$old_source" at offset 0
    Then the call fails with "not_found.pane"
    When the owner attaches to pane "p77" as "gone"
    Then the call fails with "not_found.pane"
