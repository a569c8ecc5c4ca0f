@rfc-8-retention-config @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Retention/config
  Periodic ticks and store faults — RFC §2/§3 rules that no other mechanism may mask: the periodic tick (at the
  shortest interval the config allows, 1000 ms) writes open checkpoints, and never
  while disabled or before the first activation; expiry is enforced even when the
  prune that would remove the file fails; startup prunes before readiness; a second
  daemon on a locked socket touches nothing and exits 6 (docs/spec/lifecycle.md);
  the files the store creates are exclusive, no-follow and 0600 from their first
  instant (the injector's trace); a failed directory fsync is no publication; an
  explicit write in flight refuses a second one busy.

  # ---- The periodic tick
  @rfc-3-open-not-clean
  Scenario Outline: A periodic checkpoint is written with shutdown "open"
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .interval_ms = 1000 } }
      """
    And the owner has created session "work" with <tree>
    When a checkpoint file appears in the store within 5000 ms
    And the daemon is killed with SIGKILL
    Then the newest checkpoint in the store is valid with shutdown "open"

    Examples:
      | tree                       |
      | a pane running "sleep 60"  |
      | an empty window            |

  @rfc-2-disable-stops-writes
  Scenario: A disabled daemon's periodic tick writes nothing, whatever changes
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = false, .interval_ms = 1000 } }
      """
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "session.rename" with {"session":"$session","name":"renamed"}
    And the owner calls "window.create" with {"session":"$session","name":"second"}
    And 2200 ms pass
    Then no checkpoint or temporary file exists in the store

  @rfc-2-disable-stops-writes @rfc-2-disable-keeps-archives
  Scenario: Disabling by reload stops the periodic writes it had been making
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .interval_ms = 1000 } }
      """
    And the owner has created session "work" with a pane running "sleep 60"
    And a checkpoint file appears in the store within 5000 ms
    When the configuration file is replaced by:
      """
      .{ .recovery = .{ .enabled = false, .interval_ms = 1000 } }
      """
    And the owner calls "config.reload"
    Then the call succeeds
    When the store's entries are remembered
    And the owner calls "session.rename" with {"session":"$session","name":"renamed"}
    And 2200 ms pass
    Then the store's entries are exactly as remembered

  @rfc-3-empty-no-autocheckpoint
  Scenario Outline: A fresh empty daemon's ticks neither write nor prune the archives it found
    Given checkpoint "kept" of format 3 with generation 1 is planted in the store
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .interval_ms = 1000, .max_checkpoints = 1, .terminal_text = <text> } }
      """
    And the store's entries are remembered
    When the owner calls "session.list"
    And the owner calls "recovery.list"
    And 2200 ms pass
    Then the store's entries are exactly as remembered
    And the store still holds the file of "kept"

    Examples:
      | text   |
      | .off   |
      | .plain |

  # ---- Expiry where pruning cannot hide it
  @rfc-2-expired-unavailable @rfc-2-partial-cleanup-diagnosed @rfc-pin-reader-result-names
  Scenario: An expired checkpoint whose prune fails is listed expired and refused for restore
    Given a daemon started with recovery enabled under the fault plan "unlink@*/c*.json=EIO"
    And checkpoint "old" of format 3 with generation 1 captured 700000 s ago is planted in the store
    And checkpoint "new" of format 3 with generation 2 is planted in the store
    When the owner calls "recovery.list"
    Then the call succeeds
    And the result lists checkpoint "$old" with status "expired"
    And the result lists checkpoint "$new" with status "valid"
    And the store still holds the file of "old"
    When the owner calls "recovery.restore" with {"checkpoint":"$old"}
    Then the call fails with "conflict.checkpoint_expired"
    And the store still holds the file of "old"
    When the owner calls "session.list"
    Then the result "sessions" is []
    When the owner calls "doctor"
    Then some doctor check has status "warning" or "error"
  Scenario: Startup prunes by age and count before readiness, before any recovery verb
    Given checkpoint "old" of format 3 with generation 1 captured 700000 s ago is planted in the store
    And checkpoint "older" of format 3 with generation 2 is planted in the store
    And checkpoint "newest" of format 3 with generation 3 is planted in the store
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .max_checkpoints = 1 } }
      """
    Then the store holds exactly 1 checkpoint file
    And the store still holds the file of "newest"

  # ---- Only the lock holder touches the store
  @rfc-3-second-daemon-fails @rfc-8-filesystem-security @rfc-pin-reader-result-names @rfc-pin-daemon-exit
  Scenario: A second daemon on a locked socket exits 6 and leaves prunable, expired and temporary files alone
    Given a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .max_checkpoints = 1 } }
      """
    And checkpoint "old" of format 3 with generation 1 captured 700000 s ago is planted in the store
    And checkpoint "older" of format 3 with generation 2 is planted in the store
    And checkpoint "newest" of format 3 with generation 3 is planted in the store
    And a safe temporary file is planted in the store as $tmp
    And the store's entries are remembered
    When a second daemon is started on the same socket
    Then the second daemon exits with status 6
    And the store's entries are exactly as remembered
    And the first daemon is still serving

  # ---- The files of one publication, observed directly
  @rfc-2-reject-unsafe @rfc-2-store-modes @rfc-8-filesystem-security
  Scenario: The store's files are created exclusive, no-follow and private, never chmod'ed into it
    Given a daemon started with recovery enabled and its file calls traced
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "checkpoint" is saved as $cp
    And the trace shows the temporary file of "$cp" and every other file created in the store opened exclusive and no-follow with mode 0600
    And every store directory has mode 0700 and every store file mode 0600, owned by the daemon UID

  # ---- Faults at each point of one publication
  @rfc-3-lost-reply-not-proof @rfc-8-interrupted-writes @rfc-pin-reader-result-names
  Scenario: A generation whose directory fsync failed does not count for pruning under a count of one
    Given a daemon started under the fault plan "fsync@*/recovery/????????????????????????????????????????????????????????????????##2+=EIO" with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .max_checkpoints = 1 } }
      """
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "checkpoint" is saved as $kept
    When the owner calls "session.rename" with {"session":"$session","name":"renamed"}
    And the owner calls "recovery.checkpoint"
    Then the call fails with "unavailable.recovery_io"
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$kept" with status "valid"

  @rfc-3-lost-reply-not-proof
  Scenario: A second explicit checkpoint while one is being written is refused busy, exit 5
    Given a daemon started with recovery enabled under the fault plan "fsync@*/.tmp-*##1=delay:1500"
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner runs the CLI "recovery checkpoint" while the owner's "recovery.checkpoint" is being written
    Then the call fails with "conflict.recovery_busy"
    And the CLI exits with code 5
    And the checkpoint that was being written succeeds
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
