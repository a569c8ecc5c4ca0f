@must @part-packer
Feature: Decoys beside a session, and two key files for one id
  A live root holds more than the session: files that carry its id in their names
  but are no session file of the backend's layout (todo lists, shell snapshots, JSON
  beside the projects, archived and temp copies of a rollout, another backend's
  paths) and credential files inside the session's own directory. Pack takes exactly
  the layout's session files, by layout and never by file name. Two key files for one
  id (another project's copy, another day's) are ambiguous as the kit pins it
  (sp-pin-ambiguous-key): HasSession false, pack refused, an unpack beside the other
  copy refused with the root unchanged (which then still holds that one copy, a
  session HasSession may see); an implementation that reads it otherwise is
  non-strict. Each refusal runs its control first (HasSession before the copy, the
  pack of a twin pod without it, the valid blob into a fresh pod).

  @sp-header @sp-pin-header-member @sp-whitelist @sp-no-auth
  Scenario Outline: Files that carry the session id are not packed unless the layout lists them (<backend>)
    Given pod "A" holds a <backend> session "<id>"
    And pod "A" also holds decoys of its session
    When pod "A" packs its session
    Then the pack succeeds
    And the blob holds no credential file
    And the blob holds exactly the files of pod "A"'s session

    Examples:
      | backend | id |
      | claude_code | 6a73c0de-1234-4abc-8def-0123456789ab |
      | codex | 0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3 |
      | pi | 5d41402abc4b2a76b9719d911017c592 |

  @sp-hassession-root @sp-pin-ambiguous-key
  Scenario Outline: Two key files for one id: HasSession does not guess and pack refuses (<backend>)
    Given pod "A" holds a <backend> session "<id>"
    And pod "A" also holds a copy of its key file at another path of the layout
    Then pod "A" has no <backend> session "<id>", as the kit pins for two key files
    When pod "A" packs its session
    Then the pack is refused, as the kit pins for two key files

    Examples:
      | backend | id |
      | claude_code | 6a73c0de-1234-4abc-8def-0123456789ab |
      | codex | 0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3 |
      | pi | 5d41402abc4b2a76b9719d911017c592 |

  @sp-temp-rename @sp-pin-ambiguous-key
  Scenario Outline: Unpack beside another key file of the id is refused and changes nothing (<backend>)
    Given the control: the kit's valid <backend> blob of session "<id>" is unpacked into a fresh pod
    And pod "B" holds the <backend> session "<id>"'s key file at another path of the layout
    When pod "B" unpacks the kit's valid <backend> blob of session "<id>" within its bound
    Then the unpack is refused and pod "B" is unchanged, as the kit pins for two key files
    And nothing outside pod "B" changed

    Examples:
      | backend | id |
      | claude_code | 6a73c0de-1234-4abc-8def-0123456789ab |
      | codex | 0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3 |
      | pi | 5d41402abc4b2a76b9719d911017c592 |
