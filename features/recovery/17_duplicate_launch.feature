@rfc-8-duplicate-launch @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Duplicate launch
  RFC §5/§6: a second restore fails on the nonempty tree without duplicates; a retried
  relaunch names the removed archive and cannot launch again.

  Scenario: A retried restore is rejected once the tree is nonempty
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call fails with "conflict.not_empty"
    When the owner calls "session.list"
    Then the result "sessions.1" is absent

  Scenario: A retried relaunch launches at most once
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the result "panes.0.current" is saved as $archive
    And the owner calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sh","-c","exit 0"],"ack_orphans":true}
    Then the call succeeds
    When the owner calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sh","-c","exit 0"],"ack_orphans":true}
    Then the call fails with "not_found.pane"

  Scenario: Restore into a tree with only an empty session is rejected
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "session.create" with {"name":"empty"}
    And the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call fails with "conflict.not_empty"

  Scenario: Concurrent restores of one checkpoint: exactly one commits
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When 4 owner connections call "recovery.restore" at once with {"checkpoint":"$f1"}
    Then exactly one of them succeeds and the others fail with "conflict.not_empty"
    When the owner calls "session.list"
    Then the result "sessions.0.name" is "work"
    And the result "sessions.1" is absent

  Scenario: Concurrent relaunches of one archive: exactly one launches
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the result "panes.0.current" is saved as $archive
    And 4 owner connections call "pane.relaunch" at once with {"pane":"$archive","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}
    Then exactly one of them succeeds and the others fail with "not_found.pane"
    When the owner calls "pane.list"
    Then the result "panes.0.state" is "running"
    And the result "panes.1" is absent
    And the daemon has exactly 1 child process
