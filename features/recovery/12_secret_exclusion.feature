@rfc-8-secret-exclusion @must @rfc-pin-wire-protocol @rfc-pin-owner-token @rfc-pin-config-file @rfc-pin-secret-scan-scope
Feature: Secret exclusion
  RFC §4 writer allowlist, §6 error rules, and the 2026-11-10 argv0 exception: only the
  basename of argv[0] (at most 255 bytes) may appear, in pane.list, pane.created and
  the pane entity; the directory part of argv[0], other argv elements, cwd and
  environment appear nowhere.

  Scenario: pane.list shows the basename of argv[0] and nothing else of argv
    Given an executable "canaryshell" in a directory named "DIR-CANARY-1"
    And a daemon started with the default configuration
    And the owner has created session "work" with a pane running argv ["$exe", "-c", "sleep 60", "ARG-CANARY-2"]
    When the owner calls "pane.list"
    Then the call succeeds
    And the result "panes.0.argv0" is "canaryshell"
    When the owner calls "pane.capture" with {"pane":"$pane"}
    Then the call succeeds
    And no reply, error or written file contains "DIR-CANARY-1"
    And no reply, error or written file contains "ARG-CANARY-2"

  Scenario Outline: Errors never echo argv, tokens or params
    Given a daemon started with the default configuration
    And the owner has created session "work" with an empty window
    When <who> calls "<verb>" with <params>
    Then the call fails with a code starting "<code>"
    And no reply, error or written file contains "<canary>"
    And the refusal's control, <control>, succeeds

    Examples:
      | who                       | verb         | params                                                                | code     | canary           | control |
      | the owner                 | pane.create  | {"window":"$window","argv":["/nonexistent/EXEC-CANARY-3/prog","x"]}  | unavail  | EXEC-CANARY-3    | the same call with {"window":"$window","argv":["/bin/sh","-c","sleep 60"]} |
      | the owner                 | pane.create  | {"window":"$window","argv":["/bin/sh",7,"NUM-CANARY-4"]}             | invalid  | NUM-CANARY-4     | the same call with {"window":"$window","argv":["/bin/sh","-c","sleep 60"]} |
      | a client with token "TOKEN-CANARY-6" | session.list | {}                                                    | denied   | TOKEN-CANARY-6   | the same call by the owner |

  Scenario: An unknown pane's error never echoes the text sent to it
    Given a daemon started with the default configuration
    And the owner has created session "work" with a pane running "sleep 60"
    When the owner calls "pane.send" with {"pane":"p999","text":"SEND-CANARY-5"}
    Then the call fails with a code starting "not_found"
    And no reply, error or written file contains "SEND-CANARY-5"
    And the refusal's control, the same call with {"pane":"$pane","text":"x"}, succeeds

  @rfc-4-writer-allowlist @rfc-2-no-secrets-checkpointed
  Scenario: A checkpoint holds no token, environment, argv, argv0, cwd or PID
    Given the daemon environment has VXCERT_SECRET=ENV-CANARY-7
    And a daemon started with recovery enabled
    And the owner token is remembered as $token
    And the owner has created session "work" with a pane running argv ["/bin/sh", "-c", "sleep 60", "ARG-CANARY-8"]
    When the owner calls "recovery.checkpoint"
    Then the call succeeds
    And no store file contains "ENV-CANARY-7"
    And no store file contains "ARG-CANARY-8"
    And no store file contains "$token"
    And no store file contains "argv0"
    And no store file contains "/bin/sh"
    And no store file holds the number "$pid"

  Scenario: Doctor output holds no argv or token
    Given a daemon started with recovery enabled
    And the owner token is remembered as $token
    And the owner has created session "work" with a pane running argv ["/bin/sh", "-c", "sleep 60", "ARG-CANARY-9"]
    When the owner calls "doctor"
    Then the call succeeds
    And no reply, error or written file contains "ARG-CANARY-9"
    And the transcript contains "recovery"
