@rfc-8-duplicate-launch @must
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
