@rfc-8-resume @must
Feature: Resume
  RFC §5: callers must rediscover restored resources; an unmapped old ID is an
  ordinary authorized not_found.pane; restored panes are exited archives.

  Scenario: An unmapped old pane ID fails normally after restore
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    When the owner calls "pane.capture" with {"pane":"p77"}
    Then the call fails with "not_found.pane"

  @rfc-5-cut-rows-shown
  Scenario: A mapped archive reads as exited through capture
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    And the result "panes.0.current" is saved as $new
    When the owner calls "pane.capture" with {"pane":"$new"}
    Then the call succeeds
    And the result "exited" is true
    And the result "recovery.previous_pane" is "p0"
    And the result "recovery.cut_rows" is 0

  Scenario: Every start has a fresh source, and restore does not change it
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "server.info"
    Then the result "source" is saved as $first_source
    When the daemon is restarted on the same socket
    And the owner calls "server.info"
    Then the result "source" is not "$first_source"
    And the result "source" is saved as $second_source
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call succeeds
    When the owner calls "server.info"
    Then the result "source" is "$second_source"
