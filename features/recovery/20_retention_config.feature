@rfc-8-retention-config @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Retention/config
  RFC §2: retention keeps the newest permitted generations; reload validates before
  any cleanup and leaves active policy unchanged on failure; .plain to .off deletes
  text-bearing checkpoints; config check rejects unknown enums, ranges and ages.

  Scenario Outline: config check rejects invalid recovery settings without side effects
    Given a daemon started with the default configuration
    When the owner calls "config.check" with {"text":"<zon>"}
    Then the call fails with "invalid_params.config"
    And the result field of the error "data.field" is "<field>"
    And no checkpoint or temporary file exists in the store
    And the refusal's control, the same call with {"text":"<valid>"}, succeeds

    Examples:
      | zon                                                                          | field                             | valid |
      | .{ .recovery = .{ .interval_ms = 999 } }                                     | .recovery.interval_ms             | .{ .recovery = .{ .interval_ms = 1000 } } |
      | .{ .recovery = .{ .interval_ms = 3600001 } }                                 | .recovery.interval_ms             | .{ .recovery = .{ .interval_ms = 3600000 } } |
      | .{ .recovery = .{ .max_checkpoints = 0 } }                                   | .recovery.max_checkpoints         | .{ .recovery = .{ .max_checkpoints = 1 } } |
      | .{ .recovery = .{ .max_checkpoints = 101 } }                                 | .recovery.max_checkpoints         | .{ .recovery = .{ .max_checkpoints = 100 } } |
      | .{ .recovery = .{ .max_checkpoint_bytes = 65535 } }                          | .recovery.max_checkpoint_bytes    | .{ .recovery = .{ .max_checkpoint_bytes = 65536 } } |
      | .{ .recovery = .{ .max_checkpoint_bytes = 67108865 } }                       | .recovery.max_checkpoint_bytes    | .{ .recovery = .{ .max_checkpoint_bytes = 67108864 } } |
      | .{ .recovery = .{ .max_age_seconds = 2592001 } }                             | .recovery.max_age_seconds         | .{ .recovery = .{ .max_age_seconds = 2592000 } } |
      | .{ .recovery = .{ .terminal_text = .html } }                                 | .recovery.terminal_text           | .{ .recovery = .{ .terminal_text = .plain } } |
      | .{ .recovery = .{ .text_max_rows = 100001 } }                                | .recovery.text_max_rows           | .{ .recovery = .{ .text_max_rows = 100000 } } |
      | .{ .recovery = .{ .max_age_seconds = 10, .text_max_age_seconds = 11 } }      | .recovery.text_max_age_seconds    | .{ .recovery = .{ .max_age_seconds = 10, .text_max_age_seconds = 10 } } |

  Scenario: The RFC's default recovery section is accepted by config check
    Given a daemon started with the default configuration
    When the owner calls "config.check" with {"text":".{ .recovery = .{ .enabled = false, .interval_ms = 30000, .max_checkpoints = 3, .max_checkpoint_bytes = 16777216, .max_age_seconds = 604800, .terminal_text = .off, .text_max_rows = 10000, .text_max_bytes = 1048576, .text_max_age_seconds = 86400 } }"}
    Then the call succeeds

  @rfc-2-activation-infallible
  Scenario: A failed reload leaves the active policy unchanged
    Given a daemon started with the default configuration
    And the configuration file is replaced by:
      """
      .{ .recovery = .{ .enabled = true, .interval_ms = 5 } }
      """
    When the owner calls "config.reload"
    Then the call fails with "invalid_params.config"
    When the owner calls "config.get" with {"key":"recovery.enabled"}
    Then the call succeeds
    And the result "value" is false
    Given the configuration file is replaced by:
      """
      .{ .recovery = .{ .enabled = true, .interval_ms = 5000 } }
      """
    Then the refusal's control, the same call with {}, succeeds

  @rfc-pin-reader-result-names
  Scenario: Count pruning keeps the newest permitted generations
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .max_checkpoints = 1 } }
      """
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "recovery.checkpoint"
    And the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $second
    # RFC §2 lets the daemon prune after it acknowledges a publication, but it prunes
    # before a list: the store is judged after the list, never right after the reply.
    When the owner calls "recovery.list"
    Then the result lists 1 checkpoint
    And the result lists checkpoint "$second" with status "valid"
    And the store holds exactly 1 checkpoint file

  @rfc-2-startup-text-policy @rfc-2-partial-cleanup-diagnosed
  Scenario: Startup with text off removes text-bearing checkpoints before readiness
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    And the owner has created session "work" with a pane running "printf 'START\055CANARY\n'; sleep 60"
    And 400 ms pass
    When the owner calls "recovery.checkpoint"
    And the daemon is killed with SIGKILL
    And the configuration file is replaced by:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .off } }
      """
    And the daemon is restarted on the same socket
    Then no store file contains "START-CANARY"

  @rfc-2-disable-keeps-archives @rfc-2-disable-stops-writes @rfc-pin-reader-result-names
  Scenario: Disabling by reload stops writes but keeps archives
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $kept
    And the configuration file is replaced by:
      """
      .{ .recovery = .{ .enabled = false } }
      """
    And the owner calls "config.reload"
    And the owner calls "recovery.checkpoint"
    Then the call fails with "unavailable.recovery_disabled"
    And the store holds exactly $settled_count plus 1 checkpoint file
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$kept" with status "valid"

  @rfc-pin-reader-result-names
  Scenario: Age pruning at startup removes an expired checkpoint and keeps a valid one
    Given checkpoint "old" of format 1 with generation 1 captured 700000 s ago is planted in the store
    And checkpoint "new" of format 1 with generation 2 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$new" with status "valid"
    And the store holds exactly 1 checkpoint file
    And the store still holds the file of "new"

  @rfc-pin-reader-result-names
  Scenario: The valid last generation survives a failed write under a count of one
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .max_checkpoints = 1 } }
      """
    And the fault plan "rename@*.json##2+=EIO" applies to the next start
    And the daemon is restarted on the same socket
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $kept
    And the owner calls "recovery.checkpoint"
    Then the call fails with "unavailable.recovery_io"
    And the store holds exactly 1 checkpoint file
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$kept" with status "valid"

  @rfc-2-partial-cleanup-diagnosed @rfc-pin-reader-result-names
  Scenario: A prune failure keeps the published checkpoint and is diagnosed
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .max_checkpoints = 1 } }
      """
    And the fault plan "unlink@*/c*.json=EIO" applies to the next start
    And the daemon is restarted on the same socket
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "recovery.checkpoint"
    And the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "checkpoint" is saved as $second
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$second" with status "valid"
    When the owner calls "doctor"
    Then some doctor check has status "warning" or "error"

  Scenario Outline: Forget deletes exactly the named file, valid or not, even while disabled
    Given checkpoint "keep" of format 1 with generation 1 is planted in the store
    And checkpoint "drop" of format 1 with generation 2 is planted in the store as "<defect>"
    And a daemon started with the default configuration
    When the owner calls "recovery.forget" with {"checkpoint":"$drop"}
    Then the call succeeds
    And the store holds exactly 1 checkpoint file
    And the store still holds the file of "keep"
    When the owner calls "recovery.list"
    Then the result lists 1 checkpoint

    Examples:
      | defect       |
      | intact       |

    # "Forget of a safely owned regular final file MAY delete corrupt, incompatible …
    # data without parsing its payload": forgetting them is allowed, not required.
    @should
    Examples:
      | defect       |
      | bad checksum |
      | format 4     |

  @rfc-2-plain-to-off @rfc-2-activation-infallible @rfc-2-partial-cleanup-diagnosed
  Scenario: A reload to text off whose purge fails is reported and leaves the policy unchanged
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    And the fault plan "unlink@*/c*.json=EIO" applies to the next start
    And the daemon is restarted on the same socket
    And the owner has created session "work" with a pane running "printf 'PURGE\055CANARY\n'; sleep 60"
    And the pane has printed "PURGE-CANARY"
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    When the configuration file is replaced by:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .off } }
      """
    And the owner calls "config.reload"
    Then the call fails
    When the owner calls "config.get" with {"key":"recovery.terminal_text"}
    Then the result "value" is "plain"
