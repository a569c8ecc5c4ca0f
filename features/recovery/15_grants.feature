@rfc-8-grants @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file
Feature: Grants
  RFC §6: every recovery verb needs admin; pane.relaunch needs spawn and write on the
  pane, checked before archive lookup; the unknown principal stays read-only at most.

  Scenario Outline: The unknown principal cannot use recovery verbs
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When an unauthenticated client calls "<verb>" with <params>
    Then the call fails with "denied.admin"
    When the owner calls "session.list"
    Then the result "sessions" is []
    And the store still holds the file of "f1"
    And the refusal's control, the same call by the owner, succeeds

    Examples:
      | verb                | params                  |
      | recovery.list       | {}                      |
      | recovery.inspect    | {"checkpoint":"$f1"}    |
      | recovery.checkpoint | {}                      |
      | recovery.restore    | {"checkpoint":"$f1"}    |
      | recovery.forget     | {"checkpoint":"$f1"}    |

  Scenario Outline: A scoped non-admin token cannot use recovery verbs
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "grant.issue" with {"grants":["read@server:root","write@server:root","spawn@server:root"]}
    And the result "token" is saved as $scoped
    And a client with token "$scoped" calls "<verb>" with <params>
    Then the call fails with "denied.admin"
    And the refusal's control, the same call by the owner, succeeds

    Examples:
      | verb             | params               |
      | recovery.list    | {}                   |
      | recovery.restore | {"checkpoint":"$f1"} |
      | recovery.forget  | {"checkpoint":"$f1"} |

  Scenario: The unknown principal stays read-only: it cannot create, spawn or reconfigure
    Given a daemon started with the default configuration
    When an unauthenticated client calls "session.create" with {"name":"x"}
    Then the call fails with a code starting "denied."
    When the owner calls "session.list"
    Then the result "sessions" is []
    And the refusal's control, the same call by the owner, succeeds
    When an unauthenticated client calls "config.set" with {"key":"recovery.enabled","value":false}
    Then the call fails with a code starting "denied."
    And the refusal's control, the same call by the owner, succeeds

  @rfc-6-relaunch-write-first
  Scenario: Relaunch without write on the pane is denied before archive lookup
    Given a daemon started with recovery enabled
    When the owner calls "grant.issue" with {"grants":["spawn@server:root"]}
    And the result "token" is saved as $spawner
    And a client with token "$spawner" calls "pane.relaunch" with {"pane":"p999","argv":["/bin/sh"],"ack_orphans":true}
    Then the call fails with "denied.write"
    And the refusal's control, the same call by the owner, is not denied

  @rfc-6-relaunch-write-first
  Scenario Outline: Relaunch needs both spawn and write on the archive
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the result "panes.0.current" is saved as $archive
    And the owner calls "grant.issue" with {"grants":[<grants>]}
    And the result "token" is saved as $scoped
    And a client with token "$scoped" calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}
    Then the call fails with "<code>"
    And the daemon has no child processes
    When the owner calls "pane.list"
    Then the result "panes.0.pane" is "$archive"
    And the refusal's control, the same call by the owner, succeeds

    Examples:
      | grants                                        | code         |
      | "write@pane:$archive"                         | denied.spawn |
      | "spawn@pane:$archive"                         | denied.write |
      | "read@server:root"                            | denied.spawn |

  Scenario: Relaunch cannot hand the child more rights than the caller holds
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the result "panes.0.current" is saved as $archive
    And the owner calls "grant.issue" with {"grants":["spawn@pane:$archive","write@pane:$archive"]}
    And the result "token" is saved as $scoped
    And a client with token "$scoped" calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true,"grants":["admin@server:root"]}
    Then the call fails with a code starting "denied."
    And the daemon has no child processes
    And the refusal's control, the same call with {"pane":"$archive","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true,"grants":["write@pane:$archive"]}, succeeds

  # The seed's relaunch result names its "principal"; the owner's own is read by a
  # verb of another RFC (RFC-0005), so freshness is judged between two relaunches.
  Scenario: A relaunched pane gets a fresh principal of its own
    Given checkpoint "f3" of format 3 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f3"}
    And the result "panes.0.current" is saved as $first
    And the result "panes.1.current" is saved as $second
    And the owner calls "pane.relaunch" with {"pane":"$first","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}
    Then the call succeeds
    And the result "principal" has JSON type "string"
    And the result "principal" is saved as $child
    When the owner calls "pane.relaunch" with {"pane":"$second","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}
    Then the call succeeds
    And the result "principal" is not "$child"

  Scenario: Relaunch requires a true acknowledgement
    Given checkpoint "f1" of format 1 with generation 1 is planted in the store
    And a daemon started with recovery enabled
    When the owner calls "recovery.restore" with {"checkpoint":"$f1"}
    And the result "panes.0.current" is saved as $archive
    And the owner calls "pane.relaunch" with {"pane":"$archive","argv":["/bin/sh"],"ack_orphans":false}
    Then the call fails with "invalid_params.ack_orphans"
    And the refusal's control, the same call with {"pane":"$archive","argv":["/bin/sh","-c","sleep 60"],"ack_orphans":true}, succeeds
