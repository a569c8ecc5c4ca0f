@rfc-8-interrupted-writes @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Interrupted writes
  RFC §3: an interrupted write leaves the previous durable file intact; temporary files
  are never candidates; a failed reply is no proof of persistence. Faults come from
  the kit's LD_PRELOAD injector (libvxfault.so). A daemon may checkpoint as soon as
  its first mutation activates it, so the plans count the store's calls tree-wide
  (`##N`) from the moment the setup's writes are done, and counts are relative to it.

  @rfc-3-lost-reply-not-proof @rfc-pin-reader-result-names
  Scenario Outline: A failed checkpoint write keeps the prior generation and is reported
    Given a daemon started with recovery enabled under the fault plan "<plan>"
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "checkpoint" is saved as $first
    When the owner calls "recovery.checkpoint"
    Then the call fails with "unavailable.recovery_io"
    When the owner calls "recovery.list"
    Then the result lists $settled_count plus 1 checkpoint
    And the result lists checkpoint "$first" with status "valid"

    Examples: one fault at each step of the second publication
      | plan                      |
      | open@*/.tmp-*##2=EIO       |
      | write@*/.tmp-*##2+=ENOSPC  |
      | fsync@*/.tmp-*##2=EIO      |
      | rename@*.json##2=EIO       |

  @rfc-3-lost-reply-not-proof @rfc-pin-reader-result-names
  Scenario: A failed directory fsync is reported, never acknowledged as durable
    Given a daemon started with recovery enabled under the fault plan "fsync@*/recovery/????????????????????????????????????????????????????????????????##2+=EIO"
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "checkpoint" is saved as $first
    When the owner calls "recovery.checkpoint"
    Then the call fails with "unavailable.recovery_io"
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$first" with status "valid"

  Scenario: Short writes are completed, never published partial
    Given a daemon started with recovery enabled under the fault plan "write@*/.tmp-*##2+=short:7"
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "generation" is $settled_generation plus 2
    And the newest checkpoint in the store is valid with format 3

  @rfc-pin-reader-result-names
  Scenario: A write torn by a crash leaves no temporary file selectable
    Given a daemon started with recovery enabled under the fault plan "write@*/.tmp-*##2=torn:20"
    And the owner has created session "work" with a pane running "sleep 60"
    And the store has settled after setup
    When the owner calls "recovery.checkpoint"
    And the result "checkpoint" is saved as $first
    And the owner calls "recovery.checkpoint" and the reply may be lost
    And the daemon is restarted on the same socket
    And the owner calls "recovery.list"
    Then the result lists $settled_count plus 1 checkpoint
    And the result lists checkpoint "$first" with status "valid"

  @rfc-3-lost-reply-not-proof
  Scenario: An acknowledged checkpoint was written, synced, renamed and its directory synced first
    Given a daemon started with recovery enabled and its file calls traced
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And the result "checkpoint" is saved as $cp
    And the trace shows "$cp" written, synced, renamed into place and its directory synced, in that order

  # The crash-state explorer (docs/fault-injection.md, "Crash-state exploration"): a
  # power cut, not a process crash. Every state ALICE's bounded strategies allow under
  # the posix model is materialized as the store and judged on a restarted daemon:
  # no temporary file is a candidate, the newest valid generation is N or N+1 (N+1
  # once acknowledged), nothing invalid restores, the newest restores its session.
  @crash-explore @rfc-3-lost-reply-not-proof
  Scenario Outline: Every power-cut state of one store change keeps a durable generation
    Given the daemon's "<call>" is recorded over a store holding a valid generation
    When every "posix" crash state of the recording is checked
    Then no crash state violates the recovery contract

    Examples:
      | call       |
      | checkpoint |
      | forget     |
      | prune      |

  # Negative controls: the same daemon made a wrong publisher by an fsync that lies.
  @crash-explore
  Scenario Outline: The explorer catches a publication whose fsync did not happen
    Given the daemon's "checkpoint" is recorded under the fault plan "<plan>"
    When every "posix" crash state of the recording is checked
    Then a crash state violates the recovery contract with "<finding>"

    Examples: no directory fsync after the rename; no file fsync before it
      | plan                                                                           | finding                      |
      | fsync@*/recovery/????????????????????????????????????????????????????????????????=lie | was acknowledged             |
      | fsync@*/.tmp-*=lie                                                             | visible under its final name |

  # Negative control: the reference store's deliberately wrong publisher, writing the
  # final name in place (VXSTORE_NEGATIVE_CONTROL=write-in-place).
  @crash-explore
  Scenario: The explorer catches a publisher that writes the final name in place
    Given the daemon's "checkpoint" is recorded with the store writing the final name in place
    When every "posix" crash state of the recording is checked
    Then a crash state violates the recovery contract with "visible under its final name"
