@must @part-checker @sw-pin-checker-verdict
Feature: Identity and lock
  One session id is one key, and one key is one physical name: the lock file, the
  master's socket, the ring and the metadata all derive from it, never from a label,
  and two keys never share a lock (agent-sessions "the rock-solid contract"). Judged by
  the implementation's offline key checker on the kit's corpus (corpus/broker/keys/,
  verdicts from an independent generator).

  @sw-key-identity @sw-pin-physical-key
  Scenario Outline: A valid key names one physical key
    When the key checker reads the corpus key "<file>" for <session> session
    Then the checker accepts it as the physical key "<physical>"

    Examples:
      | case | file | session | physical |
      | claude-uuid | claude-uuid.key | an existing | claude@6a73c0de-1234-4abc-8def-0123456789ab |
      | gemini-uuid | gemini-uuid.key | an existing | gemini@0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3 |
      | opencode-ses | opencode-ses.key | an existing | opencode@ses_Ab1 |
      | opencode-ses-64 | opencode-ses-64.key | an existing | opencode@ses_Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9Z9 |
      | opencode-placeholder-new | opencode-placeholder-new.key | a new | opencode@new-6a73c0de-1234-4abc-8def-0123456789ab |
      | opencode-ses-with-new | opencode-ses-with-new.key | a new | opencode@ses_Ab1 |

  @sw-key-injective
  Scenario Outline: A key that could alias another session, or leave the lock directory, is refused
    When the key checker reads the corpus key "<file>" for <session> session
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | session | result | rule |
      | opencode-placeholder-not-new | opencode-placeholder-not-new.key | an existing | invalid_params.key | key.placeholder_not_new |
      | claude-placeholder-pinned | claude-placeholder-pinned.key | a new | invalid_params.key | key.placeholder_pinned |
      | claude-placeholder-pinned-not-new | claude-placeholder-pinned-not-new.key | an existing | invalid_params.key | key.placeholder_pinned |
      | no-separator | no-separator.key | an existing | invalid_params.key | key.no_separator |
      | empty | empty.key | an existing | invalid_params.key | key.no_separator |
      | engine-unknown | engine-unknown.key | an existing | not_found.engine | key.engine_unknown |
      | peer-collision-a_b-c | peer-collision-a_b-c.key | an existing | not_found.engine | key.engine_unknown |
      | peer-collision-a-b_c | peer-collision-a-b_c.key | an existing | not_found.engine | key.engine_unknown |
      | traversal | traversal.key | an existing | invalid_params.key | key.id_syntax |
      | dotdot | dotdot.key | an existing | invalid_params.key | key.id_syntax |
      | ses-empty-tail | ses-empty-tail.key | an existing | invalid_params.key | key.id_syntax |
      | uuid-for-ses-engine | uuid-for-ses-engine.key | an existing | invalid_params.key | key.id_syntax |
      | ses-for-uuid-engine | ses-for-uuid-engine.key | an existing | invalid_params.key | key.id_syntax |
      | second-colon | second-colon.key | an existing | invalid_params.key | key.id_syntax |

    # The seed gives no engine or id grammar and no cap: these refusals are the kit's reading of a name that could alias another (SHOULD).
    @should
    Examples:
      | case | file | session | result | rule |
      | engine-uppercase | engine-uppercase.key | an existing | invalid_params.key | key.engine_syntax |
      | engine-empty | engine-empty.key | an existing | invalid_params.key | key.engine_syntax |
      | engine-digit-first | engine-digit-first.key | an existing | invalid_params.key | key.engine_syntax |
      | engine-dot | engine-dot.key | an existing | invalid_params.key | key.engine_syntax |
      | uuid-uppercase | uuid-uppercase.key | an existing | invalid_params.key | key.id_syntax |
      | uuid-no-dashes | uuid-no-dashes.key | an existing | invalid_params.key | key.id_syntax |
      | uuid-braced | uuid-braced.key | an existing | invalid_params.key | key.id_syntax |
      | ses-dash | ses-dash.key | an existing | invalid_params.key | key.id_syntax |
      | at-sign | at-sign.key | an existing | invalid_params.key | key.id_syntax |
      | non-ascii | non-ascii.key | an existing | invalid_params.key | key.id_syntax |
      | placeholder-uppercase | placeholder-uppercase.key | a new | invalid_params.key | key.id_syntax |
      | too-long-before-separator | too-long-before-separator.key | an existing | invalid_params.key | key.too_long |

    # The kit's 32-byte engine cap: a pin the profile's engine_max_bytes overrides.
    @sw-pin-length-caps
    Examples:
      | case | file | session | result | rule |
      | engine-33-bytes | engine-33-bytes.key | an existing | invalid_params.key | key.engine_syntax |

  @sw-key-injective @sw-pin-length-caps
  Scenario Outline: A key over the kit's length caps (96-byte key, 64-byte ses_ tail) is refused
    When the key checker reads the corpus key "<file>" for <session> session
    Then the checker refuses it as over the kit's length caps with "<result>" by rule "<rule>"

    Examples:
      | case | file | session | result | rule |
      | ses-65 | ses-65.key | an existing | invalid_params.key | key.id_syntax |
      | too-long-97 | too-long-97.key | an existing | invalid_params.key | key.too_long |

  @sw-key-injective
  Scenario: One id under two engines is two sessions, two locks
    Then the physical keys of "claude:6a73c0de-1234-4abc-8def-0123456789ab" and "gemini:6a73c0de-1234-4abc-8def-0123456789ab" differ
