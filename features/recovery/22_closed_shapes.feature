@rfc-8-corrupt-partial @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Corrupt/partial state
  RFC §4 closed shapes: readers reject unknown fields at any durable-format level, so
  one key the format does not define, in the envelope, the payload, a session, a
  window, a split or pane node, a pane, a text object, a float or a tag, makes the
  file corrupt in each format that has that level. The payload fields keep their
  table rules (generation 1–9007199254740991; checkpoint matches the file name). RFC
  §3: two files with one generation are refused rather than one guessed. RFC §6:
  list gives a generation only for a safely decoded file; corrupt restores exit 5.

  @rfc-4-strict-reader @rfc-pin-reader-result-names
  Scenario Outline: A file with every durable level is valid and restores (the control of the closed-shape rows)
    Given checkpoint "all" of format <format> with generation 1 is planted in the store as "every level"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$all" with status "valid" and generation 1
    When the owner calls "recovery.inspect" with {"checkpoint":"$all"}
    Then the call succeeds
    And the result "sessions" is 1
    And the result "windows" is 1
    And the result "panes" is <panes>
    And the result "text_panes" is 1
    And the result "expired_text_panes" is 0
    When the owner runs the CLI "recovery restore --checkpoint $all"
    Then the call succeeds
    And the CLI exits with code 0
    When the owner calls "session.list"
    Then the result "sessions.0.name" is "work"

    Examples:
      | format | panes |
      | 1      | 2     |
      | 2      | 3     |
      | 3      | 3     |

  # Each row plants the level's file in every format that has the level, in one store
  # (one daemon per level, not per format and level: the suite's time budget).
  @rfc-4-strict-reader @rfc-pin-json-reading @rfc-pin-reader-result-names
  Scenario Outline: One unknown key at a level of formats 1, 2 and 3 makes each file corrupt, listed without a generation, and restores nothing
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store as "unknown key in the <level>"
    And checkpoint "f2" of format 2 with generation 2 is planted in the store as "unknown key in the <level>"
    And checkpoint "f3" of format 3 with generation 3 is planted in the store as "unknown key in the <level>"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.list"
    Then the result lists 3 checkpoints
    And the result lists checkpoint "$f1" with status "corrupt" and no generation
    And the result lists checkpoint "$f2" with status "corrupt" and no generation
    And the result lists checkpoint "$f3" with status "corrupt" and no generation
    When the owner calls "recovery.inspect" with {"checkpoint":"$f1"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner calls "recovery.restore" with {"checkpoint":"$f2"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner runs the CLI "recovery restore --checkpoint $f3"
    Then the call fails with "conflict.checkpoint_corrupt"
    And the CLI exits with code 5
    When the owner calls "session.list"
    Then the result "sessions" is []

    Examples:
      | level        |
      | envelope     |
      | payload      |
      | session      |
      | window       |
      | split node   |
      | pane node    |
      | pane         |
      | omitted text |
      | plain text   |

  @rfc-4-strict-reader @rfc-pin-json-reading @rfc-pin-reader-result-names
  Scenario Outline: One unknown key in a float or a tag of formats 2 and 3 makes each file corrupt and restores nothing
    Given checkpoint "f2" of format 2 with generation 2 is planted in the store as "unknown key in the <level>"
    And checkpoint "f3" of format 3 with generation 3 is planted in the store as "unknown key in the <level>"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.list"
    Then the result lists 2 checkpoints
    And the result lists checkpoint "$f2" with status "corrupt" and no generation
    And the result lists checkpoint "$f3" with status "corrupt" and no generation
    When the owner calls "recovery.restore" with {"checkpoint":"$f2"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner runs the CLI "recovery restore --checkpoint $f3"
    Then the call fails with "conflict.checkpoint_corrupt"
    And the CLI exits with code 5
    When the owner calls "session.list"
    Then the result "sessions" is []

    Examples:
      | level |
      | float |
      | tag   |

  @rfc-4-strict-reader @rfc-3-corrupt-newest-no-fallback @rfc-pin-payload-rules @rfc-pin-reader-result-names
  Scenario Outline: A payload field outside its table rule is corrupt in formats 1 and 3; the older valid file still restores
    Given checkpoint "older" of format 3 with generation 1 is planted in the store
    And checkpoint "f1" of format 1 with generation 2 is planted in the store as "<defect>"
    And checkpoint "f3" of format 3 with generation 3 is planted in the store as "<defect>"
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists 3 checkpoints
    And the result lists checkpoint "$f1" with status "corrupt" and no generation
    And the result lists checkpoint "$f3" with status "corrupt" and no generation
    And the result lists checkpoint "$older" with status "valid" and generation 1
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner runs the CLI "recovery restore --checkpoint $f3"
    Then the call fails with "conflict.checkpoint_corrupt"
    And the CLI exits with code 5
    When the owner calls "session.list"
    Then the result "sessions" is []
    When the owner calls "recovery.restore" with {"checkpoint":"$older"}
    Then the call succeeds

    Examples:
      | defect                            |
      | generation 0                      |
      | checkpoint differs from file name |

  @rfc-3-duplicate-generation @rfc-3-corrupt-newest-no-fallback @rfc-pin-reader-result-names
  Scenario: Two files with one generation are both listed corrupt with it, and neither restores
    Given checkpoint "older" of format 3 with generation 1 is planted in the store
    And checkpoint "a" of format 3 with generation 2 is planted in the store
    And checkpoint "b" of format 1 with generation 2 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists 3 checkpoints
    And the result lists checkpoint "$a" with status "corrupt" and generation 2
    And the result lists checkpoint "$b" with status "corrupt" and generation 2
    And the result lists checkpoint "$older" with status "valid" and generation 1
    When the owner calls "recovery.inspect" with {"checkpoint":"$b"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner runs the CLI "recovery restore --checkpoint $a"
    Then the call fails with "conflict.checkpoint_corrupt"
    And the CLI exits with code 5
    When the owner calls "session.list"
    Then the result "sessions" is []
    When the owner calls "recovery.restore" with {"checkpoint":"$older"}
    Then the call succeeds
