@must @part-checker @sp-pin-checker-verdict
Feature: The offline blob checker
  The implementation's blob checker (`[persist].blob_check`, `{file}`) judges each blob
  of the kit's fixed corpus (corpus/persist/blobs/, verdicts from an independent
  generator, generate.py): valid blobs are valid; every other blob is refused, after
  the checker first accepted a valid twin in the same scenario (else the refusal
  proves nothing: inconclusive). The verdict line `{"file","result","rule","reason"}`,
  its codes and rule ids are the kit's (sp-pin-checker-verdict): a profile with
  `verdict_only = true` is judged by valid/invalid alone. Framing rules the seed does
  not state (exactly two zero blocks, PAX records) are the kit's reading of the
  format (sp-pin-blob-format): a checker that accepts such a blob is non-strict.

  @sp-whitelist @sp-header
  Scenario Outline: A valid blob is read as valid (<file>)
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker says it is valid

    Examples:
      | file |
      | valid-64-members.tar |
      | valid-claude_code.tar |
      | valid-codex.tar |
      | valid-go-writer-long-paths.tar |
      | valid-pi.tar |

  @sp-header
  Scenario Outline: A blob whose header names another session is valid on its own (<file>)
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker says it is valid

    Examples:
      | file |
      | header-mismatched.tar |
      | header-other-backend.tar |

  @sp-path-safety
  Scenario Outline: A blob whose member path is unsafe is refused (<file>)
    Given the control: the blob checker reads the valid corpus blob "<twin>"
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | file | twin | result | rule |
      | path-absolute.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.path |
      | path-dotdot.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.path |

    # The seed names ../ and absolute paths; a backslash, an empty or dot component, a
    # non-UTF-8 path, a NUL and the kit's component and depth caps are its reader's
    # reading (docs/spec/persist-blob.md), a SHOULD.
    @should
    Examples:
      | file | twin | result | rule |
      | path-backslash.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.path |
      | path-component-256.tar | valid-go-writer-long-paths.tar | conflict.blob_corrupt | blob.path |
      | path-depth-17.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.path |
      | path-dot-component.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.path |
      | path-empty-component.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.path |
      | path-not-utf8.tar | valid-go-writer-long-paths.tar | conflict.blob_corrupt | blob.path |
      | path-nul-in-pax.tar | valid-go-writer-long-paths.tar | conflict.blob_corrupt | blob.path |

  @sp-path-safety
  Scenario Outline: A blob with a member that is not a regular file is refused (<file>)
    Given the control: the blob checker reads the valid corpus blob "<twin>"
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | file | twin | result | rule |
      | type-device.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.type |
      | type-fifo.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.type |
      | type-hardlink.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.type |
      | type-symlink.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.type |

    # The seed names symlinks, hard links and special files; a directory member and
    # tar framing it does not name (a dangling GNU long name, a sparse member, a PAX
    # global header) are the kit's strict reading, a SHOULD.
    @should
    Examples:
      | file | twin | result | rule |
      | type-directory.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.type |
      | type-gnu-longname-ustar-magic.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.type |
      | type-gnu-sparse.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.type |
      | type-pax-global.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.type |

  # The seed names no mode bits: a setuid or setgid member's refusal is the kit's reading
  # (SHOULD); 01_packer's MUST row holds that an unpack leaves no such bit.
  @sp-path-safety @should
  Scenario Outline: A blob with a setuid or setgid member is refused (<file>)
    Given the control: the blob checker reads the valid corpus blob "<twin>"
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | file | twin | result | rule |
      | setgid.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.mode |
      | setuid.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.mode |

  @sp-no-auth @sp-whitelist
  Scenario Outline: A blob carrying a credential or an unlisted file is refused (<file>)
    Given the control: the blob checker reads the valid corpus blob "<twin>"
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | file | twin | result | rule |
      | auth-claude-json.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.not_session_file |
      | auth-credentials.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.not_session_file |
      | auth-json.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.not_session_file |
      | not-whitelisted.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.not_session_file |
      | other-backend-layout.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.not_session_file |

  @sp-header
  Scenario Outline: A blob whose header or key file is wrong is refused (<file>)
    Given the control: the blob checker reads the valid corpus blob "<twin>"
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | file | twin | result | rule |
      | header-kimi.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |
      | header-missing.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |
      | no-key-file.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |

    # The seed names the header's two members; its place, count, closed shape and
    # size, and one reading per member path, are the kit's (docs/spec/persist-blob.md),
    # a SHOULD.
    @should
    Examples:
      | file | twin | result | rule |
      | duplicate-member.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |
      | file-and-directory.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |
      | header-duplicate-key.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |
      | header-extra-key.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |
      | header-over-4kib.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |
      | header-second.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |
      | header-twice.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.header |

  # The corpus is fixed at the kit's caps: a profile that declares a larger cap in
  # [persist.pins] (sp-pin-caps) gets `inconclusive` where its checker accepts the
  # blob, which is within that cap.
  @sp-caps
  Scenario Outline: A blob over a cap is refused (<file>)
    Given the control: the blob checker reads the valid corpus blob "<twin>"
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker refuses it with "<result>" by rule "<rule>"

    Examples:
      | file | twin | result | rule |
      | member-16mib-plus-1.tar | valid-claude_code.tar | unsupported.blob_size | blob.caps |
      | members-65.tar | valid-64-members.tar | unsupported.blob_size | blob.caps |
      | size-past-end.tar | valid-claude_code.tar | unsupported.blob_size | blob.caps |

  @sp-pin-blob-format
  Scenario Outline: A blob outside the kit's framing is refused (<file>)
    Given the control: the blob checker reads the valid corpus blob "<twin>"
    When the blob checker reads the corpus blob "<file>"
    Then the blob checker refuses it as the kit reads the format, with "<result>" by rule "<rule>"

    Examples:
      | file | twin | result | rule |
      | bad-checksum.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.framing |
      | empty-file.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.framing |
      | gnu-magic-longname.tar | valid-go-writer-long-paths.tar | conflict.blob_corrupt | blob.framing |
      | no-end-blocks.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.framing |
      | one-end-block.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.framing |
      | pax-at-end.tar | valid-go-writer-long-paths.tar | conflict.blob_corrupt | blob.framing |
      | pax-short-path.tar | valid-go-writer-long-paths.tar | conflict.blob_corrupt | blob.framing |
      | pax-size-lie.tar | valid-go-writer-long-paths.tar | conflict.blob_corrupt | blob.framing |
      | pax-unknown-key.tar | valid-go-writer-long-paths.tar | conflict.blob_corrupt | blob.framing |
      | tarfile-record-padding.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.framing |
      | trailing-garbage.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.framing |
      | trailing-zero-block.tar | valid-claude_code.tar | conflict.blob_corrupt | blob.framing |
