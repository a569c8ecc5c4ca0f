@must @part-runtime
Feature: The ask_user pause
  A node that asks the user pauses the run: the packed session rides the ask_user
  error, is Put under a pause ref, and PauseRun writes a checkpoint naming the ref,
  never the bytes; an error of PauseRun never deletes a blob the durable checkpoint
  might still name (ADR-089 "Pause, ask_user"). Driven through the implementation's
  drive (docs/spec/persist-drive.md); every answer lands on a new pod or a wiped root.

  @sp-pause-blob @sp-blob-unlogged
  Scenario: ask_user error carries blob; checkpoint has ref not bytes
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs and asks "which title?"
    Then the run is paused
    And the ask_user error carries the session's blob
    And the checkpoint names a pause ref of node "w", kept as "A"
    And the checkpoint has no node sessions
    And the checkpoint's status is "paused"
    And nothing the implementation showed carries a session state key or blob bytes

  @sp-pause-ref
  Scenario: Wiped dir between ask_user and answer; pause ref not NodeSessions
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    And node "w" runs and asks "ok?"
    Then the checkpoint names a pause ref of node "w", kept as "A"
    When the run moves to pod "pod-2"
    And the pause is answered "yes"
    Then the run is completed
    And node "w" resumed the session of its first visit at turn 3
    And the last visit read only "A" from the store

  @sp-second-ask
  Scenario: Two ask_users: success deletes A after B committed
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs and asks "first?"
    Then the checkpoint names a pause ref of node "w", kept as "A"
    When the pause is answered "one" and it asks "second?"
    Then the run is paused
    And the checkpoint names a pause ref of node "w", kept as "B"
    And "A" and "B" differ
    And "A" was deleted only after a checkpoint without it committed
    And the store does not hold "A"
    And the store holds "B"
    When the run moves to pod "pod-2"
    And the pause is answered "two"
    Then node "w" resumed the session of its first visit at turn 3

  @sp-pauserun-keep @sp-pin-warnings
  Scenario: PauseRun writes checkpoint then returns error: B not deleted
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs and asks "first?"
    Then the checkpoint names a pause ref of node "w", kept as "A"
    When the next pause_run fails after it lands
    And the pause is answered "one" and it asks "second?"
    Then the run is paused
    And the last visit warned "persist.pause_run_failed", as the kit reads it
    And the checkpoint names a pause ref of node "w", kept as "B"
    And the store holds "A"
    And the store holds "B"
    And nothing was deleted
    And the run store was loaded 1 time
    When the run moves to pod "pod-2"
    And the pause is answered "two"
    Then node "w" resumed the session of its first visit at turn 3

  @sp-pauserun-keep
  Scenario: PauseRun(B) error: A and B both kept (no LoadRun delete)
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs and asks "first?"
    Then the checkpoint names a pause ref of node "w", kept as "A"
    When the next pause_run fails
    And the pause is answered "one" and it asks "second?"
    Then the checkpoint names a pause ref of node "w", kept as "C"
    And "C" is "A"
    And the store holds "A"
    And the store holds 2 pause blobs of node "w"
    And nothing was deleted
    And the run store was loaded 1 time
    When the run moves to pod "pod-2"
    And the pause is answered "again"
    Then node "w" resumed the session of its first visit at turn 2

  @sp-put-fail @sp-pin-warnings
  Scenario: Put fails: pause without a CLI ref; ask_user not blocked
    Given the graph:
      """
      w: pi persist
      """
    When the next store_put fails
    And node "w" runs and asks "ok?"
    Then the run is paused
    And the last visit warned "persist.pause_put_failed", as the kit reads it
    And the checkpoint names no pause ref
    And the checkpoint's status is "paused"
    When the run moves to pod "pod-2"
    And the pause is answered "yes"
    Then node "w" ran with no session id

  @sp-pause-get-fail @sp-order @sp-pin-warnings
  Scenario Outline: Pause-ref Get/unpack fail: stripped id/fingerprint, no Task.SessionID (<op>)
    Given the graph:
      """
      w: pi persist
      """
    When node "w" runs
    And node "w" runs and asks "ok?"
    Then the checkpoint names a pause ref of node "w", kept as "P"
    When the next <op> fails
    And the pause is answered "yes"
    Then node "w" ran fresh
    And node "w" ran with no fingerprint
    And the last visit warned "<warning>"
    And the last visit read only "P" from the store

    Examples:
      | op | warning |
      | store_get | persist.pause_get_failed |
      | unpack | persist.pause_unpack_failed |

  @sp-reinvoke
  Scenario: Non-persist reInvoke success: no NodeSessions
    Given the graph:
      """
      w: pi fresh
      """
    When node "w" runs and asks "ok?"
    Then the checkpoint names a pause ref of node "w", kept as "A"
    When the run moves to pod "pod-2"
    And the pause is answered "yes"
    Then the run is completed
    And node "w" resumed the session of its first visit at turn 2
    And the checkpoint has no node sessions
    And the checkpoint names no pause ref
    And "A" was deleted only after a checkpoint without it committed
    And the store does not hold "A"
    And nothing the implementation showed carries a session state key or blob bytes
