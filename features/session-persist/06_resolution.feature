@must @part-runtime
Feature: Resolution and plumbing
  Reserved keys never leave the runtime (`_session_state_blob` is taken before both
  success-path output assignments and sanitized out of events; there is no
  `_session_state_ref` key); kimi and grok have no persist capability; a fork
  carries neither ref; persist is illegal in fan-out; no store means warn and fresh
  (ADR-089 "Reserved keys", "Resolution", "BackendSessionStore"). Driven through the
  implementation's drive.

  @sp-no-ref-outputs
  Scenario: Output maps / loop snapshots / fork outputs contain no _session_state_ref
    Given the graph:
      """
      w: claude_code persist extra {"_session_state_ref": "w/01J00000000000000000000000", "_session_state": "smuggled"}
      """
    When node "w" runs
    And the pod's roots are wiped
    And node "w" runs
    Then node "w" resumed the session of its first visit at turn 2
    When the run is forked as "r2"
    Then the fork's checkpoint has no node sessions and no pause ref
    And nothing the implementation showed carries a session state key or blob bytes

  @sp-plumbing
  Scenario: A fork of a paused run omits both refs
    Given the graph:
      """
      w: codex persist
      """
    When node "w" runs
    And node "w" runs and asks "ok?"
    And the run is forked as "r2"
    Then the fork's checkpoint has no node sessions and no pause ref

  @sp-plumbing
  Scenario: fan-out persist error
    When the graph is offered:
      """
      b: pi persist fan_out
      """
    Then the drive refuses it with "invalid_graph.fan_out_persist"

  @sp-capability @sp-pin-warnings
  Scenario Outline: <backend> persist: capability false
    Given the graph:
      """
      src: pi fresh
      k: <backend> persist
      src -> k: _session_id = output _session_id
      """
    When node "src" runs
    And node "k" runs
    Then node "k" ran with no session id
    And the last visit warned "persist.no_capability", as the kit reads it
    When node "k" runs
    Then node "k" ran with no session id
    And the checkpoint has no node sessions

    Examples:
      | backend |
      | kimi |
      | grok |

  @sp-nil @sp-pin-warnings
  Scenario: No store: warn and run fresh
    Given the graph, without a store:
      """
      w: pi persist
      """
    When node "w" runs
    Then the last visit warned "persist.no_store"
    When node "w" runs
    Then node "w" ran with no session id
    And the checkpoint has no node sessions

  @sp-dsl
  Scenario: Parse/unparse/jsonenc: fresh is the default, persist the only resuming mode
    Given the graph:
      """
      w: pi fresh
      """
    When node "w" runs
    And node "w" runs
    Then node "w" ran fresh
    And the checkpoint has no node sessions
    When the graph is offered:
      """
      w: pi resume
      """
    Then the drive refuses it with "invalid_graph.shape"
