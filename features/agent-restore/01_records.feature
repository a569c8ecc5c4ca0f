@must @optional-agent-server @asr-pin-error-names
Feature: Records
  The agent-session/v1 record (ADR-0068 §1, §7) is an opaque, Terminal-scoped record
  of exactly plugin_id, integration_id and native_id. Every write path holds it to
  those rules: the spawn verbs' agent_session and meta.set alike. phux.agent/v1 is a
  separate record. Driven through the implementation's wire protocol.

  What meta.set must refuse is the size bound alone: "The complete encoded record is
  at most 4096 bytes on atomic and ordinary metadata writes" (§7). The ADR calls the
  record "opaque" (§1) and has the server validate "its 1–4096-byte envelope" (§4);
  that the server reads a meta.set record's content is the kit's reading. What the
  ADR asks of an invalid record is that it fail closed: "Save … copies valid records
  …; Invalid, padded, option-shaped, control-bearing, or oversized identities fail
  closed" (§5). So an invalid meta.set is refused, or the next save fails or
  archives nothing of it. The spawn path's field 9 is refused before the pane
  exists, as before.

  @asr-record-closed @part-server
  Scenario Outline: A record with a member beyond the three is refused on both write paths
    Given the daemon is running
    When pane.create starts a pane in a new window with the record '<record>'
    Then the call fails with "invalid_params.agent_session" by rule "record.shape"
    And the new window has no pane
    Given a pane "p" in a new window with the record of "team" "stub" "n1"
    When meta.set writes "agent-session/v1" on $p with '<record>'
    Then the write is refused with "invalid_params.agent_session" by rule "record.shape", or the next save fails closed on it

    Examples:
      | member | record |
      | argv | {"plugin_id":"team","integration_id":"stub","native_id":"n1","argv":["sh","-c","x"]} |
      | env | {"plugin_id":"team","integration_id":"stub","native_id":"n1","env":{"PATH":"/tmp"}} |

  # Two values for one owner member: a first-wins reader (the restoring client) and a
  # last-wins one (a lenient server) see different owners, so the record is invalid and
  # fails closed. The kit refuses any duplicate; one with the same value twice is not
  # judged here.
  @asr-record-closed @part-server
  Scenario: A record that is not strict JSON is refused before its shape is read
    Given the daemon is running
    When pane.create starts a pane in a new window with the record '{"plugin_id":"other","plugin_id":"team","integration_id":"stub","native_id":"n1"}'
    Then the call fails with "invalid_params.agent_session" by rule "record.json"
    And the new window has no pane

  @asr-record-scoped @part-server
  Scenario: Two panes of one integration keep their own ids
    Given the daemon is running
    And a pane "a" in a new window with the record of "team" "stub" "alpha"
    And a pane "b" in a new window with the record of "team" "stub" "beta"
    When meta.set writes "agent-session/v1" on $a with '{"plugin_id":"team","integration_id":"stub","native_id":"gamma"}'
    Then the call succeeds
    And meta.get "agent-session/v1" on $a is the record of "team" "stub" "gamma"
    And meta.get "agent-session/v1" on $b is the record of "team" "stub" "beta"

  @asr-record-separate @part-server
  Scenario: Setting agent/v1 leaves agent-session/v1 unchanged
    Given the daemon is running
    And a pane "p" in a new window with the record of "team" "stub" "n1"
    When meta.set writes "agent/v1" on $p with '{"name":"stub","kind":"agent","state":"idle","native_id":"other"}'
    Then the call succeeds
    And meta.get "agent-session/v1" on $p is the record of "team" "stub" "n1"
    When meta.set writes "agent/v1" on $p with 'not a record at all'
    Then the call succeeds
    And meta.get "agent/v1" on $p is 'not a record at all'
    And meta.get "agent-session/v1" on $p is the record of "team" "stub" "n1"

  @asr-bounds-ids @part-server
  Scenario Outline: Plugin and integration ids are trimmed, control-free and at most 120 bytes
    Given the daemon is running
    When pane.create starts a pane in a new window with a record whose <field> is <case>
    Then the call fails with "invalid_params.agent_session" by rule "<rule>"
    And the new window has no pane
    Given a pane "p" in a new window with the record of "team" "stub" "n1"
    When meta.set writes "agent-session/v1" on $p with a record whose <field> is <case>
    Then the write is refused with "invalid_params.agent_session" by rule "<rule>", or the next save fails closed on it

    Examples:
      | field | case | rule |
      | plugin_id | 121 bytes | record.owner_length |
      | plugin_id | padded | record.owner_padded |
      | plugin_id | a tab | record.owner_control |
      | integration_id | a C1 control | record.owner_control |
      | integration_id | 121 bytes | record.owner_length |

  @asr-bounds-native @part-server
  Scenario Outline: Native ids are trimmed, not option-shaped, control-free and at most 1024 bytes
    Given the daemon is running
    When pane.create starts a pane in a new window with a record whose native_id is <case>
    Then the call fails with "invalid_params.agent_session" by rule "<rule>"
    And the new window has no pane
    Given a pane "p" in a new window with the record of "team" "stub" "n1"
    When meta.set writes "agent-session/v1" on $p with a record whose native_id is <case>
    Then the write is refused with "invalid_params.agent_session" by rule "<rule>", or the next save fails closed on it

    Examples:
      | case | rule |
      | 1025 bytes | native.length |
      | option-shaped | native.option_shaped |
      | a newline | native.control |
      | padded | native.padded |

  @asr-bounds-record @part-server
  Scenario: The whole encoded record is at most 4096 bytes on both write paths
    Given the daemon is running
    When pane.create starts a pane in a new window with a record of 4097 bytes
    Then the call fails with "invalid_params.agent_session" by rule "record.size"
    And the new window has no pane
    When pane.create starts a pane in a new window with a record of 4096 bytes
    Then the call succeeds
    Given a pane "p" in a new window with the record of "team" "stub" "n1"
    When meta.set writes "agent-session/v1" on $p with a record of 4097 bytes
    Then the call fails with "invalid_params.agent_session" by rule "record.size"
    And meta.get "agent-session/v1" on $p is the record of "team" "stub" "n1"
    When meta.set writes "agent-session/v1" on $p with a record of 4096 bytes
    Then the call succeeds

  @asr-bounds-native @part-server
  Scenario Outline: A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's
    Given the daemon is running
    When pane.create starts a pane in a new window with a record whose native_id is <valid>
    Then the call succeeds
    When pane.create starts a pane in a new window with a record whose native_id is <case>
    Then the call fails with "invalid_params.agent_session" by rule "<rule>"
    And the new window has no pane
    Given a pane "p" in a new window with the record of "team" "stub" "n1"
    When meta.set writes "agent-session/v1" on $p with a record whose native_id is <valid>
    Then the call succeeds
    When meta.set writes "agent-session/v1" on $p with a record whose native_id is <case>
    Then the write is refused with "invalid_params.agent_session" by rule "<rule>", or the next save fails closed on it

    Examples:
      | valid | case | rule |
      | 1024 bytes of two-byte characters | 1025 bytes of two-byte characters | native.length |
      | 1024 bytes of three-byte characters | 1025 bytes of three-byte characters | native.length |
      | 1024 bytes of four-byte characters | 1025 bytes of four-byte characters | native.length |
      | an interior ideographic space | led by an ideographic space | native.padded |
      | an interior no-break space | ending in a no-break space | native.padded |
      | an interior line separator | ending in a line separator | native.padded |
      | an interior ideographic space | ending in an em space | native.padded |

  @asr-bounds-ids @part-server
  Scenario Outline: An owner id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's
    Given the daemon is running
    When pane.create starts a pane in a new window with a record whose <field> is <valid>
    Then the call succeeds
    When pane.create starts a pane in a new window with a record whose <field> is <case>
    Then the call fails with "invalid_params.agent_session" by rule "<rule>"
    And the new window has no pane
    Given a pane "p" in a new window with the record of "team" "stub" "n1"
    When meta.set writes "agent-session/v1" on $p with a record whose <field> is <valid>
    Then the call succeeds
    When meta.set writes "agent-session/v1" on $p with a record whose <field> is <case>
    Then the write is refused with "invalid_params.agent_session" by rule "<rule>", or the next save fails closed on it

    Examples:
      | field | valid | case | rule |
      | plugin_id | 120 bytes of two-byte characters | 121 bytes of two-byte characters | record.owner_length |
      | integration_id | 120 bytes of three-byte characters | 121 bytes of three-byte characters | record.owner_length |
      | plugin_id | an interior ideographic space | led by an ideographic space | record.owner_padded |
      | integration_id | an interior no-break space | ending in a no-break space | record.owner_padded |
