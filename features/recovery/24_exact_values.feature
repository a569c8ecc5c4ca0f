@must @exact-values @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Exact values and every §6 error
  Where the RFC gives an exact value (fresh z = n+1…n+k, generation = largest valid +
  1, cut_rows, a historical process state), the value itself, not only an order or a
  range; and every error of RFC §6 produced, through the CLI with its exit code, where
  the other rows do not. Each rule is filed under the matrix row it belongs to.

  Rule: Topology

    @rfc-8-topology @rfc-8-format-2
    Scenario: Restored floats get z n+1…n+k above the daemon's z counter, in saved order
      Given checkpoint "f2" of format 2 with generation 1 is planted in the store
      And a daemon started with recovery enabled
      And the owner has created session "temp" with an empty window
      When the owner calls "pane.float" with {"window":"$window","argv":["/bin/sh","-c","sleep 60"]}
      Then the call succeeds
      And the result "z" is saved as $n
      When the owner calls "session.kill" with {"session":"$session"}
      And the owner calls "recovery.restore" with {"checkpoint":"$f2"}
      Then the call succeeds
      And the result maps pane "p1" to $high
      And the result maps pane "p2" to $low
      When the owner calls "pane.list"
      Then the result's pane "$low" has "float.z" equal to $n plus 1
      And the result's pane "$high" has "float.z" equal to $n plus 2
      When the owner calls "session.create" with {"name":"next"}
      And the result "session" is saved as $next
      And the owner calls "window.create" with {"session":"$next","name":"main"}
      And the result "window" is saved as $second
      And the owner calls "pane.float" with {"window":"$second","argv":["/bin/sh","-c","sleep 60"]}
      Then the result "z" is $n plus 3

  Rule: Retention/config

    @rfc-3-duplicate-generation @rfc-8-retention-config @rfc-pin-reader-result-names
    Scenario: Each write's generation is the largest valid retained one plus 1, across prunes
      Given checkpoint "g7" of format 1 with generation 7 is planted in the store
      And a daemon started with the configuration:
        """
        .{ .recovery = .{ .enabled = true, .max_checkpoints = 2 } }
        """
      When the owner calls "session.create" with {"name":"work"}
      And the store has settled after setup
      And the owner calls "recovery.checkpoint"
      Then the result "generation" is $settled_generation plus 1
      When the owner calls "recovery.checkpoint"
      Then the result "generation" is $settled_generation plus 2
      When the owner calls "recovery.inspect" with {"checkpoint":"$g7"}
      Then the call fails with "not_found.checkpoint"
      When the owner calls "recovery.checkpoint"
      Then the result "generation" is $settled_generation plus 3
      And the result "checkpoint" is saved as $tenth
      When the owner calls "recovery.list"
      Then the result lists 2 checkpoints
      And the result "checkpoints.0.generation" is $settled_generation plus 2
      And the result "checkpoints.1.generation" is $settled_generation plus 3
      And the result lists checkpoint "$tenth" with status "valid"

  Rule: Text / expiry

    @rfc-5-cut-rows-shown @rfc-5-doctor-cut-rows @rfc-8-text-expiry @rfc-pin-reader-result-names
    Scenario: A saved row wider than its pane is cut, counted in cut_rows and reported by doctor
      Given checkpoint "t" of format 1 with generation 1 is planted in the store with a text row wider than its pane
      And a daemon started with the configuration:
        """
        .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
        """
      When the owner calls "recovery.restore" with {"checkpoint":"$t"}
      Then the call succeeds
      And the result maps pane "p0" to $archive
      When the owner calls "pane.list"
      Then the result's pane "$archive" has "recovery.cut_rows" equal to 1
      And the result "panes.0.recovery.text_state" is "plain"
      When the owner calls "pane.capture" with {"pane":"$archive"}
      Then the result "recovery.cut_rows" is 1
      When the owner calls "doctor"
      Then some doctor check reports "cut_rows" as 1 with status "warning"

  Rule: Forced SIGKILL

    @rfc-5-rechkpt-keeps-process-state @rfc-8-forced-sigkill
    Scenario: An interrupted archive checkpointed again restores interrupted, never as a clean exit
      Given a daemon started with recovery enabled
      And the owner has created session "work" with a pane running "sleep 60"
      When the owner calls "recovery.checkpoint"
      Then the call succeeds
      And the result "checkpoint" is saved as $running
      When the daemon is killed with SIGKILL
      And the daemon is restarted on the same socket
      And the owner calls "recovery.restore" with {"checkpoint":"$running"}
      Then the call succeeds
      When the owner calls "recovery.checkpoint"
      Then the call succeeds
      And the result "checkpoint" is saved as $again
      When the daemon is killed with SIGKILL
      And the daemon is restarted on the same socket
      And the owner calls "recovery.restore" with {"checkpoint":"$again"}
      Then the call succeeds
      When the owner calls "pane.list"
      Then the result "panes.0.recovery.process_state" is "interrupted"
      And the result "panes.0.exit_code" is absent
      And the result "panes.0.signal" is absent

  Rule: Resume

    @rfc-8-resume
    Scenario: A cursor older than the replay window gets a cursor_expired snapshot, never a gap
      Given a daemon started with recovery enabled
      When the owner subscribes to events as "first"
      Then the cursor of "first" is saved as $old
      When the owner renames a session 5000 times on one connection
      And the owner subscribes to events as "late" from the cursor $old
      Then the call succeeds
      And "late" either resumed with every event after $old or was given a snapshot with reason "cursor_expired"

  Rule: Vanished executable

    @rfc-8-vanished-executable
    Scenario: Relaunch of an ordinary exited pane fails conflict.not_archive, exit 5, and starts nothing
      Given a daemon started with recovery enabled
      And the owner has created session "work" with a pane running "exit 3"
      When the pane "$pane" has exited
      And the owner calls "pane.relaunch" with {"pane":"$pane","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}
      Then the call fails with "conflict.not_archive"
      When the owner runs the CLI: pane relaunch --pane $pane --argv ["/bin/sh"] --ack-orphans=true
      Then the call fails with "conflict.not_archive"
      And the CLI exits with code 5
      And the daemon has no child processes
      When the owner calls "pane.list"
      Then the result "panes.0.pane" is "$pane"
      And the result "panes.0.exit_code" is 3

    @rfc-8-vanished-executable @rfc-6-relaunch-write-first
    Scenario Outline: Relaunch errors through the CLI exit with the RFC's codes
      Given checkpoint "f1" of format 1 with generation 1 is planted in the store
      And a daemon started with recovery enabled
      When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
      And the result "panes.0.current" is saved as $archive
      And the owner calls "grant.issue" with {"grants":[<grants>]}
      And the result "token" is saved as $scoped
      And a client with token "<token>" runs the CLI: pane relaunch --pane $archive --argv <argv> --ack-orphans=<ack>
      Then the call fails with "<code>"
      And the CLI exits with code <exit>
      And the daemon has no child processes
      When the owner calls "pane.list"
      Then the result "panes.0.pane" is "$archive"
      And the refusal's control, <control>, succeeds

      Examples:
        | grants                | token   | argv                 | ack   | code                       | exit | control |
        | "write@pane:$archive" | $scoped | ["/bin/sh"]          | true  | denied.spawn               | 4    | the same call by the owner |
        | "spawn@pane:$archive" | $scoped | ["/bin/sh"]          | true  | denied.write               | 4    | the same call by the owner |
        | "read@server:root"    | @owner  | ["/bin/sh"]          | false | invalid_params.ack_orphans | 2    | the CLI 'pane relaunch --pane $archive --argv ["/bin/sh"] --ack-orphans=true' |
        | "read@server:root"    | @owner  | ["/missing/program"] | true  | unavailable.spawn          | 6    | the CLI 'pane relaunch --pane $archive --argv ["/bin/sh"] --ack-orphans=true' |

  Rule: Grants

    @rfc-8-grants
    Scenario: A client without admin is denied the recovery verbs through the CLI, exit 4
      Given checkpoint "f1" of format 1 with generation 1 is planted in the store
      And a daemon started with recovery enabled
      When an unauthenticated client runs the CLI "recovery restore --checkpoint $f1"
      Then the call fails with "denied.admin"
      And the CLI exits with code 4
      When the owner calls "session.list"
      Then the result "sessions" is []
      And the refusal's control, the same call by the owner, succeeds

  Rule: Duplicate launch

    @rfc-8-duplicate-launch
    Scenario: Restore into a nonempty tree through the CLI fails conflict.not_empty, exit 5
      Given checkpoint "f1" of format 1 with generation 1 is planted in the store
      And a daemon started with recovery enabled
      And the owner has created session "live" with an empty window
      When the owner runs the CLI "recovery restore --checkpoint $f1"
      Then the call fails with "conflict.not_empty"
      And the CLI exits with code 5
      When the owner calls "session.list"
      Then the result "sessions.0.name" is "live"
      And the result "sessions.1" is absent

  Rule: Corrupt/partial state

    @rfc-8-corrupt-partial @rfc-4-strict-reader
    Scenario: Restore of a corrupt file through the CLI fails conflict.checkpoint_corrupt, exit 5
      Given checkpoint "bad" of format 1 with generation 1 is planted in the store as "bad checksum"
      And a daemon started with recovery enabled
      When the owner runs the CLI "recovery restore --checkpoint $bad"
      Then the call fails with "conflict.checkpoint_corrupt"
      And the CLI exits with code 5

  Rule: Version/limits

    @rfc-8-version-limits @rfc-4-bounds-first @rfc-pin-json-reading @rfc-pin-envelope-order
    Scenario: Restore of a file past the depth bound through the CLI fails unsupported.checkpoint_size, exit 10
      Given checkpoint "deep" of format 1 with generation 1 is planted in the store as "depth 33"
      And a daemon started with recovery enabled
      When the owner runs the CLI "recovery restore --checkpoint $deep"
      Then the call fails with "unsupported.checkpoint_size"
      And the CLI exits with code 10

    @rfc-8-version-limits @rfc-2-expired-unavailable
    Scenario: Restore of a future-dated file through the CLI fails conflict.checkpoint_expired, exit 5
      Given checkpoint "t" of format 1 with generation 1 captured 86400 s in the future is planted in the store
      And a daemon started with recovery enabled
      When the owner runs the CLI "recovery restore --checkpoint $t"
      Then the call fails with "conflict.checkpoint_expired"
      And the CLI exits with code 5

  Rule: Filesystem security

    @rfc-8-filesystem-security @rfc-2-reject-unsafe
    Scenario: Restore of an unsafe file through the CLI fails unavailable.recovery_io, exit 6
      Given checkpoint "f1" of format 1 with generation 1 is planted in the store
      And the store file of "f1" is chmod 0640
      And a daemon started with recovery enabled
      When the owner runs the CLI "recovery restore --checkpoint $f1"
      Then the call fails with "unavailable.recovery_io"
      And the CLI exits with code 6
      And the store file of "f1" still has mode 0640
