#!/usr/bin/env python3
"""The broker peer's setup hook ([single_writer] setup in profile.toml): writes the
suite's engine fixture in the peer's own engines format, a JSON file, before the
broker starts. A TEST SUBJECT's helper (peers/README.md).

  setup_engines.py OUT AGENT HISTORY MISSING_PROGRAM

The fixture (the kit's docs/spec/single-writer.md "Certification"): `claude` takes
the id the broker mints (uuid), `opencode` mints its own (ses_…, listed in its index);
both run the kit's stand-in agent, `AGENT agent --engine E [--id I] --history H
[--resume] [--index F]`. The peer knows no engine named as the kit's fixture names
its missing program (`ghost`) and refuses engines it does not know, as a real broker
does: the missing-program row opens one of its own engines instead, `aider` (the
profile's missing_program_engine), whose program here is MISSING_PROGRAM.
"""
import json
import sys


def main(out, agent, history, missing):
    index = f"{history}/index"

    def stub(engine, *more):
        return [agent, "agent", "--engine", engine, *more, "--history", history]

    engines = {
        "claude": {"ids": "uuid", "mints": "broker",
                   "start": stub("claude", "--id", "{id}"),
                   "continue": stub("claude", "--id", "{id}") + ["--resume"]},
        "opencode": {"ids": "ses", "mints": "engine", "index": index,
                     "start": stub("opencode") + ["--index", index],
                     "continue": stub("opencode", "--id", "{id}") + ["--resume"]},
        "aider": {"ids": "uuid", "mints": "broker",
                  "start": [missing, "--id", "{id}"], "continue": [missing, "--id", "{id}"]},
    }
    with open(out, "w") as f:
        json.dump({"peer-engines": 1, "engines": engines}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: setup_engines.py OUT AGENT HISTORY MISSING_PROGRAM")
    main(*sys.argv[1:])
