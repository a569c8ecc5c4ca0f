#!/usr/bin/env python3
"""Seeds of the persist_blob fuzz target beyond the corpus (fuzz/targets.sh): blobs
with PAX records the kit's writer never writes and the corpus does not carry, so a
campaign reaches their readers (`blob::pax::valid_mtime`). Each is a valid blob (a long
subtree path's PAX header also carries an `mtime` record, with and without a fraction). Run from
anywhere: python3 fuzz/seeds/persist_blob/generate.py
"""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
spec = importlib.util.spec_from_file_location(
    "blobs", os.path.join(ROOT, "corpus", "persist", "blobs", "generate.py"))
blobs = importlib.util.module_from_spec(spec)
# The corpus generator writes its files only when run as a script.
spec.loader.exec_module(blobs)

for name, mtime in [("pax-mtime-fraction", "1700000000.5"), ("pax-mtime-integer", "1700000000"),
                    ("pax-mtime-negative", "-1.000000001")]:
    # A subtree file whose path needs a PAX `path` record, as Go's writer makes it,
    # with an `mtime` record beside it.
    data = blobs.archive(
        blobs.hdr(), blobs.KEY,
        blobs.pax_member("PaxHeaders.0/" + "x" * 80,
                         blobs.pax_records(path=blobs.pax_path, mtime=mtime)),
        blobs.member(blobs.pax_path[:100], b"pax"))
    with open(os.path.join(HERE, name + ".tar"), "wb") as f:
        f.write(data)
