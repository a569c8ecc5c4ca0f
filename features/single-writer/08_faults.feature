@must @part-broker @fault-plans
Feature: Lock and launch faults
  The per-key lock and the launch under the fault injector (issue 16 "Fault plans"):
  the broker runs under the injector (the profile's fault_backend) and a plan that
  fails its flock, open or unlink of the key's files ({lock_file} and {session_socket}
  are the profile's lock_path and session_socket with every session's name a glob). A
  lock that cannot be taken spawns nothing; an interrupted flock is retried; a broker
  that dies holding the lock leaves it to the kernel; a launch that fails frees the
  lock.

  @sw-busy
  Scenario: flock says EWOULDBLOCK: BUSY, nothing spawned
    Given a broker is running under the fault plan "flock@{lock_file}=EWOULDBLOCK"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A is closed with code 4409
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent
    And the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is absent

  # The seed names no EINTR: retrying an interrupted flock (Python does, PEP 475; Go's
  # syscall.Flock does not) is the kit's reading, a SHOULD. A broker that refuses the
  # open instead still launches no second writer.
  @sw-one-writer @should
  Scenario: An interrupted flock (EINTR) is retried: LAUNCH with the lock held
    Given a broker is running under the fault plan "flock@{lock_file}#1=EINTR"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A sees the agent ready
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is held

  @sw-busy @sw-launch-fail-frees @sw-pin-close-codes
  Scenario Outline: A lock that cannot be taken (<case>) refuses the open and spawns nothing
    Given a broker is running under the fault plan "<plan>"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then the fault plan's rule 1 acted
    And viewer A is closed as refused (4500)
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is free

    Examples:
      | case | plan |
      | ENOLCK | flock@{lock_file}=ENOLCK |
      | EACCES from flock | flock@{lock_file}=EACCES |
      | the lock file cannot be opened | open@{lock_file}=EACCES |

  @sw-restart
  Scenario: A broker killed right after it took the lock leaves it to the kernel; the next broker launches once
    Given a broker is running under the fault plan "flock@{lock_file}#1=crash-after"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then the broker is gone
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is free
    When a new broker starts on the same runtime directory
    And viewer B opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer B sees the agent ready
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has exactly one running agent

  @sw-busy @sw-launch-fail-frees @sw-reap-under-lock @sw-pin-close-codes
  Scenario: An orphan socket that cannot be unlinked fails the launch and frees the lock
    Given a broker is running under the fault plan "unlink@{session_socket}=EACCES"
    And a socket nobody listens on is at the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    When viewer A opens "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    Then viewer A is closed as a failed launch (4502)
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is free

  @sw-durable-formats @sw-alias
  Scenario: A broker killed while it replaces the alias sidecar leaves the old one intact
    Given a broker is running under the fault plan "rename@{alias_sidecar}*#2=crash"
    And viewer A opens "opencode:new-6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And viewer A sees the agent ready
    And the suite notes the only "opencode" agent
    When viewer A types "first turn"
    Then viewer A is told the real key of the minted session
    When viewer B opens "opencode:new-0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3" with "new=1"
    And viewer B sees the agent ready
    And viewer B types "first turn"
    Then the broker is gone
    And the broker's alias sidecar is valid and holds 1 alias
    When a new broker starts on the same runtime directory
    And viewer C opens the minted session
    Then viewer C sees the agent ready
    And there are 2 "opencode" agents
    And the noted "opencode" agent is one of them

  @sw-recheck
  Scenario: A master that appears while the broker waits for the lock is attached; the lock is released
    Given a broker is running under the fault plan "flock@{lock_file}#1=delay:3000"
    When viewer A starts opening "claude:6a73c0de-1234-4abc-8def-0123456789ab" with "new=1"
    And a listener of the suite takes the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab" while the broker waits for its lock
    Then viewer A's open has ended
    And the broker attached to the suite's listener
    And "claude:6a73c0de-1234-4abc-8def-0123456789ab" has no running agent
    And the lock of "claude:6a73c0de-1234-4abc-8def-0123456789ab" is free
    And the suite's listener still has the socket of "claude:6a73c0de-1234-4abc-8def-0123456789ab"
    And the broker started no other program
