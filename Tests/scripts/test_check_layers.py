#!/usr/bin/env python3
"""Tests of scripts/check-layers: it passes on the tree as it is, and refuses
each kind of breach planted in a copy of the core (an include pointing down
the layers, LMDB called or an object table named outside storage/, a record
decoded above it, an allowance that is no longer needed). Run by CTest
(check_layers) with the repository root as its argument."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "check-layers")


def run(root):
    p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


class CheckLayers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="check-layers-")
        shutil.copytree(os.path.join(ROOT, "Sources", "CCoffer"), os.path.join(self.tmp, "Sources", "CCoffer"))
        shutil.copytree(os.path.join(ROOT, "include"), os.path.join(self.tmp, "include"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def append(self, rel, text):
        with open(os.path.join(self.tmp, "Sources", "CCoffer", rel), "a", encoding="utf-8") as f:
            f.write(text)

    def refused(self, *expected):
        rc, out = run(self.tmp)
        self.assertEqual(rc, 1, out)
        for e in expected:
            self.assertIn(e, out)

    def test_the_tree_passes(self):
        rc, out = run(ROOT)
        self.assertEqual(rc, 0, out)
        self.assertIn("only storage/ reaches object tables and indexes", out)

    def test_an_include_pointing_down_is_refused(self):
        self.append("storage/index.c", '#include "query/plan.h"\n')
        self.refused("storage/index.c", "layer storage/ must not use query/")

    def test_lmdb_called_above_storage_is_refused(self):
        self.append("query/plan.c", "static void f(MDB_txn *t) { mdb_txn_abort(t); }\n")
        self.refused("Sources/CCoffer/query/plan.c:", "'mdb_txn_abort' calls LMDB outside storage/")

    def test_an_object_table_named_above_storage_is_refused(self):
        self.append("objects/object.c", "static MDB_dbi f(coffer_txn *t) { return t->db->object_dbis[0]; }\n")
        self.refused("objects/object.c:", "'object_dbis' reaches an object table")

    def test_a_record_decoded_above_storage_is_refused(self):
        self.append("query/eval.c", "static void f(const uint8_t *d, size_t n, cf_record *r) { cf_record_parse(d, n, r); }\n")
        self.refused("query/eval.c:", "'cf_record")

    def test_an_allowed_file_may_not_call_lmdb_on_an_index(self):
        self.append("copy/copy.c", "static void f(coffer_db *db, MDB_txn *t) { mdb_drop(t, db->index_dbis[0], 0); }\n")
        self.refused("copy/copy.c:", "'index_dbis' reaches an object table, an index")

    def test_comments_and_strings_do_not_count(self):
        self.append("query/plan.c", '/* mdb_get(object_dbis) */\nstatic const char *s = "mdb_put(";\n')
        rc, out = run(self.tmp)
        self.assertEqual(rc, 0, out)

    def test_an_allowance_no_longer_needed_is_refused(self):
        path = os.path.join(self.tmp, "Sources", "CCoffer", "util", "error.c")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("mdb_strerror(rc)", "\"\""))
        self.refused("util/error.c: listed in MDB_ALLOWED")


if __name__ == "__main__":
    unittest.main()
