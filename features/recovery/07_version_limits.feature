@rfc-8-version-limits @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Version/limits
  RFC §4: format is checked first: a non-integer is corrupt, an integer other than
  1-3 is incompatible. Bounds (64 MiB or the configured size, depth 32, 100000
  resources) are checked before allocation. A future capture time makes the whole
  checkpoint unavailable (pins.md: status `future`).

  @rfc-4-strict-reader @rfc-4-bounds-first @rfc-pin-json-reading @rfc-pin-envelope-order @rfc-pin-reader-result-names
  Scenario Outline: Unknown versions and bound violations get the documented status and error
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .max_checkpoint_bytes = 65536 } }
      """
    And checkpoint "bad" of format 1 with generation 1 is planted in the store as "<defect>"
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$bad" with status "<status>"
    When the owner calls "recovery.restore" with {"checkpoint":"$bad"}
    Then the call fails with "<error>"
    When the owner calls "session.list"
    Then the result "sessions" is []

    Examples:
      | defect      | status       | error                         |
      | format 0    | incompatible | unsupported.checkpoint_format |
      | format 4    | incompatible | unsupported.checkpoint_format |
      | format -1   | incompatible | unsupported.checkpoint_format |
      | depth 33    | incompatible | unsupported.checkpoint_size   |
      | oversized   | incompatible | unsupported.checkpoint_size   |
      | 100001 sessions | incompatible | unsupported.checkpoint_size |
      | format string | corrupt    | conflict.checkpoint_corrupt   |

  @rfc-2-expired-unavailable @rfc-pin-reader-result-names
  Scenario: A future-dated checkpoint is listed future and unavailable
    Given checkpoint "t" of format 1 with generation 1 captured 86400 s in the future is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$t" with status "future"
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call fails with "conflict.checkpoint_expired"
    When the owner calls "session.list"
    Then the result "sessions" is []

  @rfc-2-expired-unavailable
  Scenario: An expired checkpoint is unavailable for restore, pruned or not
    Given checkpoint "t" of format 1 with generation 1 captured 700000 s ago is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call fails with "conflict.checkpoint_expired" or "not_found.checkpoint"
    When the owner calls "session.list"
    Then the result "sessions" is []

  @rfc-2-expired-unavailable
  Scenario: A checkpoint past a stricter configured age is unavailable
    Given checkpoint "t" of format 1 with generation 1 captured 120 s ago is planted in the store
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .max_age_seconds = 60, .text_max_age_seconds = 60 } }
      """
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call fails with "conflict.checkpoint_expired" or "not_found.checkpoint"

  @rfc-pin-payload-rules
  Scenario: An ID that is not a checkpoint ID never becomes a path
    Given checkpoint "ok" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.inspect" with {"checkpoint":"../../../etc/passwd"}
    Then the call fails with "invalid_params.checkpoint"
    And the refusal's control, the same call with {"checkpoint":"$ok"}, succeeds

  Scenario Outline: The CLI reports a bad or unknown checkpoint ID as JSON with the RFC's exit code
    Given checkpoint "ok" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner runs the CLI "<words>"
    Then the call fails with "<code>"
    And the CLI exits with code <exit>
    And the refusal's control, the CLI 'recovery inspect --checkpoint $ok', succeeds

    Examples:
      | words                                                               | code                      | exit |
      | recovery inspect --checkpoint not-an-id                             | invalid_params.checkpoint | 2    |
      | recovery inspect --checkpoint c01234567-89ab-4cde-8fab-0123456789ab | not_found.checkpoint      | 3    |

  Scenario Outline: The CLI reports documented errors as JSON with the RFC's exit codes
    Given checkpoint "ok" of format 1 with generation 1 is planted in the store
    And checkpoint "v4" of format 1 with generation 2 is planted in the store as "format 4"
    And a daemon started with <config>
    When the owner runs the CLI "<words>"
    Then the call fails with "<code>"
    And the CLI exits with code <exit>

    Examples:
      | config                   | words                                         | code                          | exit |
      | recovery enabled         | recovery restore --checkpoint $v4             | unsupported.checkpoint_format | 10   |
      | the default configuration | recovery restore --checkpoint $ok            | unavailable.recovery_disabled | 6    |
      | the default configuration | recovery checkpoint                          | unavailable.recovery_disabled | 6    |

  @rfc-pin-reader-result-names
  Scenario: The CLI prints the ok object of a recovery verb as JSON
    Given checkpoint "ok" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner runs the CLI "recovery list"
    Then the call succeeds
    And the CLI exits with code 0
    And the result lists checkpoint "$ok" with status "valid"

  @rfc-4-bounds-first @rfc-pin-reader-result-names
  Scenario: A file over the size limit is refused without being read into memory
    Given checkpoint "big" of format 1 with generation 1 is planted in the store as "oversized 40 MiB"
    And a daemon started with recovery enabled
    And the daemon's peak memory is remembered as $before
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$big" with status "incompatible"
    When the owner calls "recovery.inspect" with {"checkpoint":"$big"}
    Then the call fails with "unsupported.checkpoint_size"
    When the owner calls "recovery.restore" with {"checkpoint":"$big"}
    Then the call fails with "unsupported.checkpoint_size"
    And the daemon's peak memory grew by less than 8 MiB since $before KiB

  @needs-faketime @rfc-2-expired-unavailable @rfc-pin-reader-result-names
  Scenario: A checkpoint written now is future-dated for a daemon whose clock runs behind
    Given checkpoint "t" of format 1 with generation 1 is planted in the store
    And the daemon's clock runs 2 days behind
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$t" with status "future"
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call fails with "conflict.checkpoint_expired"
    And the store still holds the file of "t"

  @needs-faketime @rfc-2-expired-unavailable
  Scenario: A fresh checkpoint is expired for a daemon whose clock runs eight days ahead
    Given checkpoint "t" of format 1 with generation 1 is planted in the store
    And the daemon's clock runs 8 days ahead
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call fails with "conflict.checkpoint_expired" or "not_found.checkpoint"
    When the owner calls "session.list"
    Then the result "sessions" is []
