@must @optional-agent-server @asr-pin-error-names
Feature: Launch
  agent.launch (ADR-0068 §2–§4) resolves the one enabled owner of an integration and
  expands its current template before anything is spawned: a caller's id resumes
  exactly that id, as one argv element; without one, a UUID is minted only when the
  template declares fresh_args; otherwise the launch is plain and not restorable. The
  record is installed in the pane's own turn. The plugins' program is
  `vxstub argv-dump`, which writes the argv, the identity variable and cwd it got.
  Every refused launch or spawn first runs its valid twin (the same call without the
  defect, in a window of its own), which must be accepted; the refusal's error code
  and rule id are the kit's names (a pin).

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
    And the plugin "team" with id "team" has the integration "resumer":
      """
      id = "resumer"
      [launch]
      command = ["{vxstub}", "argv-dump", "{dump}", "--env", "PHUX_RESUMER_SESSION_ID", "--"]
      [session_identity]
      mode = "native-or-phux"
      native_env = "PHUX_RESUMER_SESSION_ID"
      restore = "external-cli"
      resume_args = ["resume", "--id", "${PHUX_AGENT_SESSION_ID}"]
      """
    And the plugin "team" with id "team" has the integration "plain":
      """
      id = "plain"
      [launch]
      command = ["{vxstub}", "argv-dump", "{dump}", "--env", "PHUX_PLAIN_SESSION_ID", "--"]
      """
    And the daemon is running

  @asr-option-shaped @part-server
  Scenario: An option-shaped identity is refused before anything is spawned
    When agent.launch starts "stub" in a new window with native id "--dangerously-bypass-approvals-and-sandbox" as "a", after its twin with native id "team-session-0"
    Then the call fails with "invalid_params.native_id" by rule "native.option_shaped"
    And the new window has no pane

  @asr-launch-supplied @part-server
  Scenario: The caller's id is the resumed id, in argv, environment and record
    When agent.launch starts "stub" in a new window with native id "team-session-42" as "a"
    Then the call succeeds
    And the launch reply says restorable true
    And the program of "stub" got the arguments '["--resume","team-session-42"]' after its command
    And the program of "stub" has PHUX_STUB_SESSION_ID set to "team-session-42"
    And meta.get "agent-session/v1" on $a is the record of "team" "stub" "team-session-42"
    And the launch reply's record is the exact text meta.get reads on $a

  @asr-launch-supplied @part-server
  Scenario: A resume-only integration resumes a supplied id
    When agent.launch starts "resumer" in a new window with native id "r-1" as "a"
    Then the call succeeds
    And the program of "resumer" got the arguments '["resume","--id","r-1"]' after its command
    And meta.get "agent-session/v1" on $a is the record of "team" "resumer" "r-1"

  @asr-expand-element @part-server
  Scenario: A hostile id arrives as one argv element, never as shell text
    When agent.launch starts "stub" in a new window with native id "team session; printf x" as "a"
    Then the call succeeds
    And the program of "stub" got the arguments '["--resume","team session; printf x"]' after its command
    And the program of "stub" has PHUX_STUB_SESSION_ID set to "team session; printf x"

  @asr-launch-mint @part-server @asr-pin-launch-client
  Scenario: Without an id, fresh_args gets a minted UUID
    When agent.launch starts "stub" in a new window as "a"
    Then the call succeeds
    And the launch reply says restorable true
    And the record of $a holds a minted UUID native id as "uuid"
    And the program of "stub" got the arguments '["--session-id","$uuid"]' after its command
    And the program of "stub" has PHUX_STUB_SESSION_ID set to "$uuid"

  @asr-launch-mint @part-server
  Scenario: Without an id and without fresh_args, nothing is minted
    When agent.launch starts "resumer" in a new window as "a"
    Then the call succeeds
    And the launch reply says restorable false
    And the program of "resumer" got the arguments '[]' after its command
    And the program of "resumer" has PHUX_RESUMER_SESSION_ID unset
    And meta.get "agent-session/v1" on $a is unset

  @asr-launch-plain @part-server
  Scenario: A provider without native identity launches plain, without a record
    When agent.launch starts "plain" in a new window as "a"
    Then the call succeeds
    And the launch reply says restorable false
    And the program of "plain" got the arguments '[]' after its command
    And meta.get "agent-session/v1" on $a is unset

  @asr-launch-plain @part-server
  Scenario: A provider without native identity cannot be given one
    When agent.launch starts "plain" in a new window with native id "n1" as "a", after its twin without an id
    Then the call fails with "unsupported.native_restore" by rule "expand.not_restorable"
    And the new window has no pane

  @asr-spawn-atomic @part-server
  Scenario: No subscriber and no racing reader sees the pane without its record
    Given a subscriber watches the events
    And a reader races pane.list and meta.get
    When agent.launch starts "stub" in a new window with native id "atomic-1" as "a"
    Then the call succeeds
    And the subscriber saw $a created, and a meta.get right after read its record
    And the racing reader saw $a, never without its record

  @asr-spawn-atomic @part-server
  Scenario: A record given to pane.split and pane.float is there from the pane's first turn
    Given a pane "p" in a new window with the record of "team" "stub" "root"
    When pane.split on $p starts a pane with the record of "team" "stub" "split-1" as "s"
    Then the call succeeds
    And meta.get "agent-session/v1" on $s is the record of "team" "stub" "split-1"
    When pane.float on $window starts a pane with the record of "team" "stub" "float-1" as "f"
    Then the call succeeds
    And meta.get "agent-session/v1" on $f is the record of "team" "stub" "float-1"
    And meta.get "agent-session/v1" on $p is the record of "team" "stub" "root"

  @asr-spawn-reap @part-server
  Scenario: A program that cannot start leaves no pane and no record
    Given the plugin "team" with id "team" has the integration "ghost":
      """
      id = "ghost"
      [launch]
      command = ["/nonexistent/vx-agent-ghost"]
      [session_identity]
      mode = "native-or-phux"
      native_env = "PHUX_GHOST_SESSION_ID"
      restore = "external-cli"
      resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]
      """
    When agent.launch starts "ghost" in a new window with native id "g-1" as "g", after its twin whose program exists
    Then the call fails with "unavailable.spawn"
    And the new window has no pane
    When pane.create starts "/nonexistent/vx-agent-ghost" in a new window with the record of "team" "ghost" "g-2"
    Then the call fails with "unavailable.spawn"
    And the new window has no pane

  @asr-readback @part-server
  Scenario: The launch client reads back the exact record before it succeeds
    When the launch client starts "stub" in a new window with native id "cli-1" as "a"
    Then the launch client succeeds
    And meta.get "agent-session/v1" on $a is the record of "team" "stub" "cli-1"
    And the program of "stub" got the arguments '["--resume","cli-1"]' after its command

  @asr-readback @asr-pin-launch-client @part-server
  Scenario: A launch client whose record reads back altered fails and gets the new pane killed
    Given the launch client reaches the daemon through the relay in mode "readback-lies"
    When the launch client starts "stub" in a new window with native id "cli-4" as "a"
    Then the launch client fails with "conflict.agent_session_unconfirmed" and exit code 5
    And the relay altered at least one record on its way
    And the new window has no pane
    And the program of "stub", if it started, is no longer running

  @asr-fallback @optional-legacy-spawn @part-legacy
  Scenario: Against an older server, which ignores the spawn field, the client sets and confirms the record
    Given the daemon is restarted as an older server
    When the launch client starts "stub" in a new window with native id "cli-2" as "a"
    Then the launch client succeeds
    And meta.get "agent-session/v1" on $a is the record of "team" "stub" "cli-2"

  @asr-fallback @optional-legacy-spawn @asr-pin-launch-client @part-legacy
  Scenario: Against an older server, a record the client cannot confirm gets the new pane killed
    Given the daemon is restarted as an older server
    And the launch client reaches the daemon through the relay in mode "drop-meta-set"
    When the launch client starts "stub" in a new window with native id "cli-3" as "a"
    Then the launch client fails with "conflict.agent_session_unconfirmed" and exit code 5
    And the relay altered at least one record on its way
    And the new window has no pane
    And the program of "stub", if it started, is no longer running

  @asr-satellite @optional-satellite @part-server
  Scenario: A spawn on a satellite refuses the local agent-session record
    Given a window on a satellite, from the profile's satellite_window
    When pane.create starts a sleeper in the satellite window with the record of "team" "stub" "sat-1"
    Then the call fails with "unsupported.native_restore"
    And the new window has no pane
    When agent.launch starts "stub" in the satellite window with native id "sat-2"
    Then the call fails with "unsupported.native_restore"
    And the new window has no pane
