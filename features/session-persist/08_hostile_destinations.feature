@must @part-packer
Feature: Unpack into a hostile destination, and unpack failing part-way
  A pod's root is a CLI's config dir: what is already at a path a blob writes is not
  the packer's. The kit plants, at each path the kit's valid blob writes (the root,
  the project directory, the key file, the session's own directory and a file below
  it), a symbolic link to outside the pod, a hard link to a file outside it, a FIFO,
  a directory where a file goes, a file where a directory goes, or a read-only file,
  and unpacks the valid blob there. The implementation chooses: refuse (a refusal
  counts only after its valid twin, the same blob into a fresh pod, was accepted), or
  replace the entry atomically, the link itself and never its target. Either way
  nothing outside the root changes (no link's target, no other name of a hard link),
  HasSession is true only with the whole session there, an unpack that exits 0 left
  the whole session, and every command ends within its bound (5 s, scaled): a command
  still running then is killed and the row fails with it, it never hangs the suite.
  Then the injector fails the unpack's writes, fsyncs and renames under the root
  (EIO), one call at a time: after each, HasSession is false or the whole session is
  there, never a part; over an earlier copy of the session (the same paths, other
  bytes: a pod that ran the session before), the earlier copy untouched is a third
  outcome, and its old transcript beside new files is a part.

  @sp-temp-rename @sp-hassession-root @sp-path-safety
  Scenario Outline: Unpack where the <place> is <kind>
    Given the control: the kit's valid claude_code blob of session "6a73c0de-1234-4abc-8def-0123456789ab" is unpacked into a fresh pod
    And pod "B"'s <place> for claude_code session "6a73c0de-1234-4abc-8def-0123456789ab" is <kind>
    When pod "B" unpacks the kit's valid claude_code blob of session "6a73c0de-1234-4abc-8def-0123456789ab" within its bound
    Then nothing outside pod "B" changed
    And pod "B" has claude_code session "6a73c0de-1234-4abc-8def-0123456789ab" only whole, and whole after an unpack that succeeded

    Examples:
      | place | kind |
      | root | a symlink to outside the pod |
      | root | a plain file |
      | root | a FIFO |
      | project dir | a symlink to outside the pod |
      | project dir | a plain file |
      | project dir | a FIFO |
      | key file | a symlink to outside the pod |
      | key file | a hard link to a file outside the pod |
      | key file | a FIFO |
      | key file | a directory |
      | key file | a read-only file |
      | subtree dir | a symlink to outside the pod |
      | subtree dir | a plain file |
      | subtree dir | a FIFO |
      | subtree file | a symlink to outside the pod |
      | subtree file | a hard link to a file outside the pod |
      | subtree file | a FIFO |
      | subtree file | a directory |
      | subtree file | a read-only file |

  @sp-hassession-root @sp-temp-rename
  Scenario Outline: Unpack failed at each <call> in turn leaves no HasSession or the whole session
    When pod "B" unpacks the kit's valid claude_code blob of session "6a73c0de-1234-4abc-8def-0123456789ab" failing each <call> in turn
    Then the unpack was failed at <least> <call>s at least
    And every failed call left the pod without the session or with all of it
    And the unpack no fault reached left the whole session

    Examples:
      | call | least |
      | write | 1 |
      | fsync | 0 |
      | rename | 1 |

  @sp-hassession-root @sp-temp-rename
  Scenario Outline: Unpack over an earlier copy of the session failed at each <call> in turn never leaves the old transcript beside new files
    When pod "B" unpacks the kit's valid claude_code blob of session "6a73c0de-1234-4abc-8def-0123456789ab" over an earlier copy of the session failing each <call> in turn
    Then the unpack was failed at <least> <call>s at least
    And every failed call left the pod without the session or with all of it
    And the unpack no fault reached left the whole session

    Examples:
      | call | least |
      | write | 1 |
      | rename | 1 |
