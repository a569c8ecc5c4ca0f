@must @part-runtime
Feature: The slot commit
  After a finished persist visit: Pack → Put(newRef), memory on the new slot, a
  required SaveCheckpoint; on its failure a fail-stop before the edge, with
  FailRunResumable given the new slot; only after a committed checkpoint is the
  previous blob deleted (ADR-089 "Slot commit"). Driven through the implementation's
  drive; visits that must resume run on a new pod or a wiped root.

  @sp-reinvoke @sp-delete-after-commit
  Scenario: Persist reInvoke success: slot C, pause ref cleared, B and the old blob deleted after
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "A"
    When node "w" runs and asks "ok?"
    Then the checkpoint names a pause ref of node "w", kept as "B"
    When the run moves to pod "pod-2"
    And the pause is answered "yes"
    Then the run is completed
    And the edge is selected
    And the checkpoint's slot of node "w" is kept as "C"
    And "A" and "C" differ
    And the checkpoint names no pause ref
    And "B" was deleted only after a checkpoint without it committed
    And "A" was deleted only after a checkpoint without it committed
    And the store holds "C"

  @sp-delete-after-commit
  Scenario: The old blob is deleted only after the checkpoint committed
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "A"
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "B"
    And "A" and "B" differ
    And "A" was deleted only after a checkpoint without it committed
    And the store holds "B"

  @sp-failstop
  Scenario: Persist success then SaveCheckpoint fail: no edge; FailRunResumable cp has new slot; Resume re-executes from that slot
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "A"
    When the next save_checkpoint fails
    And node "w" runs
    Then the run is failed_resumable
    And the edge is not selected
    And the checkpoint's status is "failed_resumable"
    And the checkpoint's slot of node "w" is kept as "B"
    And "A" and "B" differ
    And the store holds "A"
    And the store holds "B"
    And nothing was deleted
    When node "w" is asked to run
    Then the drive refuses it with "conflict.run_state"
    When the run moves to pod "pod-2"
    And the run is resumed
    Then the run is completed
    And node "w" resumed the session of its first visit at turn 3

  @sp-failstop-terminal
  Scenario: FailRunResumable fails too: terminal, the old slot never restored, blobs kept
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "A"
    When the next save_checkpoint fails
    And the next fail_run_resumable fails
    And node "w" runs
    Then the run is failed
    And the checkpoint's status is "failed"
    And the checkpoint's slot of node "w" is kept as "B"
    And "A" and "B" differ
    And the store holds "A"
    When the run is asked to resume
    Then the drive refuses it with "conflict.run_state"

  @sp-pack-fail
  Scenario Outline: <op> fails: the slot is invalidated and its deletion checkpointed
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "A"
    When the next <op> fails
    And node "w" runs
    Then the run is completed
    And the checkpoint has no slot for node "w"
    And "A" was deleted if at all, only after a checkpoint without it committed
    When the pod's roots are wiped
    And node "w" runs
    Then node "w" ran fresh

    Examples:
      | op |
      | pack |
      | store_put |

  @sp-pack-fail
  Scenario: Pack fails and so does the checkpoint of the deletion: fail-stop with an empty slot
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "A"
    When the next pack fails
    And the next save_checkpoint fails
    And node "w" runs
    Then the run is failed_resumable
    And the checkpoint has no slot for node "w"
    And the store holds "A"

  @sp-rewind
  Scenario: Rewind + same executor + stale RAM + resumeFromFailure
    Given the graph:
      """
      w: pi persist
      j: codex persist
      """
    When node "w" runs
    And node "w" runs
    And node "j" runs
    Then the checkpoint's slot of node "w" is kept as "W"
    And the checkpoint's slot of node "j" is kept as "J"
    When the run is rewound to "w"
    Then the checkpoint's status is "rewound"
    And the checkpoint has no slot for node "w"
    And the checkpoint's slot of node "j" is kept as "K"
    And "K" is "J"
    And "W" was deleted only after a checkpoint without it committed
    And the store does not hold "W"
    When the run is resumed
    Then node "w" ran fresh
    And the last visit read nothing from the store
    When the pod's roots are wiped
    And node "j" runs
    Then node "j" resumed the session of its first visit at turn 2

  @sp-reinvoke @sp-delete-after-commit
  Scenario: Persist reInvoke whose checkpoint fails deletes neither B nor the old blob
    # "Only after a successful session checkpoint": the commit that matters is this
    # visit's, not the pause's or the first visit's, which did commit.
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "A"
    When node "w" runs and asks "ok?"
    Then the checkpoint names a pause ref of node "w", kept as "B"
    When the run moves to pod "pod-2"
    And the next save_checkpoint fails
    And the pause is answered "yes"
    Then the run is failed_resumable
    And the edge is not selected
    And the store holds "A"
    And the store holds "B"
    And nothing was deleted

  @sp-rewind @sp-delete-after-commit
  Scenario: Rewind whose checkpoint fails deletes nothing
    # Rewind checkpoints without the dropped refs first: the commit that matters is
    # the rewind's own, not the visit's that did commit.
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    Then the checkpoint's slot of node "w" is kept as "W"
    When the next save_checkpoint fails
    And the run is asked to rewind to "w"
    Then the store holds "W"
    And nothing was deleted
    And the checkpoint's slot of node "w" is kept as "V"
    And "V" is "W"
