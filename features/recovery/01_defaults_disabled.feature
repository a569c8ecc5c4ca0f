@rfc-8-defaults-disabled @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Defaults / disabled
  RFC §2: `.recovery.enabled` defaults to false. §8: no checkpoint writes or restore,
  explicit persistent zero-session behavior unchanged.

  @rfc-2-disable-stops-writes @rfc-3-empty-no-autocheckpoint
  Scenario: A default daemon writes no checkpoint through mutations and a clean stop
    Given a daemon started with the default configuration
    And the owner has created session "work" with a pane running "echo ready; sleep 30"
    When the owner calls "session.rename" with {"session":"$session","name":"renamed"}
    And 300 ms pass
    And the daemon is stopped with SIGTERM
    Then no checkpoint or temporary file exists in the store

  Scenario: A fresh default daemon serves zero sessions and stays up without any
    Given a daemon started with the default configuration
    When the owner calls "session.list"
    Then the call succeeds
    And the result "sessions" is []
    When 1500 ms pass
    Then the first daemon is still serving

  Scenario: A restarted default daemon starts with zero sessions again
    Given a daemon started with the default configuration
    And the owner has created session "work" with a pane running "sleep 30"
    When the daemon is restarted on the same socket
    And the owner calls "session.list"
    Then the call succeeds
    And the result "sessions" is []
    And no checkpoint or temporary file exists in the store

  @rfc-2-disable-stops-writes
  Scenario: An explicit checkpoint is refused while disabled
    Given a daemon started with the default configuration
    And the owner has created session "work" with a pane running "sleep 30"
    When the owner calls "recovery.checkpoint"
    Then the call fails with "unavailable.recovery_disabled"
    And no checkpoint or temporary file exists in the store

  @rfc-2-disable-keeps-archives @rfc-pin-reader-result-names
  Scenario: Restore is refused while disabled, and existing archives stay listed
    Given checkpoint "old" of format 3 with generation 1 is planted in the store
    And a daemon started with the default configuration
    When the owner calls "recovery.restore" with {"checkpoint":"$old"}
    Then the call fails with "unavailable.recovery_disabled"
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$old" with status "valid"
    And the store still holds the file of "old"
    When the owner calls "session.list"
    Then the result "sessions" is []
