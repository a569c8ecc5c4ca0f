@rfc-8-credentials @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Credentials
  RFC §5: each daemon start has fresh authority; old owner and bearer tokens fail
  denied.token and never fall back to unknown; registry entries are not recreated;
  restore imports no ownership or self grants. RFC §1: the owner token is a human
  opt-in, so a generated agent skill never recommends it (docs/spec/recovery-skill.md).

  @rfc-5-invalid-auth-no-unknown
  Scenario: A restarted daemon issues a new owner token and denies the old one
    Given a daemon started with the default configuration
    And the owner token is remembered as $old
    When the daemon is restarted on the same socket
    Then the owner token differs from $old
    When a client with token "$old" calls "session.list"
    Then the call fails with "denied.token"
    And the refusal's control, the same call by the owner, succeeds

  @rfc-5-no-old-registry @rfc-5-invalid-auth-no-unknown
  Scenario: A bearer token issued by the old daemon is denied by the new one
    Given a daemon started with recovery enabled
    When the owner calls "grant.issue" with {"grants":["read@server:root"]}
    Then the call succeeds
    And the result "token" is saved as $bearer
    When a client with token "$bearer" calls "session.list"
    Then the call succeeds
    When the daemon is restarted on the same socket
    And a client with token "$bearer" calls "session.list"
    Then the call fails with "denied.token"
    And the refusal's control, the same call by the owner, succeeds

  @rfc-5-no-old-registry
  Scenario: Restored resources are owned by the restoring principal only
    Given checkpoint "f2" of format 2 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f2"}
    Then the call succeeds
    When an unauthenticated client calls "pane.send" with {"pane":"p0","text":"x"}
    Then the call fails with a code starting "denied."
    And the refusal's control, the same call by the owner, is not denied

  @rfc-1-skill-no-owner @optional-skill
  Scenario: The generated agent skill never recommends the owner sentinel and names every required point
    When the implementation's agent skill is generated
    Then the skill contains no "@owner" in any letter case
    And the skill has a heading for each required point:
      | point                 | heading                                         |
      | archives              | Restored panes are archives                     |
      | fresh-argv-grants     | Relaunch takes a fresh argv and fresh grants    |
      | lost-reply            | After a lost reply, inspect before retrying     |
      | no-automatic-recovery | Nothing is restored or relaunched automatically |
      | text-privacy          | Terminal text is stored only on opt-in          |
      | process-limits        | No process survives a restore                   |
      | verbs-not-attach      | Use verbs and events, not attach                |
