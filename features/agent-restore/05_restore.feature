@must @optional-agent-server @asr-pin-error-names
Feature: Save and restore
  Workspace save copies each pane's record from that exact pane into the archive
  (ADR-0068 §5). Restore (§6) recreates only missing sessions, re-resolves the
  archived integration against the current templates, fails before creating a
  session when that resolution fails, probes the server's reserved namespace first,
  and never runs what the archive says to run: panes without a record get the
  caller's fallback argv (the kit's reading, @optional-fallback-argv). Driven through the profile's workspace_save and
  workspace_restore commands. Every refused restore first runs its valid twin: the
  same archive with a fallback argv, before the plugin change, without the relay, or
  on a second daemon that is the current server; what the twin restores it removes.

  Background:
    Given the plugin "team" with id "team" has the integration "stub":
      """
      id = "stub"
      [launch]
      command = ["{vxstub}", "argv-dump", "{dump}", "--env", "PHUX_STUB_SESSION_ID", "--"]
      [session_identity]
      mode = "native-or-phux"
      native_env = "PHUX_STUB_SESSION_ID"
      restore = "external-cli"
      resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]
      fresh_args = ["--session-id", "${PHUX_AGENT_SESSION_ID}"]
      """
    And the daemon is running

  @asr-save-copies @part-server
  Scenario: Save copies each pane's record into that pane's agent_session
    Given a pane "a" in a new window with the record of "team" "stub" "alpha"
    And a pane "b" in a new window with the record of "team" "stub" "beta"
    And a pane "c" in a new window without a record
    When the workspace is saved to "ws.json"
    Then the save succeeds
    And the archive "ws.json" has schema_version 2
    And the archive "ws.json" holds exactly the records of "team" "stub" "alpha" and "team" "stub" "beta"
    And the archive "ws.json" has 3 panes

  @asr-save-stable @part-server
  Scenario: A pane killed while save reads the records is archived with its record or not at all
    Given a pane "a" in a new window with the record of "team" "stub" "alpha"
    And a pane "b" in a new window with the record of "team" "stub" "beta"
    And a pane "c" in a new window with the record of "team" "stub" "gamma"
    When the workspace is saved to "ws.json" under the fault plan "close@socket:*#3=delay:600" while $b is killed
    Then the save succeeds, or is refused and leaves no archive "ws.json"
    And every pane of the archive "ws.json" has a record
    And the archive "ws.json" holds the native ids "alpha" and "gamma"

  @asr-save-copies @part-server
  Scenario: Save copies each split pane's own record, and none to a split without one
    Given a pane "a" in a new window with the record of "team" "stub" "alpha"
    When the pane $a is split by cols as "b"
    And pane.split on $b starts a pane with the record of "team" "stub" "beta" as "c"
    Then the call succeeds
    When the pane $c is split by rows as "d"
    And the workspace is saved to "ws.json"
    Then the save succeeds
    And the archive "ws.json" has 4 panes
    And the archive "ws.json" holds exactly the records of "team" "stub" "alpha" and "team" "stub" "beta"

  @asr-save-stable @part-server
  Scenario: A pane replaced after its record was read is not archived, though the pane count is unchanged
    Given a pane "a" in a new window with the record of "team" "stub" "alpha"
    And a pane "b" in a new window with the record of "team" "stub" "beta"
    And a pane "c" in a new window with the record of "team" "stub" "gamma"
    And the workspace clients reach the daemon through the relay in mode "replace-after-read"
    When the workspace is saved to "ws.json"
    Then the save succeeds, or is refused and leaves no archive "ws.json"
    And the relay altered at least one record on its way
    And the archive "ws.json" has 3 panes
    And the archive "ws.json" holds exactly the records of the panes that exist now

  # The ADR keeps schema 1 readable; it does not ask a writer to emit it when no pane
  # has a record (SHOULD).
  @asr-save-copies @asr-schema1 @part-server @should
  Scenario: A save without records writes schema 1
    Given a pane "c" in a new window without a record
    When the workspace is saved to "ws.json"
    Then the save succeeds
    And the archive "ws.json" has schema_version 1

  @asr-restore-preferred @asr-seed-not-resurrect @asr-pin-restore-reply @part-server
  Scenario: A saved native session is restored from its record, as a new process
    When agent.launch starts "stub" in a new window with native id "keep-1" as "a"
    And the PID of the program of "stub" is remembered as "old"
    And the workspace is saved to "ws.json"
    And every session is killed
    And the workspace is restored from "ws.json"
    Then the restore succeeds with 1 restored, 0 skipped and 1 native
    And the program of "stub" got the arguments '["--resume","keep-1"]' after its command
    And the program of "stub" runs with a PID other than $old

  @asr-restore-layout @asr-pin-restore-reply @part-server
  Scenario: Restore rebuilds each window's split tree, for the native pane and fallback panes alike
    When agent.launch starts "stub" in a new window with native id "tree-1" as "a"
    And the pane $a is split by cols at ratio 3000 before as "b"
    And the pane $b is split by rows at ratio 7000 as "c"
    And the pane $a is split by rows as "d"
    And the pane $d is split by cols at ratio 6000 before as "e"
    Given a pane "f" in a new window without a record
    When the pane $f is split by rows at ratio 2500 as "g"
    And the pane $g is split by cols as "h"
    And the layout of every session is remembered as "saved"
    And the workspace is saved to "ws.json"
    And every session is killed
    And the workspace is restored from "ws.json"
    Then the restore succeeds with 2 restored, 0 skipped and 1 native
    And the layout of every session is the one remembered as "saved"

  @asr-restore-current @asr-pin-restore-reply @part-server
  Scenario: Restore uses the current template, not the one of the save
    When agent.launch starts "stub" in a new window with native id "keep-2" as "a"
    And the workspace is saved to "ws.json"
    And every session is killed
    Given the plugin "team" with id "team" has the integration "stub":
      """
      id = "stub"
      [launch]
      command = ["{vxstub}", "argv-dump", "{dump}", "--env", "PHUX_STUB_SESSION_ID", "--", "wrapper-v2"]
      [session_identity]
      mode = "native-or-phux"
      native_env = "PHUX_STUB_SESSION_ID"
      restore = "external-cli"
      resume_args = ["--continue", "${PHUX_AGENT_SESSION_ID}", "--v2"]
      """
    When the workspace is restored from "ws.json"
    Then the restore succeeds with 1 restored, 0 skipped and 1 native
    And the program of "stub" got the arguments '["wrapper-v2","--continue","keep-2","--v2"]' after its command
    And the program of "stub" has PHUX_STUB_SESSION_ID set to "keep-2"

  @asr-restore-current @asr-pin-restore-reply @part-server
  Scenario: A restored native pane runs in the working directory its current template names
    Given the plugin "team" with id "team" has the integration "rooted":
      """
      id = "rooted"
      [launch]
      command = ["{vxstub}", "argv-dump", "{dump}", "--env", "PHUX_ROOTED_SESSION_ID", "--"]
      working_directory = "plugin-root"
      [session_identity]
      mode = "native-or-phux"
      native_env = "PHUX_ROOTED_SESSION_ID"
      restore = "external-cli"
      resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]
      """
    When agent.launch starts "rooted" in a new window with native id "root-1" as "a"
    Then the program of "rooted" runs in the directory of the plugin "team"
    When the workspace is saved to "ws.json"
    And every session is killed
    And the workspace is restored from "ws.json"
    Then the restore succeeds with 1 restored, 0 skipped and 1 native
    And the program of "rooted" got the arguments '["--resume","root-1"]' after its command
    And the program of "rooted" runs in the directory of the plugin "team"

  # "Archive data never supplies an executable path, interpreter source, or arbitrary
  # resume argv" (§7) and "Existing schema-1 archives restore with fresh-process
  # behavior": the archived command never running is a MUST for every profile. What
  # runs instead, the caller's fallback argv, is the kit's reading (the ADR names no
  # fallback argv): judged last, and only for a profile that claims the optional
  # feature fallback-argv.
  @asr-no-archive-authority @asr-schema1-fresh @asr-schema1 @asr-pin-restore-reply @part-server
  Scenario: A schema-1 archive's command never runs: its panes get the fallback argv
    Given the archive "old.json":
      """
      {"schema_version":1,"sessions":[{"name":"legacy","command":["{vxstub}","argv-dump","{dir}/archived.dump.json"],"windows":[{"name":"w","panes":[{"command":["{vxstub}","argv-dump","{dir}/archived.dump.json"],"cwd":"/"}]}]}]}
      """
    When the workspace is restored from "old.json"
    Then the restore succeeds with 1 restored, 0 skipped and 0 native
    And no program wrote the dump "archived"
    And where the profile claims fallback-argv, the program of "fallback" got the arguments '[]' after its command

  # "Schema 1 remains readable and has no native restore semantics": whether a reader
  # refuses such an archive or reads past its record (SHOULD, 04_archives), the record
  # never resumes anything. The twin afterwards, the same record in schema 2, shows the
  # integration does resume natively here.
  @asr-schema1 @part-server
  Scenario: A record in a schema-1 archive never resumes its native session
    Given the archive "old.json":
      """
      {"schema_version":1,"sessions":[{"name":"legacy1","windows":[{"name":"w","panes":[{"cwd":"/","agent_session":{"plugin_id":"team","integration_id":"stub","native_id":"s1-id"}}]}]}]}
      """
    When the workspace is restored from "old.json"
    Then no program wrote the dump "stub"
    Given the archive "new.json" holds the session "current" natively resumed as "team" "stub" "s1-id"
    When the workspace is restored from "new.json"
    Then the program of "stub" got the arguments '["--resume","s1-id"]' after its command

  # That a restore of panes without a record needs the caller's fallback argv, and
  # checks it before creating anything, is the kit's reading, not the ADR's (it names
  # no fallback argv): the optional feature fallback-argv.
  @asr-no-archive-authority @optional-fallback-argv @part-server
  Scenario: Panes without a record need a fallback argv, checked before anything is created
    Given the archive "old.json":
      """
      {"schema_version":1,"sessions":[{"name":"legacy","windows":[{"name":"w","panes":[{}]}]}]}
      """
    And a subscriber watches the events
    When the workspace is restored from "old.json" without a fallback argv
    Then the restore fails with "invalid_params.fallback_argv"
    And no session is named "legacy"
    And the subscriber saw no session, window or pane created before a barrier session

  @asr-skip-existing @asr-pin-restore-reply @part-server
  Scenario: An existing session name is skipped and its process is untouched
    When agent.launch starts "stub" in a new window with native id "keep-3" as "a"
    And the workspace is saved to "ws.json"
    And the PID of the program of "stub" is remembered as "old"
    And the workspace is restored from "ws.json"
    Then the restore succeeds with 0 restored, 1 skipped and 0 native
    And the program of "stub" still runs as $old
    And meta.get "agent-session/v1" on $a is the record of "team" "stub" "keep-3"

  @asr-skip-existing @asr-restore-oneshot @asr-pin-restore-reply @part-server
  Scenario: A name another client takes after restore read the sessions is skipped, and that session is left alone
    Given the archive "one.json" holds the session "native" natively resumed as "team" "stub" "id-one"
    And the workspace clients reach the daemon through the relay in mode "name-taken"
    When the workspace is restored from "one.json"
    Then the restore succeeds with 0 restored, 1 skipped and 0 native
    And the relay altered at least one record on its way
    And exactly one session is named "native", and it has no window
    And no program wrote the dump "stub"

  @asr-restore-fail-before @part-server
  Scenario Outline: A native session whose integration no longer resolves is never created, nor its program started
    When agent.launch starts "stub" in a new window with native id "keep-4" as "a"
    And the workspace is saved to "ws.json"
    And every session is killed
    And the integration "stub" of plugin "team" is <change>
    Given a subscriber watches the events
    When the workspace is restored from "ws.json"
    Then the restore fails with "<code>"
    And no session exists
    And no program wrote the dump "stub"
    And the subscriber saw no session, window or pane created before a barrier session

    Examples:
      | change | code |
      | removed | not_found.integration |
      | disabled | conflict.integration_disabled |
      | renamed | not_found.integration |
      | also declared by the plugin "rival" | conflict.integration_ambiguous |
      | also declared by the plugin "zz-rival" | conflict.integration_ambiguous |
      | now owned by the plugin id "other" | conflict.integration_owner |
      | moved to the plugin "aaa-other" | conflict.integration_owner |
      | moved to the plugin "zz-other" | conflict.integration_owner |
      | no longer restorable | unsupported.native_restore |

  # "Missing, disabled, renamed, ambiguous, ownership-changed, or no-longer-restorable
  # integrations fail before creating that session" (§6), also when the change lands
  # after restore resolved the integration. The ADR names no launch verb: the relay
  # reloads the plugins before the first request whose verb is one of the profile's
  # restore_launch_verbs (by default the kit's agent.launch), and a restore that
  # sends none of them gives this row nothing to judge (does not apply).
  @asr-restore-fail-before @part-server
  Scenario Outline: A plugin change that lands between restore's plan and its launch starts no program of any owner
    When agent.launch starts "stub" in a new window with native id "keep-5" as "a"
    And the workspace is saved to "ws.json"
    And every session is killed
    And the integration "stub" of plugin "team" changes on disk only: <change>
    Given the workspace clients reach the daemon through the relay in mode "reload-before-launch"
    And a subscriber watches the events
    When the workspace is restored from "ws.json"
    Then the relay reloaded the plugins before the restore's launch
    And the restore fails with "<code>"
    And no session exists
    And no program wrote the dump "stub"
    And the subscriber saw no pane created before a barrier session

    Examples:
      | change | code |
      | disabled | conflict.integration_disabled |
      | also declared by the plugin "zz-rival" | conflict.integration_ambiguous |
      | now owned by the plugin id "other" | conflict.integration_owner |
      | moved to the plugin "zz-other" | conflict.integration_owner |

  @asr-restore-oneshot @asr-pin-restore-reply @part-server
  Scenario: Two restores of one name race: the winner's pane has the winner's record
    Given the archive "one.json" holds the session "dup" natively resumed as "team" "stub" "id-one"
    And the archive "two.json" holds the session "dup" natively resumed as "team" "stub" "id-two"
    When the workspace is restored from "one.json" and from "two.json" at once
    Then exactly one of them restored "dup" and the other skipped it
    And the pane of "dup" has the record of the restore that won

  @asr-restore-oneshot @asr-pin-created-result @part-server
  Scenario: A creation result is read by its own connection only, and only once
    Given the clients "a" and "b" each keep a connection as the owner
    Then server.info lists the capability "session_created_result"
    When client "a" creates the session "mine" with the request token "tok-a-0123456789abcdef"
    Then client "b" reads nothing at the result of the token "tok-a-0123456789abcdef"
    And client "a" reads at the result of the token "tok-a-0123456789abcdef" the session it created, named "mine"
    And client "a" reads nothing at the result of the token "tok-a-0123456789abcdef"

  @asr-restore-oneshot @asr-pin-created-result @part-server
  Scenario: A create that loses the name leaves no result, and no client may write one
    Given the clients "a" and "b" each keep a connection as the owner
    When clients "a" and "b" create the session "dup" at once with the request tokens "tok-a-0123456789abcdef" and "tok-b-0123456789abcdef"
    Then client "$loser" reads nothing at the result of the token "$loser_token"
    And client "$loser" reads nothing at the result of the token "$winner_token"
    And client "$loser" may neither set nor delete the result of the token "$winner_token"
    And client "$winner" reads at the result of the token "$winner_token" the session it created, named "dup"

  @asr-restore-oneshot @part-server
  Scenario: A restore whose creation result does not come back stamps nothing
    Given the archive "one.json" holds the session "native" natively resumed as "team" "stub" "id-one"
    And the workspace clients reach the daemon through the relay in mode "hide-created-result"
    When the workspace is restored from "one.json"
    Then the restore fails with "unsupported.native_restore" by rule "restore.created_result"
    And the relay altered at least one record on its way
    And no pane exists

  @asr-restore-probe @optional-legacy-spawn @part-legacy
  Scenario: An older server, whose reserved namespace is writable, is refused before anything is created
    Given the daemon is restarted as an older server
    And a pane "p" in a new window without a record
    And the archive "one.json" holds the session "native" natively resumed as "team" "stub" "id-one"
    When the workspace is restored from "one.json"
    Then the restore fails with "unsupported.native_restore" by rule "restore.probe_writable"
    And no session is named "native"

  @asr-restore-probe @part-server
  Scenario: A server whose reserved namespace takes a client's write is refused before anything is created, whatever it advertises
    Given the archive "one.json" holds the session "native" natively resumed as "team" "stub" "id-one"
    And the workspace clients reach the daemon through the relay in mode "reserved-writable"
    And a subscriber watches the events
    When the workspace is restored from "one.json"
    Then the restore fails with "unsupported.native_restore" by rule "restore.probe_writable"
    And the relay altered at least one record on its way
    And no session is named "native"
    And no program wrote the dump "stub"
    And the subscriber saw no session, window or pane created before a barrier session

  @asr-restore-confirm @part-server
  Scenario: A replacement pane whose record reads back altered is removed and the restore fails
    Given the archive "one.json" holds the session "native" natively resumed as "team" "stub" "id-one"
    And the workspace clients reach the daemon through the relay in mode "readback-lies"
    When the workspace is restored from "one.json"
    Then the restore fails with "conflict.agent_session_unconfirmed"
    And the relay altered at least one record on its way
    And no pane exists
    And the program of "stub", if it started, is no longer running
    And no session is named "native"
