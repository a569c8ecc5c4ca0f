@must @part-store
Feature: The blob store, on the filesystem and on the S3 twins
  "BackendSessionStore: fs + S3/mongo twin, Get before Execute, DeleteRun sweeps, both
  backends in storetest." The kit runs one store conformance suite itself, request by
  request, through the implementation's store adapter (docs/spec/persist-store-adapter.md),
  on its filesystem store and on each S3 twin the profile names (SeaweedFS 4.48 and
  moto 5.2.1 on loopback, started by .ci/run). Refs are `<node>/<ulid>` and
  `<node>/pause/<ulid>`; every scenario uses a run id of its own.

  @sp-store-twins
  Scenario Outline: Put then get returns the same bytes (<store>)
    Given the <store> store behind the implementation's adapter
    When blob "first" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    Then the store succeeds
    And getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" gives blob "first"

    Examples:
      | store |
      | fs |

    @twin-seaweedfs
    Examples: SeaweedFS
      | store |
      | seaweedfs |

    @twin-moto
    Examples: moto
      | store |
      | moto |

  @sp-store-immutable
  Scenario Outline: A second put under one ref is refused and keeps the first (<store>)
    Given the <store> store behind the implementation's adapter
    When blob "first" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    And blob "second" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    Then the store refuses it with "conflict.exists"
    And getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" gives blob "first"

    Examples:
      | store |
      | fs |

    @twin-seaweedfs
    Examples: SeaweedFS
      | store |
      | seaweedfs |

    @twin-moto
    Examples: moto
      | store |
      | moto |

  @sp-store-immutable
  Scenario Outline: A put committed whose reply was lost is still create-only (<store>)
    Given the <store> store behind the implementation's adapter
    And the reply to the next put is lost on the way back
    When blob "first" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    Then the store reports a failure
    When blob "second" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    Then the store refuses it with "conflict.exists"
    And getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" gives blob "first"

    @twin-seaweedfs
    Examples: SeaweedFS
      | store |
      | seaweedfs |

    @twin-moto
    Examples: moto
      | store |
      | moto |

  @sp-store-twins
  Scenario Outline: Get of a missing ref, and refs that are not refs (<store>)
    Given the <store> store behind the implementation's adapter
    Then getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8V" is refused with "not_found.blob"
    And getting "writer/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8V" is refused with "not_found.blob"
    And getting "../x" is refused with "invalid_params.ref"
    And getting "writer/01j9zq4v7x8m2k3n4p5q6r7s8v" is refused with "invalid_params.ref"
    When blob "first" is put under "writer/a/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    Then the store refuses it with "invalid_params.ref"

    Examples:
      | store |
      | fs |

    @twin-seaweedfs
    Examples: SeaweedFS
      | store |
      | seaweedfs |

    @twin-moto
    Examples: moto
      | store |
      | moto |

  @sp-deleterun
  Scenario Outline: Pause and completed refs are distinct, and a deleted one is gone (<store>)
    Given the <store> store behind the implementation's adapter
    When blob "slot" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    And blob "pause" is put under "writer/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    Then getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" gives blob "slot"
    And getting "writer/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" gives blob "pause"
    When "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" is deleted
    Then the store succeeds
    And getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" is refused with "not_found.blob"
    And getting "writer/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" gives blob "pause"

    Examples:
      | store |
      | fs |

    @twin-seaweedfs
    Examples: SeaweedFS
      | store |
      | seaweedfs |

    @twin-moto
    Examples: moto
      | store |
      | moto |

  # The seed's Delete is "best-effort"; a second Delete of a gone ref succeeding, rather
  # than reporting not found, is the kit's reading (SHOULD).
  @sp-deleterun @should
  Scenario Outline: Deleting a ref twice succeeds (<store>)
    Given the <store> store behind the implementation's adapter
    When blob "slot" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    And "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" is deleted
    Then the store succeeds
    When "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" is deleted
    Then the store succeeds

    Examples:
      | store |
      | fs |

    @twin-seaweedfs
    Examples: SeaweedFS
      | store |
      | seaweedfs |

    @twin-moto
    Examples: moto
      | store |
      | moto |

  @sp-deleterun
  Scenario Outline: DeleteRun sweeps every blob of the run and only that run (<store>)
    Given the <store> store behind the implementation's adapter
    When blob "slot" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    And blob "pause" is put under "writer/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8W"
    And blob "other" is put under "reader/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    And blob "kept" is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" in the other run
    And the run is deleted
    Then the store succeeds
    And getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" is refused with "not_found.blob"
    And getting "writer/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8W" is refused with "not_found.blob"
    And getting "reader/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" is refused with "not_found.blob"
    And getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" in the other run gives blob "kept"
    When the run is deleted
    Then the store succeeds
    When the other run is deleted
    Then the store succeeds

    Examples:
      | store |
      | fs |

    @twin-seaweedfs
    Examples: SeaweedFS
      | store |
      | seaweedfs |

    @twin-moto
    Examples: moto
      | store |
      | moto |

  # The seed gives the store no size cap; the kit's adapter refuses one (SHOULD).
  @sp-store-twins @should
  Scenario Outline: A blob over the cap is refused before it is stored (<store>)
    Given the <store> store behind the implementation's adapter
    When a blob one byte over the cap is put under "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    Then the store refuses it with "unsupported.blob_size"
    And getting "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T" is refused with "not_found.blob"

    Examples:
      | store |
      | fs |

    @twin-moto
    Examples: moto
      | store |
      | moto |
