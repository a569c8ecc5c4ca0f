@rfc-8-corrupt-partial @must
Feature: Corrupt/partial state
  RFC §4 closed shapes: readers reject unknown fields at any durable-format level, so
  one key the format does not define, in the envelope, the payload, a session, a
  window, a split or pane node, a pane, a text object, a float or a tag, makes the
  file corrupt in each format that has that level. The payload fields keep their
  table rules (generation 1–9007199254740991; checkpoint matches the file name). RFC
  §3: two files with one generation are refused rather than one guessed. RFC §6:
  list gives a generation only for a safely decoded file; corrupt restores exit 5.

  @rfc-4-strict-reader
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

  @rfc-4-strict-reader
  Scenario Outline: One unknown key at any level makes the file corrupt, listed without a generation, and restores nothing
    Given checkpoint "bad" of format <format> with generation 1 is planted in the store as "unknown key in the <level>"
    And a daemon started with the configuration:
      """
      .{ .recovery = .{ .enabled = true, .terminal_text = .plain } }
      """
    When the owner calls "recovery.list"
    Then the result lists checkpoint "$bad" with status "corrupt" and no generation
    When the owner calls "recovery.inspect" with {"checkpoint":"$bad"}
    Then the call fails with "conflict.checkpoint_corrupt"
    When the owner runs the CLI "recovery restore --checkpoint $bad"
    Then the call fails with "conflict.checkpoint_corrupt"
    And the CLI exits with code 5
    When the owner calls "session.list"
    Then the result "sessions" is []

    Examples: format 1
      | format | level        |
      | 1      | envelope     |
      | 1      | payload      |
      | 1      | session      |
      | 1      | window       |
      | 1      | split node   |
      | 1      | pane node    |
      | 1      | pane         |
      | 1      | omitted text |
      | 1      | plain text   |

    Examples: format 2 (adds floats and tags)
      | format | level        |
      | 2      | envelope     |
      | 2      | payload      |
      | 2      | session      |
      | 2      | window       |
      | 2      | split node   |
      | 2      | pane node    |
      | 2      | pane         |
      | 2      | omitted text |
      | 2      | plain text   |
      | 2      | float        |
      | 2      | tag          |

    Examples: format 3 (adds split ratios)
      | format | level        |
      | 3      | envelope     |
      | 3      | payload      |
      | 3      | session      |
      | 3      | window       |
      | 3      | split node   |
      | 3      | pane node    |
      | 3      | pane         |
      | 3      | omitted text |
      | 3      | plain text   |
      | 3      | float        |
      | 3      | tag          |

  @rfc-4-strict-reader @rfc-3-corrupt-newest-no-fallback
  Scenario Outline: A payload field outside its table rule is corrupt and restores nothing; the older valid file still restores
    Given checkpoint "older" of format 3 with generation 1 is planted in the store
    And checkpoint "bad" of format <format> with generation 2 is planted in the store as "<defect>"
    And a daemon started with recovery enabled
    When the owner calls "recovery.list"
    Then the result lists 2 checkpoints
    And the result lists checkpoint "$bad" with status "corrupt" and no generation
    And the result lists checkpoint "$older" with status "valid" and generation 1
    When the owner runs the CLI "recovery restore --checkpoint $bad"
    Then the call fails with "conflict.checkpoint_corrupt"
    And the CLI exits with code 5
    When the owner calls "session.list"
    Then the result "sessions" is []
    When the owner calls "recovery.restore" with {"checkpoint":"$older"}
    Then the call succeeds

    Examples:
      | format | defect                            |
      | 1      | generation 0                      |
      | 3      | generation 0                      |
      | 1      | checkpoint differs from file name |
      | 3      | checkpoint differs from file name |

  @rfc-3-duplicate-generation @rfc-3-corrupt-newest-no-fallback
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
