@rfc-8-filesystem-security @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Filesystem security
  RFC §2: the store is private (0700/0600, daemon UID); symlinks, hard links, other
  owners and group/other permissions are rejected, never followed or repaired; store
  identity is the socket path and UID; only the socket lock holder writes.

  @rfc-2-reject-unsafe @rfc-2-no-chmod-repair @rfc-2-hold-handles @rfc-pin-reader-result-names
  Scenario Outline: An unsafe checkpoint file is listed unsafe, never read, never repaired
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And the store file of "f1" <tamper>
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$f1" with status "unsafe"
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call fails with "unavailable.recovery_io"
    When the owner calls "session.list"
    Then the result "sessions" is []

    Examples:
      | tamper                                                            |
      | is chmod 0644                                                     |
      | gets a second hard link                                           |
      | is replaced by a symlink to a valid checkpoint outside the store |

    @needs-root
    Examples: another UID (the suite chowns the file, so it runs as root)
      | tamper               |
      | is owned by uid 4242 |

  @rfc-2-no-chmod-repair
  Scenario: A group-readable checkpoint keeps its mode after list and restore attempts
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And the store file of "f1" is chmod 0640
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call fails with "unavailable.recovery_io"
    And the store file of "f1" still has mode 0640

  @rfc-2-reject-unsafe
  Scenario: A permissive store directory is refused
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And the store directory is chmod 0755
    When a daemon is started with recovery enabled, or refuses to start
    Then the owner's "recovery.list" fails with "unavailable.recovery_io" unless the daemon refused to start
    And the store file of "f1" still has mode 0600

  @rfc-2-forget-rejects-unsafe
  Scenario: Forget refuses an unsafe object and leaves it in place
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And the store file of "f1" is replaced by a symlink to a valid checkpoint outside the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.forget" with {"checkpoint":"$f1"}
    Then the call fails with "unavailable.recovery_io"
    And the store still holds the file of "f1"

  @rfc-2-store-identity
  Scenario Outline: A file of another socket or UID is not restorable from this store
    Given checkpoint "x" of format 3 with generation 1 is planted in the store as "<defect>"
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$x"}
    Then the call fails with "conflict.checkpoint_corrupt"

    Examples:
      | defect       |
      | other socket |
      | other uid    |

  @rfc-2-alternate-socket-store
  Scenario: A daemon on an alternate socket does not see the default socket's store
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store of another socket
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the call succeeds
    And the result lists 0 checkpoints

  @rfc-2-store-modes
  Scenario: A store created by the daemon is private
    Given a daemon started with recovery enabled
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And every store directory has mode 0700 and every store file mode 0600, owned by the daemon UID

  @rfc-3-second-daemon-fails
  Scenario: A second daemon on a locked socket fails and touches no checkpoint
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with the default configuration
    When a second daemon is started on the same socket
    Then the second daemon exits with a failure status
    And the first daemon is still serving
    And the store still holds the file of "f1"
    And the store holds exactly 1 checkpoint file

  @rfc-2-xdg-absolute
  Scenario: A relative XDG_STATE_HOME is never used as a store
    Given the daemon environment has XDG_STATE_HOME=relative-state
    When a daemon is started with recovery enabled, or refuses to start
    Then the owner's "recovery.checkpoint" fails with "unavailable.recovery_io" unless the daemon refused to start
    And nothing exists at "relative-state" under the daemon's working directory

  @rfc-2-hold-handles @rfc-2-reject-unsafe @rfc-pin-reader-result-names
  Scenario: A file replaced after listing is checked again on restore
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$f1" with status "valid"
    When the store file of "f1" is replaced by a symlink to a valid checkpoint outside the store
    And the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call fails with "unavailable.recovery_io"
    When the owner calls "session.list"
    Then the result "sessions" is []

  @rfc-pin-reader-result-names
  Scenario: A disk-full store keeps the previous checkpoint and says so
    Given a daemon started with recovery enabled under the fault plan "write@*/.tmp-*##2+=ENOSPC"
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $first
    And the owner calls "recovery.checkpoint"
    Then the call fails with "unavailable.recovery_io"
    And the store holds exactly $settled_count plus 1 checkpoint file
    When the owner calls "recovery.list"
    Then the result lists $settled_count plus 1 checkpoint
    And the result lists checkpoint "$first" with status "valid"
