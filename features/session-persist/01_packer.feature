@must @part-packer
Feature: The session packer
  A CLI agent's session lives in files under its backend root (CLAUDE_CONFIG_DIR,
  CODEX_HOME, pi's StateDir). The packer turns exactly those files into a blob and
  back, on another pod, whose root is wiped between visits (ADR-089 "Security (v4)",
  "Packer interface"). The kit plants the sessions, runs the implementation's
  pack, unpack and has-session commands, and reads blobs and trees itself. No row
  can pass because a root still held the transcript: every unpack lands in a pod
  that never held it. No refusal can pass because everything is refused: each runs
  its valid twin first (the control: the same session packed from a twin pod without
  the defect, the kit's valid blob of the same backend and id unpacked into a fresh
  pod, HasSession asked before the defect), and a refused twin makes the row
  inconclusive. The blobs unpacked here are written at run time from the profile's
  header member and the backend's layout, one defect each.

  @sp-header @sp-pin-header-member @sp-pin-blob-format @sp-whitelist @sp-hassession-root
  Scenario Outline: A <backend> session moves to a new pod whole
    Given pod "A" holds a <backend> session "<id>"
    And pod "A" holds the unlisted file "<unlisted>"
    When pod "A" packs its session
    Then the pack succeeds
    And the blob holds exactly the files of pod "A"'s session
    And the blob checker accepts the blob
    When pod "B" unpacks the blob as <backend> session "<id>"
    Then the unpack succeeds
    And pod "B" holds exactly the files of pod "A"'s session
    And pod "B" has <backend> session "<id>"
    And pod "C" has no <backend> session "<id>"

    Examples:
      | backend | id | unlisted |
      | claude_code | 6a73c0de-1234-4abc-8def-0123456789ab | projects/-work-demo/other-session.jsonl |
      | codex | 0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3 | sessions/2026/11/30/notes.txt |
      | pi | 5d41402abc4b2a76b9719d911017c592 | settings.json |

  @sp-canonical @should
  Scenario: Packing one session twice gives the same bytes
    Given pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    When pod "A" packs its session
    Then the pack succeeds
    And packing pod "A" again gives the same bytes

  @sp-header @sp-pin-header-member @sp-pin-blob-format @sp-no-auth
  Scenario Outline: Auth files not packed; ../ refused (<backend>)
    Given pod "A" holds a <backend> session "<id>"
    And pod "A" also holds the credential files
    When pod "A" packs its session
    Then the pack succeeds
    And the blob holds no credential file
    And the blob holds exactly the files of pod "A"'s session

    Examples:
      | backend | id |
      | claude_code | 6a73c0de-1234-4abc-8def-0123456789ab |
      | codex | 0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3 |
      | pi | 5d41402abc4b2a76b9719d911017c592 |

  # "whitelist session files only; never OAuth": whatever the unpack does with such a
  # member, refusing the blob or skipping the member, it never lands in the pod.
  @sp-no-auth @sp-whitelist
  Scenario Outline: A blob carrying a credential or an unlisted file is never unpacked (<case>)
    Given the control: the kit's valid claude_code blob of session "s1" is unpacked into a fresh pod
    When pod "B" unpacks a claude_code blob of session "s1" with the defect "<defect>"
    Then pod "B" holds no file the control's pod does not
    And nothing outside pod "B" changed

    Examples:
      | case | defect |
      | auth.json | auth-json |
      | .credentials.json | auth-credentials |
      | .claude.json | auth-claude-json |
      | unlisted file | not-whitelisted |
      | another backend's file | other-backend-layout |

  # Refusing the whole blob, rather than unpacking the session without the member, is
  # the kit's reading (docs/spec/persist-blob.md), a SHOULD.
  @sp-no-auth @sp-whitelist @should
  Scenario Outline: A blob carrying a credential or an unlisted file is refused whole (<case>)
    Given the control: the kit's valid claude_code blob of session "s1" is unpacked into a fresh pod
    When pod "B" unpacks a claude_code blob of session "s1" with the defect "<defect>"
    Then the unpack is refused
    And pod "B" is unchanged
    And pod "B" has no claude_code session "s1"

    Examples:
      | case | defect |
      | auth.json | auth-json |
      | .credentials.json | auth-credentials |
      | .claude.json | auth-claude-json |
      | unlisted file | not-whitelisted |
      | another backend's file | other-backend-layout |

  @sp-path-safety
  Scenario Outline: A session file that is <kind> is refused on pack
    Given pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    And pod "A"'s session file "<file>" is <kind>
    When pod "A" packs its session
    Then the pack is refused and no blob is left

    Examples:
      | kind | file |
      | a symlink to a file outside the pod | key |
      | a symlink to a file outside the pod | subagent |
      | a hard link | key |
      | a hard link | subagent |
      | a FIFO | subagent |
      | a socket | subagent |

  @sp-path-safety @needs-root
  Scenario: A session file that is a device is refused on pack
    Given pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    And pod "A"'s session file "subagent" is a device
    When pod "A" packs its session
    Then the pack is refused and no blob is left

  @sp-path-safety
  Scenario Outline: A blob whose member is <case> is refused on unpack and creates nothing
    Given the control: the kit's valid claude_code blob of session "s1" is unpacked into a fresh pod
    When pod "B" unpacks a claude_code blob of session "s1" with the defect "<defect>"
    Then the unpack is refused
    And pod "B" is unchanged
    And nothing outside pod "B" changed

    Examples:
      | case | defect |
      | ../x | path-dotdot |
      | /etc/x | path-absolute |
      | <id>/../../../../x below the session's directory | path-dotdot-interior |
      | <id>/sub/.. | path-dotdot-trailing |
      | a symlink | type-symlink |
      | a hard link | type-hardlink |
      | a FIFO | type-fifo |
      | a device | type-device |

    # Paths and framing the seed does not name ("no ../absolute/symlink/hardlink/
    # special"): empty and dot components, a backslash, a directory member, a file
    # and a directory of one name, a dangling GNU long name, a PAX global header, a
    # sparse member and a setuid mode are refused by the kit's strict reader
    # (docs/spec/persist-blob.md), a SHOULD; that none of them writes outside the pod
    # or leaves a special, setuid or setgid file is the next row's MUST.
    @should
    Examples:
      | case | defect |
      | a//b | path-empty-component |
      | ./x | path-dot-component |
      | <id>/./x | path-dot-interior |
      | <id>/sub/. | path-dot-trailing |
      | <id>//x | path-empty-interior |
      | <id>/sub/ | path-empty-trailing |
      | a\\b | path-backslash |
      | a directory | type-directory |
      | a file and a directory of one name | file-and-directory |
      | a GNU long name | type-gnu-longname-ustar-magic |
      | a PAX global header | type-pax-global |
      | a GNU sparse file | type-gnu-sparse |
      | setuid | setuid |
      | setgid | setgid |

  # "no ../absolute/symlink/hardlink/ special": whatever the unpack does with a member
  # the seed does not name, it writes nothing outside the pod and leaves no special
  # file and no setuid or setgid bit.
  @sp-path-safety
  Scenario Outline: A blob whose member is <case> leaves no special, setuid or setgid file
    Given the control: the kit's valid claude_code blob of session "s1" is unpacked into a fresh pod
    When pod "B" unpacks a claude_code blob of session "s1" with the defect "<defect>"
    Then no file in pod "B" is special or has a setuid or setgid bit
    And nothing outside pod "B" changed

    Examples:
      | case | defect |
      | a//b | path-empty-component |
      | ./x | path-dot-component |
      | <id>/./x | path-dot-interior |
      | <id>/sub/. | path-dot-trailing |
      | <id>//x | path-empty-interior |
      | <id>/sub/ | path-empty-trailing |
      | a\\b | path-backslash |
      | a directory | type-directory |
      | a file and a directory of one name | file-and-directory |
      | a GNU long name | type-gnu-longname-ustar-magic |
      | a PAX global header | type-pax-global |
      | a GNU sparse file | type-gnu-sparse |
      | setuid | setuid |
      | setgid | setgid |

  # The seed asks for size and count caps, not their values ("numeric caps from
  # tool-blob ceiling"): the inputs are one over the profile's [persist.pins] caps
  # (sp-pin-caps), the kit's when undeclared; the case names say the kit's numbers.
  # A refusal is the seed's: a packer without caps fails these rows.
  @sp-caps @sp-no-truncate @sp-pin-caps
  Scenario Outline: A session over a cap is refused whole (<case>)
    Given pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    And pod "A"'s session is one over the <cap> cap
    When pod "A" packs its session
    Then the pack is refused and no blob is left

    Examples:
      | case | cap |
      | 65 files | file count |
      | a file of 16 MiB + 1 | file size |
      | 32 MiB + 1 in all | total size |

  # At the profile's count cap (the kit's 64 files when undeclared); a packer with
  # smaller caps than it declares may refuse this session (SHOULD).
  @sp-header @sp-pin-header-member @sp-caps @should @sp-pin-caps
  Scenario: A session at the caps packs and moves whole
    Given pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    And pod "A"'s session is at the file count cap
    When pod "A" packs its session
    Then the pack succeeds
    And the blob holds exactly the files of pod "A"'s session
    When pod "B" unpacks the blob as claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    Then the unpack succeeds
    And pod "B" holds exactly the files of pod "A"'s session

  # The first examples are one over the profile's [persist.pins] caps (sp-pin-caps),
  # the kit's when undeclared; the case and defect names say the kit's numbers.
  @sp-caps
  Scenario Outline: A blob over a cap is refused on unpack (<case>)
    Given the control: the kit's valid claude_code blob of session "s1" is unpacked into a fresh pod
    When pod "B" unpacks a claude_code blob of session "s1" with the defect "<defect>"
    Then the unpack is refused
    And pod "B" is unchanged
    And nothing outside pod "B" changed

    @sp-pin-caps
    Examples: over the profile's caps
      | case | defect |
      | 65 members | members-65 |
      | a member of 16 MiB + 1 | member-16mib-plus-1 |
      | 32 MiB + 1 in all, each member under 16 MiB | members-total-32mib-plus-1 |

    Examples: sizes that lie
      | case | defect |
      | a size past the end | size-past-end |
      | a PAX size lie | pax-size-lie |

  @sp-header
  Scenario Outline: A blob for another session leaves the root unchanged (<case>)
    Given the control: the kit's valid <backend> blob of session "<other>" is unpacked into a fresh pod
    And pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    And pod "B" holds a claude_code session "<other>"
    When pod "A" packs its session
    Then the pack succeeds
    When pod "B" unpacks the blob as <backend> session "<other>"
    Then the unpack is refused
    And pod "B" is unchanged
    And pod "B" has <backend> session "<other>"

    Examples:
      | case | backend | other |
      | another id | claude_code | 9f8e7d6c-1234-4abc-8def-0123456789ab |

  @sp-header
  Scenario Outline: A valid blob unpacked as another <what> into a fresh pod is refused and writes nothing (<from> as <as>)
    # Only the header differs from the request: the members fit the header's own
    # backend and id, and the pod holds nothing that could refuse it for another reason.
    Given the control: the kit's valid <from> blob of session "<id>" is unpacked into a fresh pod
    When pod "B" unpacks the kit's valid <from> blob of session "<id>" as <as> session "<as_id>"
    Then the unpack is refused
    And pod "B" is unchanged
    And nothing outside pod "B" changed
    And pod "B" has no <as> session "<as_id>"

    Examples:
      | what | from | as | id | as_id |
      | backend | claude_code | codex | 6a73c0de-1234-4abc-8def-0123456789ab | 6a73c0de-1234-4abc-8def-0123456789ab |
      | backend | codex | pi | 6a73c0de-1234-4abc-8def-0123456789ab | 6a73c0de-1234-4abc-8def-0123456789ab |
      | backend | pi | claude_code | 6a73c0de-1234-4abc-8def-0123456789ab | 6a73c0de-1234-4abc-8def-0123456789ab |
      | session | claude_code | claude_code | 6a73c0de-1234-4abc-8def-0123456789ab | 9f8e7d6c-1234-4abc-8def-0123456789ab |

  @sp-header
  Scenario Outline: A blob whose header is wrong is refused (<case>)
    Given the control: the kit's valid <backend> blob of session "<id>" is unpacked into a fresh pod
    When pod "B" unpacks a <backend> blob of session "<id>" with the defect "<defect>"
    Then the unpack is refused
    And pod "B" is unchanged
    And pod "B" has no <backend> session "<id>"

    Examples:
      | case | defect | backend | id |
      | header missing | header-missing | claude_code | s1 |
      | header for another id | header-mismatched | claude_code | s2 |
      | header for another backend | header-other-backend | codex | s1 |

    # The seed names the header's two members, not its place, its count or a
    # closed shape: a header that still says the requested backend and id, second,
    # twice, with a key more or one key twice, is the kit's one-reading-per-blob
    # rule (docs/spec/persist-blob.md), a SHOULD.
    @should
    Examples:
      | case | defect | backend | id |
      | header second | header-second | claude_code | s1 |
      | header twice | header-twice | claude_code | s1 |
      | header with an extra key | header-extra-key | claude_code | s1 |
      | header with a duplicate key | header-duplicate-key | claude_code | s1 |

  @sp-temp-rename
  Scenario: Unpack crashed at each rename leaves no HasSession or the whole session
    Given pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    When pod "A" packs its session
    Then the pack succeeds
    When pod "B" unpacks the blob as claude_code session "6a73c0de-1234-4abc-8def-0123456789ab" crashing at each rename in turn
    Then the unpack was crashed at 1 rename at least
    And every crash left the pod without the session or with all of it
    And the unpack that was not crashed left the whole session

  # The seed defines HasSession as whether the session is in the live root, and its
  # link and special-file rules are the blob's; a key file that is a link or a FIFO
  # read as no session is the kit's reading (SHOULD).
  @sp-hassession-root @should
  Scenario Outline: HasSession is false when the key file is not a plain file (<kind>)
    Given pod "B" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    And pod "B"'s session file "key" is <kind>
    Then pod "B" has no claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"

    Examples:
      | kind |
      | a symlink to a file outside the pod |
      | a hard link |
      | a FIFO |

  @sp-hassession-root @sp-path-safety
  Scenario Outline: A session whose <place> is a symlink to a directory outside the pod is refused on pack
    Given pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    And pod "A"'s <place> is a symlink to a directory outside the pod holding the session's files
    When pod "A" packs its session
    Then the pack is refused and no blob is left
    And pod "A" has no claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"

    Examples:
      | place |
      | project dir |

    # A backend root that is itself a link (a symlinked ~/.claude) is a common setup;
    # the seed's "no symlink" is about session files, so refusing it is the kit's
    # reading (SHOULD).
    @should
    Examples:
      | place |
      | root |

  @sp-path-safety
  Scenario: A session whose subtree dir is a symlink to a directory outside the pod is refused on pack
    Given pod "A" holds a claude_code session "6a73c0de-1234-4abc-8def-0123456789ab"
    And pod "A"'s subtree dir is a symlink to a directory outside the pod holding the session's files
    When pod "A" packs its session
    Then the pack is refused and no blob is left

  @sp-hassession-root
  Scenario: A wiped root has no session
    Given pod "B" holds a codex session "0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3"
    And pod "B" is wiped
    Then pod "B" has no codex session "0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3"
