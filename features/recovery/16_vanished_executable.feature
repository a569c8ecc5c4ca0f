@rfc-8-vanished-executable @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Vanished executable
  RFC §6: vanished executables affect only explicit relaunch; relaunch returns
  unavailable.spawn and leaves the archive and tree unchanged, with no child leaked.

  @rfc-1-relaunch-no-old-state
  Scenario: Restore succeeds and relaunch of a missing program fails cleanly
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    And the result "panes.0.current" is saved as $archive
    When the owner calls "pane.relaunch" with {"pane":"$archive","argv":["/missing/program"],"ack_orphans":true}
    Then the call fails with "unavailable.spawn"
    And the daemon has no child processes
    When the owner calls "pane.list"
    Then the result "panes.0.pane" is "$archive"
    And the result's pane 0 is exited
