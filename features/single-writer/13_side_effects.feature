@must @part-broker @side-effects
Feature: Side effects, seen directly
  Where a wrong broker can reach the same outcome as a right one, these rows look at
  the effect the seed forbids itself: the lock's descriptor everywhere it can travel
  (the agent, what the agent forks, another key's master launched meanwhile), the
  engine's index opened only for reading, an id pushed to the viewer only once its
  alias is persisted, the reconcile's snapshot taken before the launch and limited to
  the launch's cwd, retire that clears the owner's claim and leaves an orphan socket
  alone without the lock, and a secondary's raw bytes held at the gate. Each row
  checks its positive barrier (the holder exists, the index was read, the fault
  fired) before its negative observation.

  # "Exit: when the agent process exits, … the lock releases": a process the agent left
  # running must not keep the lock, or the next open is BUSY for ever.
  @sw-one-writer @sw-agent-exit
  Scenario: The lock's descriptor stays with the master: neither the agent nor what it forks holds it
    Given a broker is running
    And viewer A opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1"
    And viewer A sees the agent ready
    When viewer A types "fork"
    And the agent of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" has a background process running
    Then the lock file of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is open in a process of the sandbox
    When viewer A types "exit 0"
    And viewer A is closed as the agent exited (1000)
    Then the background process of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is still running
    And no process holds the lock of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"

  # The seed hands the lock to dtach (pass_fds) and dtach's forkpty passes it on to the
  # agent: the lock is "held for the lifetime of the agent process" either way. Keeping
  # it from the agent while it runs is the kit's reading, a SHOULD.
  @sw-one-writer @should
  Scenario: While the agent runs, neither it nor what it forks holds the lock's descriptor
    Given a broker is running
    And viewer A opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1"
    And viewer A sees the agent ready
    When viewer A types "fork"
    And the agent of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" has a background process running
    Then the lock file of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is open in a process of the sandbox
    And neither the agent of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" nor any process it started holds its lock file

  # The seed reaps "a socket with no live master" and its unlink_if_stale removes
  # "any orphan .sock ... a stale file from a previous generation": what else at the
  # socket path is left alone is the kit's reading, a SHOULD.
  @sw-busy @sw-not-socket @sw-pin-close-codes @should
  Scenario: A symbolic link at the socket path is left alone: the broker never connects through it
    Given a broker is running
    And a symbolic link to a socket of the suite's is at the socket of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
    When viewer A opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1"
    Then viewer A is closed as refused (4500)
    And nothing connected through the symbolic link at the socket of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
    And the symbolic link at the socket of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is unchanged

  @sw-one-writer @fault-plans
  Scenario: Two keys launched at once: a key's lock never reaches the other key's master
    Given a broker is running under the fault plan "flock@{lock_file}#1=delay:1500"
    When viewer A starts opening "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1"
    And the broker has opened the lock file of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
    And viewer B opens "claude:0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3" with "new=1"
    And viewer B sees the agent ready
    And viewer A's open of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1" completes
    And viewer A sees the agent ready
    Then the lock file of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is open in a process of the sandbox
    And no process of "claude:0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3" holds the lock file of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
    When viewer A types "exit 0"
    And viewer A is closed as the agent exited (1000)
    Then "claude:0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3" has exactly one running agent
    And no process holds the lock of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"

  @sw-gate
  Scenario: A secondary's raw binary frames never reach the agent
    Given a broker is running
    And viewer A opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1&fp=a&tab=1"
    And viewer A sees the agent ready
    When viewer B opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "fp=b&tab=2"
    And viewer B is told it is secondary
    And viewer B types "raw-from-secondary" as raw bytes
    And viewer A types "raw-from-owner" as raw bytes
    Then the agent of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" got the line "raw-from-owner"
    And the agent of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" never got the line "raw-from-secondary"

  @sw-retire
  Scenario: Retire clears the owner's claim: the next launch's first tab owns it
    Given a broker is running
    And viewer A opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1&fp=a&tab=1"
    And viewer A sees the agent ready
    Then viewer A is told it is owner
    When "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is retired
    And viewer A is closed as the agent exited (1000)
    Then the lock of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is free
    When viewer B opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1&fp=b&tab=2"
    Then viewer B sees the agent ready
    And viewer B is told it is owner

  @sw-retire @optional-takeover
  Scenario: Retire under take-over clears the owner file: the next launch's first tab owns it
    Given two brokers with take-over share one runtime directory
    And viewer A opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1&fp=a&tab=1"
    And viewer A sees the agent ready
    Then viewer A is told it is owner
    When "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is retired
    And viewer A is closed as the agent exited (1000)
    Then the lock of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is free
    When viewer B opens "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" with "new=1&fp=b&tab=2" on the second broker
    Then viewer B sees the agent ready
    And viewer B is told it is owner

  @sw-reap-under-lock
  Scenario: Retire leaves an orphan socket alone while another instance holds the lock
    Given a broker is running
    And a socket nobody listens on is at the socket of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
    And the suite holds the lock of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
    When "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is retired
    Then the orphan socket of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is still there
    When the suite releases the lock it holds
    And "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is retired
    Then the socket of "claude:5e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b" is absent

  @sw-alias
  Scenario: An id minted in another directory is not the launch's: the reconcile reads its cwd only
    Given a broker is running
    When viewer A opens "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab" with "new=1" in a work directory
    And viewer A sees the agent ready
    And the session id "ses_Elsewhere1" of another directory appears in the engine's index
    And viewer A types "first turn"
    Then viewer A is told the real key of the minted session

  @sw-alias
  Scenario: The engine's index is opened only for reading, from the snapshot on
    Given the engine's index holds an earlier session "ses_Earlier1"
    And a broker is running
    And the suite watches the engine's index
    When viewer A opens "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    Then the broker has read the engine's index
    And nothing opened the engine's index for writing
    When viewer A types "first turn"
    Then viewer A is told the real key of the minted session
    And the engine's index was opened for writing once, by the agent's mint

  @sw-alias @fault-plans
  Scenario: The snapshot is taken before the launch: an id that appears right after it is the session's
    Given a broker is running under the fault plan "open@{engine_index}#1=delay:1500"
    When viewer A starts opening "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And an "opencode" agent is running
    And the session id "ses_AfterLaunch1" appears in the engine's index
    And viewer A's open of "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab" with "new=1" completes
    Then viewer A is told the real key "opencode:ses_AfterLaunch1"

  @sw-alias @fault-plans
  Scenario: An alias that cannot be persisted is never pushed to the viewer; the broker keeps serving
    Given a broker is running under the fault plan "rename@{alias_sidecar}*=EIO"
    And viewer A opens "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    When viewer A types "first turn"
    Then the agent's minted id is in the engine's index
    And the fault plan's rule 1 acted
    And viewer A is never told a real key
    And the session list has at most one row for "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab", under that key
