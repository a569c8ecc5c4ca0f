@must @part-checker @sw-pin-checker-verdict
Feature: Sidecars
  The broker's durable files, the alias sidecar (placeholder → real id) and the owner
  file of a key's claim, are read strictly: closed shapes, strict JSON, a 64 KiB cap
  checked before reading, physical keys on both sides of an alias. Judged by the
  implementation's offline sidecar checker on the kit's corpus (corpus/broker/sidecar/).

  @sw-durable-formats
  Scenario Outline: A well-formed sidecar is read
    When the sidecar checker reads the corpus file "<file>"
    Then the checker accepts it

    Examples:
      | case | file |
      | alias-empty | sidecar/alias-empty/aliases.json |
      | alias-one | sidecar/alias-one/aliases.json |
      | alias-two | sidecar/alias-two/aliases.json |
      | alias-members-reversed | sidecar/alias-members-reversed/aliases.json |
      | alias-escaped-at | sidecar/alias-escaped-at/aliases.json |
      | alias-pretty | sidecar/alias-pretty/aliases.json |
      | alias-exactly-64-kib | sidecar/alias-exactly-64-kib/aliases.json |
      | owner-valid | sidecar/owner-valid/opencode@ses_Ab1.owner |
      | owner-valid-placeholder-name | sidecar/owner-valid-placeholder-name/opencode@new-6a73c0de-1234-4abc-8def-0123456789ab.owner |
      | owner-valid-uuid-name | sidecar/owner-valid-uuid-name/claude@6a73c0de-1234-4abc-8def-0123456789ab.owner |
      | owner-empty-label | sidecar/owner-empty-label/opencode@ses_Ab1.owner |
      | owner-label-128-bytes | sidecar/owner-label-128-bytes/opencode@ses_Ab1.owner |
      | owner-label-escaped-quote | sidecar/owner-label-escaped-quote/opencode@ses_Ab1.owner |
      | owner-since-equals-heartbeat | sidecar/owner-since-equals-heartbeat/opencode@ses_Ab1.owner |
      | owner-zero-times | sidecar/owner-zero-times/opencode@ses_Ab1.owner |
      | owner-members-reordered | sidecar/owner-members-reordered/opencode@ses_Ab1.owner |

  @sw-durable-formats
  Scenario Outline: A malformed sidecar is refused, naming the rule
    When the sidecar checker reads the corpus file "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | alias-bom | sidecar/alias-bom/aliases.json | conflict.sidecar_corrupt | json.bom |
      | alias-not-utf8 | sidecar/alias-not-utf8/aliases.json | conflict.sidecar_corrupt | json.utf8 |
      | alias-lone-surrogate | sidecar/alias-lone-surrogate/aliases.json | conflict.sidecar_corrupt | json.lone_surrogate |
      | alias-control-in-string | sidecar/alias-control-in-string/aliases.json | conflict.sidecar_corrupt | json.control_in_string |
      | alias-trailing-data | sidecar/alias-trailing-data/aliases.json | conflict.sidecar_corrupt | json.trailing_data |
      | alias-duplicate-version | sidecar/alias-duplicate-version/aliases.json | conflict.sidecar_corrupt | json.duplicate_key |
      | alias-duplicate-by-escape | sidecar/alias-duplicate-by-escape/aliases.json | conflict.sidecar_corrupt | json.duplicate_key |
      | alias-unsafe-integer | sidecar/alias-unsafe-integer/aliases.json | conflict.sidecar_corrupt | json.unsafe_integer |
      | alias-empty-file | sidecar/alias-empty-file/aliases.json | conflict.sidecar_corrupt | json.syntax |
      | alias-depth-33 | sidecar/alias-depth-33/aliases.json | unsupported.sidecar_size | json.depth |
      | alias-depth-32-is-schema | sidecar/alias-depth-32-is-schema/aliases.json | conflict.sidecar_corrupt | schema.unknown_field |
      | alias-over-64-kib | sidecar/alias-over-64-kib/aliases.json | unsupported.sidecar_size | file.too_large |
      | alias-array | sidecar/alias-array/aliases.json | conflict.sidecar_corrupt | schema.not_object |
      | alias-missing-version | sidecar/alias-missing-version/aliases.json | conflict.sidecar_corrupt | schema.missing_field |
      | alias-version-string | sidecar/alias-version-string/aliases.json | conflict.sidecar_corrupt | schema.type |
      | alias-version-fraction | sidecar/alias-version-fraction/aliases.json | conflict.sidecar_corrupt | schema.type |
      | alias-version-2 | sidecar/alias-version-2/aliases.json | unsupported.sidecar_version | alias.version_unsupported |
      | alias-version-0 | sidecar/alias-version-0/aliases.json | unsupported.sidecar_version | alias.version_unsupported |
      | alias-version-2-other-shape | sidecar/alias-version-2-other-shape/aliases.json | unsupported.sidecar_version | alias.version_unsupported |
      | alias-unknown-member | sidecar/alias-unknown-member/aliases.json | conflict.sidecar_corrupt | schema.unknown_field |
      | alias-missing-aliases | sidecar/alias-missing-aliases/aliases.json | conflict.sidecar_corrupt | schema.missing_field |
      | alias-aliases-array | sidecar/alias-aliases-array/aliases.json | conflict.sidecar_corrupt | schema.type |
      | alias-target-number | sidecar/alias-target-number/aliases.json | conflict.sidecar_corrupt | schema.type |
      | alias-key-not-placeholder | sidecar/alias-key-not-placeholder/aliases.json | conflict.sidecar_corrupt | alias.placeholder_syntax |
      | alias-key-colon-form | sidecar/alias-key-colon-form/aliases.json | conflict.sidecar_corrupt | alias.placeholder_syntax |
      | alias-key-traversal | sidecar/alias-key-traversal/aliases.json | conflict.sidecar_corrupt | alias.placeholder_syntax |
      | alias-target-placeholder | sidecar/alias-target-placeholder/aliases.json | conflict.sidecar_corrupt | alias.target_syntax |
      | alias-target-slash | sidecar/alias-target-slash/aliases.json | conflict.sidecar_corrupt | alias.target_syntax |
      | alias-target-colon-form | sidecar/alias-target-colon-form/aliases.json | conflict.sidecar_corrupt | alias.target_syntax |
      | alias-engine-mismatch | sidecar/alias-engine-mismatch/aliases.json | conflict.sidecar_corrupt | alias.engine_mismatch |
      | alias-target-duplicate | sidecar/alias-target-duplicate/aliases.json | conflict.sidecar_corrupt | alias.target_duplicate |
      | owner-label-129-bytes | sidecar/owner-label-129-bytes/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.label_syntax |
      | owner-label-bell | sidecar/owner-label-bell/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.label_syntax |
      | owner-label-del | sidecar/owner-label-del/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.label_syntax |
      | owner-label-c1 | sidecar/owner-label-c1/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.label_syntax |
      | owner-fp-uppercase | sidecar/owner-fp-uppercase/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.fp_syntax |
      | owner-fp-31 | sidecar/owner-fp-31/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.fp_syntax |
      | owner-tab-17 | sidecar/owner-tab-17/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.tab_syntax |
      | owner-tab-non-hex | sidecar/owner-tab-non-hex/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.tab_syntax |
      | owner-since-negative | sidecar/owner-since-negative/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.time_range |
      | owner-since-fraction | sidecar/owner-since-fraction/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.time_range |
      | owner-heartbeat-exponent | sidecar/owner-heartbeat-exponent/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.time_range |
      | owner-heartbeat-before-since | sidecar/owner-heartbeat-before-since/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | owner.heartbeat_before_since |
      | owner-since-string | sidecar/owner-since-string/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | schema.type |
      | owner-fp-number | sidecar/owner-fp-number/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | schema.type |
      | owner-label-null | sidecar/owner-label-null/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | schema.type |
      | owner-missing-heartbeat | sidecar/owner-missing-heartbeat/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | schema.missing_field |
      | owner-peer-shape | sidecar/owner-peer-shape/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | schema.unknown_field |
      | owner-array | sidecar/owner-array/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | schema.not_object |
      | owner-duplicate-fp | sidecar/owner-duplicate-fp/opencode@ses_Ab1.owner | conflict.sidecar_corrupt | json.duplicate_key |
      | owner-name-colon | sidecar/owner-name-colon/opencode:ses_Ab1.owner | invalid_params.file | sidecar.kind_unknown |
      | owner-name-bad-id | sidecar/owner-name-bad-id/opencode@ses_.owner | invalid_params.file | sidecar.kind_unknown |
      | not-a-sidecar | sidecar/not-a-sidecar/notes.json | invalid_params.file | sidecar.kind_unknown |

  @sw-durable-formats @sw-pin-owner-shape
  Scenario: An owner file with a member beyond the kit's five is read by the owner file's shape
    When the sidecar checker reads the corpus file "sidecar/owner-valid/opencode@ses_Ab1.owner" with the extra member "instance"
    Then the checker reads it by the owner file's shape
