@must @optional-template-check @part-checker @asr-pin-checker-verdict
Feature: Templates
  An integration template owns native session policy (ADR-0068 §2, §7): the identity
  enters argv only as one standalone placeholder element, never as the program or an
  evaluator's source, and its environment name stays in PHUX_*_SESSION_ID. Judged by
  the implementation's offline template checker on the kit's corpus
  (corpus/integrations/, verdicts from an independent generator).

  @asr-templates-own-policy @asr-no-evaluator
  Scenario Outline: Templates the peer ships and the kit's valid cases are accepted
    When the template checker reads the corpus template "<file>"
    Then the checker accepts it

    Examples:
      | case | file |
      | valid-peer-claude | valid-peer-claude.toml |
      | valid-plain-executable | valid-plain-executable.toml |
      | valid-fixed-shell-script | valid-fixed-shell-script.toml |
      | valid-fixed-bin-bash-script | valid-fixed-bin-bash-script.toml |
      | valid-plugin-script-as-program | valid-plugin-script-as-program.toml |
      | valid-legacy-without-resume | valid-legacy-without-resume.toml |
      | valid-not-restorable-evaluator | valid-not-restorable-evaluator.toml |
      | valid-phux-mode | valid-phux-mode.toml |
      | valid-resume-only | valid-resume-only.toml |
      | valid-plugin-root-cwd | valid-plugin-root-cwd.toml |

    # Valid by the kit's reading of the template format, which the ADR does not define:
    # a template without [launch], keys outside [session_identity], the kit's 128-byte
    # env name and 16-argument bounds (SHOULD).
    @should
    Examples:
      | case | file |
      | valid-detect-only | valid-detect-only.toml |
      | valid-unknown-keys-outside-session | valid-unknown-keys-outside-session.toml |
      | valid-env-128-bytes | valid-env-128-bytes.toml |
      | valid-16-args | valid-16-args.toml |

  @asr-env-namespace
  Scenario Outline: Identity environment names stay in the PHUX_*_SESSION_ID namespace
    When the template checker reads the corpus template "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | env-bad-name | env-bad-name.toml | invalid_params.integration_template | template.native_env |
      | env-bash-env | env-bash-env.toml | invalid_params.integration_template | template.native_env |
      | env-phux-agent-id | env-phux-agent-id.toml | invalid_params.integration_template | template.native_env |
      | env-no-middle | env-no-middle.toml | invalid_params.integration_template | template.native_env |
      | env-padded | env-padded.toml | invalid_params.integration_template | template.native_env |
      | env-outside-namespace | env-outside-namespace.toml | invalid_params.integration_template | template.native_env |
      | env-lowercase-prefix | env-lowercase-prefix.toml | invalid_params.integration_template | template.native_env |
      | env-prefix-inside | env-prefix-inside.toml | invalid_params.integration_template | template.native_env |

    # The ADR bounds ids and records, not an environment name's length: 128 bytes is
    # the kit's (SHOULD).
    @should
    Examples:
      | case | file | result | rule |
      | env-129-bytes | env-129-bytes.toml | invalid_params.integration_template | template.native_env |

  @asr-placeholder-once
  Scenario Outline: Every vector holds the placeholder exactly once, as a whole element
    When the template checker reads the corpus template "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | placeholder-none | placeholder-none.toml | invalid_params.integration_template | template.placeholder |
      | placeholder-two | placeholder-two.toml | invalid_params.integration_template | template.placeholder |
      | placeholder-embedded | placeholder-embedded.toml | invalid_params.integration_template | template.placeholder |
      | placeholder-extra-embedded | placeholder-extra-embedded.toml | invalid_params.integration_template | template.placeholder |

  @asr-no-evaluator
  Scenario Outline: The identity is never the program, nor source for an evaluator
    When the template checker reads the corpus template "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | evaluator-sh-xc | evaluator-sh-xc.toml | invalid_params.integration_template | template.shell |
      | evaluator-bare-bash | evaluator-bare-bash.toml | invalid_params.integration_template | template.shell |
      | evaluator-shell-relative-escape | evaluator-shell-relative-escape.toml | invalid_params.integration_template | template.shell |
      | evaluator-shell-absolute-script | evaluator-shell-absolute-script.toml | invalid_params.integration_template | template.shell |
      | evaluator-env-sh-c | evaluator-env-sh-c.toml | invalid_params.integration_template | template.interpreter |
      | evaluator-node | evaluator-node.toml | invalid_params.integration_template | template.interpreter |
      | evaluator-busybox | evaluator-busybox.toml | invalid_params.integration_template | template.interpreter |
      | runner-nice | runner-nice.toml | invalid_params.integration_template | template.interpreter |
      | evaluator-python3-c | evaluator-python3-c.toml | invalid_params.integration_template | template.interpreter |
      | evaluator-python3-Sc | evaluator-python3-Sc.toml | invalid_params.integration_template | template.interpreter |

    # An interpreter given a fixed plugin-owned script: the ADR keeps "a fixed
    # plugin-owned interpreter script" valid; phux, and the kit, refuse every
    # interpreter but a shell outright. Refusing is their reading (SHOULD), accepting
    # is not a fail.
    @should
    Examples:
      | case | file | result | rule |
      | evaluator-python3 | evaluator-python3.toml | invalid_params.integration_template | template.interpreter |
      | evaluator-python3.12 | evaluator-python3.12.toml | invalid_params.integration_template | template.interpreter |

  # The ADR names native_env, resume_args and fresh_args; `mode` and `restore` are the
  # template format's own keys (phux's), which the ADR does not define (SHOULD).
  @asr-templates-own-policy @should
  Scenario Outline: The session policy is closed and coherent
    When the template checker reads the corpus template "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | session-missing-mode | session-missing-mode.toml | invalid_params.integration_template | template.session_missing |
      | mode-unknown | mode-unknown.toml | invalid_params.integration_template | template.mode |
      | restore-unknown | restore-unknown.toml | invalid_params.integration_template | template.restore |
      | resume-with-phux-mode | resume-with-phux-mode.toml | invalid_params.integration_template | template.resume_policy |
      | resume-with-phux-session-restore | resume-with-phux-session-restore.toml | invalid_params.integration_template | template.resume_policy |
      | fresh-without-resume | fresh-without-resume.toml | invalid_params.integration_template | template.fresh_without_resume |

    # The ADR does not close [session_identity]; refusing an unknown key is the kit's
    # reading (SHOULD).
    @should
    Examples:
      | case | file | result | rule |
      | session-unknown-key | session-unknown-key.toml | invalid_params.integration_template | template.session_unknown_key |

  @asr-templates-own-policy
  Scenario Outline: Malformed templates are refused, naming the rule
    When the template checker reads the corpus template "<file>"
    Then the checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | id-121-bytes | id-121-bytes.toml | invalid_params.integration_template | template.id |
      | id-control | id-control.toml | invalid_params.integration_template | template.id |
      | command-holds-placeholder | command-holds-placeholder.toml | invalid_params.integration_template | template.command_placeholder |

    # The ADR bounds ids (§7) and keeps the placeholder out of the program (§2); the
    # rest of the template's shape (TOML rules, command, executables, working
    # directory, argument counts and sizes) is the kit's reading of phux's format (SHOULD).
    # "ids are trimmed" (§7) reads as "refused unless trimmed" or "trimmed on read", as
    # phux does: refusing a padded id is a SHOULD.
    @should
    Examples:
      | case | file | result | rule |
      | id-padded | id-padded.toml | invalid_params.integration_template | template.id |
      | toml-syntax | toml-syntax.toml | invalid_params.integration_template | template.toml |
      | toml-duplicate-key | toml-duplicate-key.toml | invalid_params.integration_template | template.toml |
      | toml-duplicate-table | toml-duplicate-table.toml | invalid_params.integration_template | template.toml |
      | not-utf8 | not-utf8.toml | invalid_params.integration_template | template.toml |
      | id-missing | id-missing.toml | invalid_params.integration_template | template.id |
      | id-number | id-number.toml | invalid_params.integration_template | template.type |
      | launch-not-table | launch-not-table.toml | invalid_params.integration_template | template.type |
      | command-empty | command-empty.toml | invalid_params.integration_template | template.command |
      | command-blank-program | command-blank-program.toml | invalid_params.integration_template | template.command |
      | command-not-strings | command-not-strings.toml | invalid_params.integration_template | template.type |
      | required-executable-path | required-executable-path.toml | invalid_params.integration_template | template.required_executables |
      | required-executable-padded | required-executable-padded.toml | invalid_params.integration_template | template.required_executables |
      | working-directory-home | working-directory-home.toml | invalid_params.integration_template | template.working_directory |
      | args-empty | args-empty.toml | invalid_params.integration_template | template.args_count |
      | args-17 | args-17.toml | invalid_params.integration_template | template.args_count |
      | args-empty-element | args-empty-element.toml | invalid_params.integration_template | template.args_bytes |
      | args-4097-byte-element | args-4097-byte-element.toml | invalid_params.integration_template | template.args_bytes |

  # What a refusal may quote is not the ADR's (SHOULD); the namespace refusal itself is
  # a MUST row of the outline above.
  @asr-env-namespace @should
  Scenario: A refusal carries no content of the template
    When the template checker reads the template "canary.toml":
      """
      id = "canary"

      [launch]
      command = ["/opt/CANARY-PROGRAM/agent"]

      [session_identity]
      mode = "native-or-phux"
      restore = "external-cli"
      native_env = "CANARY-SECRET-NAME"
      resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]
      """
    Then the checker refuses it with "invalid_params.integration_template" by rule "template.native_env"
    And the verdict does not contain "CANARY"

  # The ADR bounds no template: 64 KiB is the kit's cap (SHOULD).
  @asr-templates-own-policy @should
  Scenario: A template over 64 KiB is refused by its length alone
    When the template checker reads the corpus template "valid-peer-claude.toml" padded to 65537 bytes
    Then the checker refuses it with "invalid_params.integration_template" by rule "template.size"
    When the template checker reads the corpus template "valid-peer-claude.toml" padded to 65536 bytes
    Then the checker accepts it
