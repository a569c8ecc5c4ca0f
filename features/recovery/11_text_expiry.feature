@rfc-8-text-expiry @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file @rfc-pin-secret-scan-scope
Feature: Text / expiry
  RFC §2/§4: terminal_text .off stores no terminal bytes; .plain keeps literal rows
  from the primary screen; expired text is dropped but topology restores.

  @rfc-4-capture-no-live-change
  Scenario: With terminal text off, no terminal byte reaches the store
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "printf 'TEXT\055CANARY\055OFF\n'; sleep 60"
    And 400 ms pass
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And no store file contains "TEXT-CANARY-OFF"
    And the newest checkpoint in the store is valid with format 3

  Scenario: With plain text, a restored archive shows the saved rows
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    And the owner has created session "work" with a pane running "printf 'PLAIN\055\342\234\223\055ROW\n'; sleep 60"
    And 400 ms pass
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $cp
    And the daemon is killed with SIGKILL
    And the daemon is restarted on the same socket
    And the owner calls "recovery.restore" with {"checkpoint":"$cp"}
    Then the call succeeds
    When the owner calls "pane.capture" with {"pane":"p0"}
    Then the transcript contains "PLAIN-✓-ROW"
    And the result "recovery.text_state" is "plain"

  @rfc-2-plain-to-off @rfc-4-expired-text-discarded
  Scenario: Text saved as plain is dropped when the current config is off, topology restores
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    And the owner has created session "work" with a pane running "printf 'GONE\055CANARY\n'; sleep 60"
    And 400 ms pass
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $cp
    And the configuration file is replaced by:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .off } }
      """
    And the owner calls "config.reload"
    Then the call succeeds
    And no store file contains "GONE-CANARY"

  Scenario: Planted plain text restores into the archive's screen and history
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "plain text"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call succeeds
    And the result "panes.0.current" is saved as $p
    When the owner calls "pane.capture" with {"pane":"$p"}
    Then the call succeeds
    And the result "screen.0" is "PLANTED-TEXT-ROW ✓"
    And the transcript contains "PLANTED-HISTORY-ROW"
    And the result "recovery.text_state" is "plain"
    And the result "exited" is true

  @rfc-4-expired-text-discarded
  Scenario Outline: Text that may not be shown is discarded, and the topology still restores
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "<text>"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = <policy> } }
      """
    When the owner calls "recovery.inspect" with {"checkpoint":"$t"}
    Then the call succeeds
    And the result "text_panes" is 0
    And the result "expired_text_panes" is 1
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call succeeds
    And the result "panes.0.current" is saved as $p
    When the owner calls "pane.capture" with {"pane":"$p"}
    Then the call succeeds
    And the result "recovery.text_state" is "expired"
    And no reply or error contains "PLANTED-TEXT-ROW"
    And no reply or error contains "PLANTED-HISTORY-ROW"
    When the owner calls "session.list"
    Then the result "sessions.0.name" is "work"

    @rfc-4-backward-clock
    Examples: the clock went backwards (saved_at is later than now)
      | text                           | policy |
      | plain text saved in the future | .plain |

    Examples: stored expiry passed
      | text               | policy |
      | plain text expired | .plain |

    Examples: saved_at plus the current text_max_age_seconds passed, the stored expiry did not
      | text                                         | policy                              |
      | plain text saved 120 s ago expiring in a day | .plain, .text_max_age_seconds = 60 |

  @rfc-4-expired-text-discarded @rfc-2-startup-text-policy
  Scenario: Under a current text policy of off, planted text is never shown
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "plain text"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .off } }
      """
    When restoring "$t" either fails with "not_found.checkpoint" or gives archives without text
    Then no reply or error contains "PLANTED-TEXT-ROW"
    And no reply or error contains "PLANTED-HISTORY-ROW"

  @rfc-4-rechkpt-keeps-expiry
  Scenario: Recheckpointing restored text keeps its original saved_at and expires_at
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "plain text"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    And 1100 ms pass
    And the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the newest checkpoint in the store keeps the planted text timestamps of "t"

  Scenario: Inspect counts text panes but returns no terminal content
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "plain text"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.inspect" with {"checkpoint":"$t"}
    Then the call succeeds
    And the result "text_panes" is 1
    And the result "expired_text_panes" is 0
    And the result "panes" is 1
    And no reply or error contains "PLANTED-TEXT-ROW"
    And no reply or error contains "PLANTED-HISTORY-ROW"

  @needs-faketime @rfc-4-backward-clock
  Scenario: A daemon whose clock is behind the text's saved_at discards the text, not the topology
    Given checkpoint "t" of format 1 with generation 1 captured 7200 s ago is planted in the store as "plain text"
    And the daemon's clock runs 1 hours behind
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call succeeds
    And the result "panes.0.current" is saved as $p
    When the owner calls "pane.capture" with {"pane":"$p"}
    Then the call succeeds
    And the result "recovery.text_state" is "expired"
    And no reply or error contains "PLANTED-TEXT-ROW"

  @needs-faketime @rfc-4-expired-text-discarded
  Scenario: Text past its expiry on the daemon's clock is discarded at restore
    Given checkpoint "t" of format 1 with generation 1 is planted in the store as "plain text"
    And the daemon's clock runs 2 hours ahead
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.restore" with {"checkpoint":"$t"}
    Then the call succeeds
    And the result "panes.0.current" is saved as $p
    When the owner calls "pane.capture" with {"pane":"$p"}
    Then the result "recovery.text_state" is "expired"
    And no reply or error contains "PLANTED-TEXT-ROW"
