@must @part-runtime
Feature: Visit-1 provenance
  A persist node's first visit may inherit an inbound `_session_id` only when exactly
  one source is stamp-eligible: its own output carries that id (and backend), never
  merely the edge's mapping. Then the session comes from that source's slot (unpack)
  or, without a slot, from HasSession on the live root, with the fingerprint from the
  slot or the source output, never the inbound one (ADR-089 "Inbound visit-1 seed",
  revisions 6–8). Driven through the implementation's drive.

  @sp-visits
  Scenario: Visit 1 fresh, visit 2 same id, no _session_id in with
    # No edge maps a _session_id: the id comes from the node's own slot.
    Given the graph:
      """
      w: pi persist
      j: claude_code fresh
      w -> j: draft = output text
      j -> w: note = output text
      """
    When node "w" runs
    Then node "w" ran fresh
    When node "j" runs
    And the pod's roots are wiped
    And node "w" runs
    Then node "w" resumed the session of its first visit at turn 2
    And the checkpoint's slot of node "w" is kept as "A"
    And nothing the implementation showed carries a session state key or blob bytes

  @sp-visits
  Scenario: Wiped dir between completed visits
    Given the graph:
      """
      w: pi persist
      j: claude_code fresh
      w -> j: draft = output text
      """
    When node "w" runs
    And node "j" runs
    And the run moves to pod "pod-2"
    And node "w" runs
    Then node "w" resumed the session of its first visit at turn 2
    When node "j" runs
    And the run moves to pod "pod-3"
    And node "w" runs
    Then node "w" resumed the session of its first visit at turn 3

  @sp-own-slot
  Scenario: Visit 2 conflicting inbound; own slot wins
    Given the graph:
      """
      w: pi persist
      x: pi fresh
      x -> w: _session_id = output _session_id, _session_fingerprint = output _session_fingerprint
      """
    When node "w" runs
    And node "x" runs
    And node "w" runs
    Then node "w" resumed the session of its first visit at turn 2
    And node "w" ran with the fingerprint "fp-w"

  @sp-stamps @sp-pin-warnings
  Scenario: Source output sess-real, edge injects literal sess-other, HasSession(sess-other)=true ⇒ fresh
    Given the graph:
      """
      src: pi fresh
      w: pi persist
      src -> w: _session_id = literal "sess-other"
      """
    And pod "pod-1" holds a pi session "sess-other"
    When node "src" runs
    And node "w" runs
    Then node "w" ran fresh
    And the last visit warned "persist.provenance_none", as the kit reads it

  @sp-stamps
  Scenario: Literal _session_id in with {} + HasSession true + source output id missing: fresh
    Given the graph:
      """
      src: pi fresh extra {"_session_id": null}
      w: pi persist
      src -> w: _session_id = literal "sess-other"
      """
    And pod "pod-1" holds a pi session "sess-other"
    When node "src" runs
    And node "w" runs
    Then node "w" ran fresh

  @sp-stamps
  Scenario Outline: The same literal from a source stamped with it <outcome> (<case>)
    Given the graph:
      """
      src: pi fresh extra <extra>
      w: pi persist
      src -> w: _session_id = literal "sess-other"
      """
    And pod "pod-1" holds a pi session "sess-other"
    When node "src" runs
    And node "w" runs
    Then <then>

    Examples:
      | case | extra | outcome | then |
      | stamped on pi | {"_session_id": "sess-other"} | resumes | node "w" resumed session "sess-other" |
      | stamped on codex | {"_session_id": "sess-other", "_backend": "codex"} | stays fresh | node "w" ran fresh |

  @sp-fingerprint
  Scenario: Source output id valid, HasSession=true, no slot, inbound fingerprint contradicts ⇒ fingerprint from source output
    Given the graph:
      """
      src: pi fresh fingerprint fp-src
      w: pi persist
      src -> w: _session_id = output _session_id, _session_fingerprint = literal "fp-lie"
      """
    When node "src" runs
    And node "w" runs
    Then node "w" resumed the session of node "src" at turn 2
    And node "w" ran with the fingerprint "fp-src"

  @sp-one-source @sp-pin-warnings
  Scenario: Inbound id matches two stamp-eligible sources: fresh
    Given the graph:
      """
      a: pi fresh extra {"_session_id": "sess-shared"}
      b: pi fresh extra {"_session_id": "sess-shared"}
      w: pi persist
      a -> w: _session_id = output _session_id
      b -> w: _session_id = output _session_id
      """
    And pod "pod-1" holds a pi session "sess-shared"
    When node "a" runs
    And node "b" runs
    And node "w" runs
    Then node "w" ran fresh
    And the last visit warned "persist.provenance_many", as the kit reads it

  @sp-source-slot
  Scenario: Inbound id, one stamp-eligible source slot, wiped dir: unpack + SessionID + slot fingerprint
    Given the graph:
      """
      s: pi persist fingerprint fp-s
      w: pi persist
      s -> w: _session_id = output _session_id, _session_fingerprint = literal "fp-lie"
      """
    When node "s" runs
    Then the checkpoint's slot of node "s" is kept as "S"
    When the run moves to pod "pod-2"
    And node "w" runs
    Then node "w" resumed the session of node "s" at turn 2
    And node "w" ran with the fingerprint "fp-s"
    And the last visit read only "S" from the store

  @sp-no-guess @sp-pin-warnings
  Scenario: Inbound id, wiped dir, no matching nodeSessions[src]: no Task.SessionID
    Given the graph:
      """
      src: pi fresh
      w: pi persist
      src -> w: _session_id = output _session_id
      """
    When node "src" runs
    And the pod's roots are wiped
    And node "w" runs
    Then node "w" ran with no session id
    And the last visit warned "persist.has_session_false", as the kit reads it

  @sp-no-guess
  Scenario: HasSession false + no slot ⇒ no SessionID even if inbound id set
    Given the graph:
      """
      src: pi fresh
      w: pi persist
      src -> w: _session_id = output _session_id
      """
    When node "src" runs
    And the run moves to pod "pod-2"
    And node "w" runs
    Then node "w" ran fresh

  @sp-slot-get-fail @sp-pin-warnings
  Scenario Outline: Completed-slot Get/unpack fail: stripped id/fingerprint, no Task.SessionID (<op>)
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    And the next <op> fails
    And node "w" runs
    Then node "w" ran with no session id
    And node "w" ran with no fingerprint
    And the last visit warned "<warning>"

    Examples:
      | op | warning |
      | store_get | persist.slot_get_failed |
      | unpack | persist.slot_unpack_failed |

  @sp-stamps
  Scenario Outline: Provenance is the edge that delivered the id, not any stamped output (<case>)
    # Node "a" served sess-other; whether its edge delivered that id decides.
    Given the graph:
      """
      a: pi fresh extra {"_session_id": "sess-other"}
      src: pi fresh
      w: pi persist
      <edge>
      src -> w: <map>
      """
    And pod "pod-1" holds a pi session "sess-other"
    When node "a" runs
    And node "src" runs
    And node "w" runs
    Then <then>

    Examples:
      | case | edge | map | then |
      | a's edge delivers it | a -> w: _session_id = output _session_id | note = output text | node "w" resumed session "sess-other" |
      | a's edge delivers another id | a -> w: _session_id = literal "sess-decoy" | _session_id = literal "sess-other" | node "w" ran fresh |
      | a's edge delivers no id | a -> w: note = output text | _session_id = literal "sess-other" | node "w" ran fresh |

  @sp-fingerprint
  Scenario Outline: HasSession path, no slot: the fingerprint is the source output's or none, never the inbound one (<case>)
    Given the graph:
      """
      src: pi fresh <stamp>
      w: pi persist
      src -> w: _session_id = output _session_id, _session_fingerprint = literal "fp-lie"
      """
    When node "src" runs
    And node "w" runs
    Then node "w" resumed the session of node "src" at turn 2
    And node "w" ran with <fingerprint>

    Examples:
      | case | stamp | fingerprint |
      | the source stamped one | fingerprint fp-src | the fingerprint "fp-src" |
      | the source stamped none | extra {"_session_fingerprint": null} | no fingerprint |

  @sp-stamps
  Scenario Outline: A visit that goes fresh carries neither the inbound id nor the inbound fingerprint (<case>)
    Given the graph:
      """
      src: pi fresh
      w: pi persist
      src -> w: _session_id = <id>, _session_fingerprint = literal "fp-lie"
      """
    And pod "pod-1" holds a pi session "sess-other"
    When node "src" runs
    And node "w" runs
    Then <then>
    And node "w" ran with <fingerprint>

    Examples:
      | case | id | then | fingerprint |
      | the source's own id | output _session_id | node "w" resumed the session of node "src" at turn 2 | the fingerprint "fp-src" |
      | a literal id | literal "sess-other" | node "w" ran fresh | no fingerprint |

  @sp-no-guess
  Scenario Outline: Only a persist node resumes another node's id (<mode>)
    Given the graph:
      """
      src: pi fresh
      w: pi <mode>
      src -> w: _session_id = output _session_id
      """
    When node "src" runs
    And node "w" runs
    Then <then>

    Examples:
      | mode | then |
      | persist | node "w" resumed the session of node "src" at turn 2 |
      | fresh | node "w" ran fresh |

  @sp-slot-get-fail @sp-pin-warnings
  Scenario Outline: Source-slot Get/unpack fail while the root still holds the session: no Task.SessionID (<op>)
    # No fall-through to HasSession: the live root holding the id proves nothing.
    Given the graph:
      """
      s: pi persist
      w: pi persist
      s -> w: _session_id = output _session_id
      """
    When node "s" runs
    Then the checkpoint's slot of node "s" is kept as "S"
    When the next <op> fails
    And node "w" runs
    Then node "w" ran with no session id
    And the last visit warned "<warning>"

    Examples:
      | op | warning |
      | store_get | persist.source_slot_get_failed |
      | unpack | persist.source_slot_unpack_failed |
