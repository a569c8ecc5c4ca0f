@must @part-checker @asr-pin-checker-verdict
Feature: Archives
  Workspace archive schema 2 is the durable boundary (ADR-0068 §5, §7): schema 1 stays
  readable without native restore semantics, a record holds exactly its three members
  and every identity in it is bounded, trimmed and control-free, and anything else
  fails closed, naming the rule and never the content. Judged by the implementation's
  offline archive checker on the kit's corpus (corpus/workspace/, verdicts from an
  independent generator).

  @asr-archive-boundary
  Scenario Outline: Archives phux writes, and the kit's valid cases, are read as valid
    When the archive checker reads the corpus archive "<file>"
    Then the checker accepts it

    Examples:
      | case | file |
      | valid-phux-schema2 | valid-phux-schema2.json |
      | valid-phux-schema2-without-records | valid-phux-schema2-without-records.json |
      | valid-compact | valid-compact.json |
      | valid-empty | valid-empty.json |
      | valid-schema-version-last | valid-schema-version-last.json |
      | valid-ratio-small | valid-ratio-small.json |
      | valid-ratio-long | valid-ratio-long.json |
      | valid-unicode-and-escapes | valid-unicode-and-escapes.json |
      | valid-id-bounds | valid-id-bounds.json |
      | valid-id-bounds-multibyte | valid-id-bounds-multibyte.json |
      | valid-id-interior-spaces | valid-id-interior-spaces.json |

    # Valid by the kit's reading of the archive's shape (panes with no member, the
    # kit's cell and argv bounds), which the ADR does not define (SHOULD).
    @should
    Examples:
      | case | file |
      | valid-minimal-members | valid-minimal-members.json |
      | valid-cells-bounds | valid-cells-bounds.json |
      | valid-argv-bounds | valid-argv-bounds.json |

  @asr-archive-additive
  Scenario: Members a reader does not know, outside the record, are read past
    When the archive checker reads the corpus archive "valid-additive-members.json"
    Then the checker accepts it

  @asr-pin-archive-depth
  Scenario: The archive's nesting depth is bounded by the profile's cap, 128 unless it says otherwise
    When the archive checker reads the corpus archive "valid-depth-128.json"
    Then the checker judges it by the profile's archive depth cap, nested 128 deep
    When the archive checker reads the corpus archive "depth-129.json"
    Then the checker judges it by the profile's archive depth cap, nested 129 deep

  @asr-schema1
  Scenario: A schema-1 archive is read
    When the archive checker reads the corpus archive "valid-schema1.json"
    Then the checker accepts it

  # The ADR gives schema 1 "no native restore semantics": a reader that reads past a
  # record in a schema-1 pane and never uses it keeps that sentence (the restore rows
  # judge the use). Refusing the archive is the kit's reading (SHOULD).
  @asr-schema1 @asr-fail-closed @should
  Scenario Outline: A schema-1 archive cannot smuggle a record
    When the archive checker reads the corpus archive "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | schema1-smuggling | schema1-smuggling.json | conflict.archive_corrupt | archive.schema1_record |
      | schema1-smuggling-invalid-record | schema1-smuggling-invalid-record.json | conflict.archive_corrupt | archive.schema1_record |

  @asr-record-closed @asr-fail-closed
  Scenario Outline: A record holds exactly plugin_id, integration_id and native_id
    When the archive checker reads the corpus archive "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | record-with-argv | record-with-argv.json | conflict.archive_corrupt | archive.shape |
      | record-with-env | record-with-env.json | conflict.archive_corrupt | archive.shape |
      | record-missing-native-id | record-missing-native-id.json | conflict.archive_corrupt | archive.shape |
      | record-native-id-number | record-native-id-number.json | conflict.archive_corrupt | archive.shape |
      | record-unknown-member-in-additive-pane | record-unknown-member-in-additive-pane.json | conflict.archive_corrupt | archive.shape |

    # A null record: the ADR names no null, and serde's Option, Go's nil pointer and
    # Python's .get() all read it as "no record", which restores nothing natively.
    # Refusing it is the kit's reading (SHOULD).
    @should
    Examples:
      | case | file | result | rule |
      | record-null | record-null.json | conflict.archive_corrupt | archive.shape |

  @asr-bounds-ids @asr-fail-closed
  Scenario Outline: Owner ids are trimmed, control-free and at most 120 bytes
    When the archive checker reads the corpus archive "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | plugin-id-121-bytes | plugin-id-121-bytes.json | conflict.archive_corrupt | archive.record |
      | plugin-id-empty | plugin-id-empty.json | conflict.archive_corrupt | archive.record |
      | plugin-id-padded | plugin-id-padded.json | conflict.archive_corrupt | archive.record |
      | plugin-id-nbsp-padded | plugin-id-nbsp-padded.json | conflict.archive_corrupt | archive.record |
      | plugin-id-tab | plugin-id-tab.json | conflict.archive_corrupt | archive.record |
      | integration-id-padded | integration-id-padded.json | conflict.archive_corrupt | archive.record |
      | integration-id-c1 | integration-id-c1.json | conflict.archive_corrupt | archive.record |
      | plugin-id-121-bytes-three-byte | plugin-id-121-bytes-three-byte.json | conflict.archive_corrupt | archive.record |
      | integration-id-em-space-end | integration-id-em-space-end.json | conflict.archive_corrupt | archive.record |

  @asr-bounds-native @asr-fail-closed
  Scenario Outline: Native ids are trimmed, control-free, not option-shaped and at most 1024 bytes
    When the archive checker reads the corpus archive "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | native-id-padded | native-id-padded.json | conflict.archive_corrupt | archive.record |
      | native-id-option-shaped | native-id-option-shaped.json | conflict.archive_corrupt | archive.record |
      | native-id-dash-x | native-id-dash-x.json | conflict.archive_corrupt | archive.record |
      | native-id-newline | native-id-newline.json | conflict.archive_corrupt | archive.record |
      | native-id-c1 | native-id-c1.json | conflict.archive_corrupt | archive.record |
      | native-id-del | native-id-del.json | conflict.archive_corrupt | archive.record |
      | native-id-1025-bytes | native-id-1025-bytes.json | conflict.archive_corrupt | archive.record |
      | native-id-empty | native-id-empty.json | conflict.archive_corrupt | archive.record |
      | native-id-1025-bytes-two-byte | native-id-1025-bytes-two-byte.json | conflict.archive_corrupt | archive.record |
      | native-id-1025-bytes-four-byte | native-id-1025-bytes-four-byte.json | conflict.archive_corrupt | archive.record |
      | native-id-ideographic-padded | native-id-ideographic-padded.json | conflict.archive_corrupt | archive.record |
      | native-id-line-separator-end | native-id-line-separator-end.json | conflict.archive_corrupt | archive.record |

  @asr-archive-boundary
  Scenario Outline: Other schema versions are refused
    When the archive checker reads the corpus archive "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | schema-0 | schema-0.json | unsupported.archive_schema | archive.schema_version |
      | schema-3 | schema-3.json | unsupported.archive_schema | archive.schema_version |
      | schema-string-2 | schema-string-2.json | unsupported.archive_schema | archive.schema_version |
      | schema-null | schema-null.json | unsupported.archive_schema | archive.schema_version |
      | schema-negative-1 | schema-negative-1.json | unsupported.archive_schema | archive.schema_version |
      | schema-missing | schema-missing.json | unsupported.archive_schema | archive.schema_version |

    # 2.0 is the number 2 to JavaScript's JSON.parse and to Python (2.0 == 2); telling
    # it from 2 is the kit's strict reading (SHOULD).
    @should
    Examples:
      | case | file | result | rule |
      | schema-fraction | schema-fraction.json | conflict.archive_corrupt | archive.json |

  @asr-archive-boundary
  Scenario Outline: Everything else fails closed, first failure first
    When the archive checker reads the corpus archive "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | duplicate-key-record | duplicate-key-record.json | conflict.archive_corrupt | archive.json |

    # The ADR defines the record and its bounds, not the rest of the archive's bytes:
    # its JSON reading, shapes, layout rules, cell and argv bounds are the kit's
    # reading of phux's serializer (SHOULD). A defect inside the record stays MUST.
    @should
    Examples:
      | case | file | result | rule |
      | not-json | not-json.json | conflict.archive_corrupt | archive.json |
      | bom | bom.json | conflict.archive_corrupt | archive.json |
      | invalid-utf8 | invalid-utf8.json | conflict.archive_corrupt | archive.json |
      | lone-surrogate | lone-surrogate.json | conflict.archive_corrupt | archive.json |
      | trailing-data | trailing-data.json | conflict.archive_corrupt | archive.json |
      | duplicate-key-top | duplicate-key-top.json | conflict.archive_corrupt | archive.json |
      | duplicate-key-by-escape | duplicate-key-by-escape.json | conflict.archive_corrupt | archive.json |
      | unsafe-integer | unsafe-integer.json | conflict.archive_corrupt | archive.json |
      | fraction-outside-ratio | fraction-outside-ratio.json | conflict.archive_corrupt | archive.json |
      | exponent-outside-ratio | exponent-outside-ratio.json | conflict.archive_corrupt | archive.json |
      | top-level-array | top-level-array.json | conflict.archive_corrupt | archive.shape |
      | unknown-top-field | unknown-top-field.json | conflict.archive_corrupt | archive.shape |
      | missing-sessions | missing-sessions.json | conflict.archive_corrupt | archive.shape |
      | missing-windows | missing-windows.json | conflict.archive_corrupt | archive.shape |
      | missing-panes | missing-panes.json | conflict.archive_corrupt | archive.shape |
      | missing-session-name | missing-session-name.json | conflict.archive_corrupt | archive.shape |
      | active-null | active-null.json | conflict.archive_corrupt | archive.shape |
      | cols-string | cols-string.json | conflict.archive_corrupt | archive.shape |
      | title-number | title-number.json | conflict.archive_corrupt | archive.shape |
      | layout-unknown-kind | layout-unknown-kind.json | conflict.archive_corrupt | archive.shape |
      | layout-pane-with-ratio | layout-pane-with-ratio.json | conflict.archive_corrupt | archive.shape |
      | layout-split-missing-right | layout-split-missing-right.json | conflict.archive_corrupt | archive.shape |
      | layout-dir-diagonal | layout-dir-diagonal.json | conflict.archive_corrupt | archive.shape |
      | ratio-0 | ratio-0.json | conflict.archive_corrupt | archive.shape |
      | ratio-1 | ratio-1.json | conflict.archive_corrupt | archive.shape |
      | ratio-string | ratio-string.json | conflict.archive_corrupt | archive.shape |
      | ratio-0.0 | ratio-0.0.json | conflict.archive_corrupt | archive.json |
      | ratio-1.0 | ratio-1.0.json | conflict.archive_corrupt | archive.json |
      | ratio-1.5 | ratio-1.5.json | conflict.archive_corrupt | archive.json |
      | ratio-negative | ratio-negative.json | conflict.archive_corrupt | archive.json |
      | ratio-exponent | ratio-exponent.json | conflict.archive_corrupt | archive.json |
      | ratio-exponent-tiny | ratio-exponent-tiny.json | conflict.archive_corrupt | archive.json |
      | ratio-rounds-to-1 | ratio-rounds-to-1.json | conflict.archive_corrupt | archive.json |
      | ratio-33-bytes | ratio-33-bytes.json | conflict.archive_corrupt | archive.json |
      | duplicate-session | duplicate-session.json | conflict.archive_corrupt | archive.duplicate_session |
      | blank-session-empty | blank-session-empty.json | conflict.archive_corrupt | archive.duplicate_session |
      | blank-session-spaces | blank-session-spaces.json | conflict.archive_corrupt | archive.duplicate_session |
      | layout-index-out-of-range | layout-index-out-of-range.json | conflict.archive_corrupt | archive.layout |
      | layout-index-twice | layout-index-twice.json | conflict.archive_corrupt | archive.layout |
      | layout-index-negative | layout-index-negative.json | conflict.archive_corrupt | archive.layout |
      | layout-misses-a-pane | layout-misses-a-pane.json | conflict.archive_corrupt | archive.layout |
      | layout-without-panes | layout-without-panes.json | conflict.archive_corrupt | archive.layout |
      | cols-65536 | cols-65536.json | conflict.archive_corrupt | archive.cells |
      | rows-negative | rows-negative.json | conflict.archive_corrupt | archive.cells |
      | command-empty | command-empty.json | conflict.archive_corrupt | archive.argv |
      | command-257 | command-257.json | conflict.archive_corrupt | archive.argv |
      | command-not-strings | command-not-strings.json | conflict.archive_corrupt | archive.shape |

    # Which of two defects is reported first is the kit's order; the ADR fixes only that the archive is refused (SHOULD).
    @should
    Examples:
      | case | file | result | rule |
      | order-shape-after-record | order-shape-after-record.json | conflict.archive_corrupt | archive.shape |
      | order-record-before-duplicate | order-record-before-duplicate.json | conflict.archive_corrupt | archive.record |
      | order-layout-before-cells | order-layout-before-cells.json | conflict.archive_corrupt | archive.layout |

  # The ADR bounds no archive: 16 MiB is the kit's cap (SHOULD).
  @asr-archive-boundary @should
  Scenario: An archive over 16 MiB is refused by its length alone
    When the archive checker reads an archive of 16777217 bytes
    Then the checker refuses it with "conflict.archive_corrupt" by rule "archive.size"
    When the archive checker reads an archive of 16777216 bytes
    Then the checker accepts it

  # The ADR does not say what a refusal may quote; naming the rule and the field, never
  # the identity, is the kit's reading (SHOULD). The refusals themselves are MUST rows
  # above (native-id-option-shaped) and in 01_records (argv, env).
  @asr-fail-closed @asr-bounds-native @should
  Scenario: A refusal names the rule and the field, never the identity
    When the archive checker reads the archive:
      """
      {"schema_version":2,"sessions":[{"name":"s","windows":[{"name":"w","panes":[{"agent_session":{"plugin_id":"p","integration_id":"i","native_id":"--CANARY-SECRET-ID"}}]}]}]}
      """
    Then the checker refuses it with "conflict.archive_corrupt" by rule "archive.record"
    And the verdict does not contain "CANARY"
