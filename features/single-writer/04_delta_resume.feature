@must @part-checker @sw-pin-checker-verdict
Feature: Delta resume
  A reconnecting viewer resumes from the bytes it has when the master still holds
  them in its ring and the generation matches; otherwise it gets the whole ring (or
  a fresh start), never a silent gap and never bytes from another generation. Judged
  by the implementation's offline resume planner on the kit's corpus
  (corpus/broker/resume/: have gen total ring_len master_gen, "-" for absent).

  @sw-delta
  Scenario Outline: A delta resumes from the bytes the viewer has: <case>
    When the resume planner reads the corpus case "<file>"
    Then the plan is "delta" from <from>

    Examples:
      | case | file | from |
      | delta | resume/delta.txt | 100 |
      | delta-empty | resume/delta-empty.txt | 150 |
      | delta-absent-gen | resume/delta-absent-gen.txt | 100 |
      | delta-ring-edge | resume/delta-ring-edge.txt | 70 |
      | delta-whole-ring | resume/delta-whole-ring.txt | 1 |
      | delta-max-safe | resume/delta-max-safe.txt | 9007199254740991 |
      | delta-empty-ring-at-total | resume/delta-empty-ring-at-total.txt | 10 |

  @sw-delta
  Scenario Outline: Anything else is a fresh start or the whole ring: <case>
    When the resume planner reads the corpus case "<file>"
    Then the plan is "<plan>"

    Examples:
      | case | file | plan |
      | fell-behind | resume/fell-behind.txt | fell_behind |
      | fell-behind-empty-ring | resume/fell-behind-empty-ring.txt | fell_behind |
      | fresh-absent | resume/fresh-absent.txt | fresh |
      | fresh-zero | resume/fresh-zero.txt | fresh |
      | fresh-empty-master | resume/fresh-empty-master.txt | fresh |
      | full-have-beyond-total | resume/full-have-beyond-total.txt | full |
      | full-have-beyond-empty | resume/full-have-beyond-empty.txt | full |

    # The seed has no generation: a mismatch forcing a full replay is the kit's reading (SHOULD).
    @should
    Examples:
      | case | file | plan |
      | fresh-zero-gen-mismatch | resume/fresh-zero-gen-mismatch.txt | fresh |
      | full-gen-mismatch | resume/full-gen-mismatch.txt | full |
      | full-gen-mismatch-at-total | resume/full-gen-mismatch-at-total.txt | full |

  # The seed refuses no counter ("Else → full replay") and has no generation: the
  # planner's usage errors are the kit's reading (SHOULD).
  @sw-delta @should
  Scenario Outline: A malformed counter is a usage error naming the parameter
    When the resume planner reads the corpus case "<file>"
    Then the planner refuses it with "<result>" by rule "<rule>"

    Examples:
      | case | file | result | rule |
      | have-negative | resume/have-negative.txt | invalid_params.have | counter.syntax |
      | have-fraction | resume/have-fraction.txt | invalid_params.have | counter.syntax |
      | have-leading-zero | resume/have-leading-zero.txt | invalid_params.have | counter.syntax |
      | gen-unsafe | resume/gen-unsafe.txt | invalid_params.gen | counter.range |
      | total-hex | resume/total-hex.txt | invalid_params.total | counter.syntax |
      | ring-exceeds-total | resume/ring-exceeds-total.txt | invalid_params.ring_len | resume.ring_exceeds_total |
