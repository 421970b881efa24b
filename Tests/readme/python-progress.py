"""Runs the README's Python progress example: a version-1 seed file made
here is copied to a new file and migrated, and the reports are checked."""
import contextlib
import glob
import io
import os

import coffer

for leftover in glob.glob("items.coffer*") + glob.glob("bundled.coffer*"):
    os.remove(leftover)
version_1 = {"name": "Item", "properties": {"id": "int"}}
with coffer.open("bundled.coffer", schema=[version_1], schema_version=1) as seed:
    with seed.write():
        for i in range(500):
            seed.create("Item", {"id": i})

printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    # readme: python-progress
lines = printed.getvalue().splitlines()
assert lines[0].startswith("seed_copy: 0 of "), lines
assert lines[-1] == "migration: 500 of 500", lines
assert db.objects("Item").filter("id == 7")[0].label == "item 7"
db.close()
