"""The change-notification conformance suite (Tests/conformance/changesets.json,
format in Tests/conformance/README.md) run through the observers of the
binding: one pytest case per conformance case, named by its id. Each case
opens an in-memory database with its fixture's schema and objects, applies
the case's setup in one committed write, registers the observer (results of
a query, a list property, or an object) with auto_refresh off, refreshes for
the initial call, applies the case's write as one write transaction,
refreshes again and compares exactly what the callback was told.

The cases restate facts asserted by realm-core's object-store tests
(https://github.com/realm/realm-core, commit f8752e18: test/object-store/
results.cpp, list.cpp, object.cpp, transaction_log_parsing.cpp and
primitive_list.cpp), licensed under the Apache License 2.0; each case cites
its file and section in `source`.

A list seen through a query or sort ("list_results") is observed as the
binding offers it: a list of objects through filter()/sorted()/distinct()
(coffer.Results of the list), a list of values through sorted()/distinct()
on "self" (coffer.SortedValues). Every case runs; none is skipped."""

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import coffer

SUITE_FILE = Path(__file__).resolve().parents[3] / "Tests" / "conformance" / "changesets.json"
if not SUITE_FILE.is_file():
    raise FileNotFoundError(
        f"the change-notification conformance suite is missing: {SUITE_FILE} "
        "(run the tests from a checkout of the repository)"
    )
SUITE: Dict[str, Any] = json.loads(SUITE_FILE.read_text(encoding="utf-8"))
CASES = {case["id"]: case for case in SUITE["cases"]}
SCALARS = {"int", "bool", "string", "double", "float", "date"}

# ---- the fixture schema ----------------------------------------------------


def _schema(case: Dict[str, Any]) -> List[Dict[str, Any]]:
    return SUITE["fixtures"][case["fixture"]]["schema"]


def _property(schema: List[Dict[str, Any]], class_name: str, name: str) -> Dict[str, Any]:
    cls = next(c for c in schema if c["name"] == class_name)
    return next(p for p in cls["properties"] if p["name"] == name)


def _target_class(prop: Dict[str, Any]) -> Optional[str]:
    """The class a link or a list of objects points to; None for values."""
    if prop["type"] == "object" or (prop["type"] == "list" and prop["objectType"] not in SCALARS):
        return prop["objectType"]
    return None


# ---- writes, objects addressed by class and primary key --------------------


def _find(db: coffer.Database, class_name: str, pk: int) -> coffer.Object:
    obj = db.object_for_primary_key(class_name, pk)
    assert obj is not None, f"no {class_name} with primary key {pk}"
    return obj


def _element(db: coffer.Database, prop: Dict[str, Any], value: Any) -> Any:
    """The value of a property (or of an element of a list property) from its
    JSON form: links are given by the target's primary key."""
    target = _target_class(prop)
    if value is None or target is None:
        return value
    return _find(db, target, value)


def _create(db: coffer.Database, schema: List[Dict[str, Any]], class_name: str, value: Dict[str, Any]) -> None:
    values = {}
    for name, given in value.items():
        prop = _property(schema, class_name, name)
        if prop["type"] == "list":
            values[name] = [_element(db, prop, v) for v in given]
        else:
            values[name] = _element(db, prop, given)
    db.create(class_name, values)


def _apply_list_op(db: coffer.Database, schema: List[Dict[str, Any]], op: Dict[str, Any]) -> None:
    prop = _property(schema, op["type"], op["property"])
    items = _find(db, op["type"], op["pk"])[op["property"]]
    name = op["op"]
    value = _element(db, prop, op.get("value"))
    if name == "list_insert":
        items.insert(op["index"], value)
    elif name == "list_append":
        items.append(value)
    elif name == "list_erase":
        del items[op["index"]]
    elif name == "list_set":
        items[op["index"]] = value
    elif name == "list_move":
        items.move(op["from"], op["to"])
    elif name == "list_swap":
        items.swap(op["index1"], op["index2"])
    elif name == "list_clear":
        items.clear()
    else:
        pytest.fail(f"conformance write: unknown operation {name!r}")


def _apply(db: coffer.Database, schema: List[Dict[str, Any]], op: Dict[str, Any]) -> None:
    name, class_name = op["op"], op["type"]
    if name == "create":
        _create(db, schema, class_name, op["value"])
    elif name == "set":
        prop = _property(schema, class_name, op["property"])
        _find(db, class_name, op["pk"])[op["property"]] = _element(db, prop, op["value"])
    elif name == "delete":
        db.delete(_find(db, class_name, op["pk"]))
    elif name == "delete_all":
        db.delete(db.objects(class_name))
    else:
        _apply_list_op(db, schema, op)


def _apply_in_one_write(db: coffer.Database, schema: List[Dict[str, Any]], ops: List[Dict[str, Any]]) -> None:
    with db.write():
        for op in ops:
            _apply(db, schema, op)


# ---- observers ---------------------------------------------------------------


def _with_descriptors(results: coffer.Results, descriptors: List[Dict[str, Any]]) -> coffer.Results:
    """Sort (stable), distinct and limit, in the listed order."""
    for desc in descriptors:
        if "sort" in desc:
            results = results.sorted([(key["property"], key["ascending"]) for key in desc["sort"]])
        elif "distinct" in desc:
            results = results.distinct(*desc["distinct"])
        elif "limit" in desc:
            results = results.limit(desc["limit"])
        else:
            pytest.fail(f"conformance descriptor: unknown {desc!r}")
    return results


def _observe(db: coffer.Database, case: Dict[str, Any], callback: Any) -> coffer.NotificationToken:
    observe, key_paths = case["observe"], case.get("keyPaths")
    kind, class_name = observe["kind"], observe["type"]
    if kind == "results":
        results = _with_descriptors(db.objects(class_name).filter(observe["query"]), observe.get("descriptors", []))
        return results.observe(callback, key_paths)
    owner = _find(db, class_name, observe["pk"])
    if kind == "list_results":
        view = owner[observe["property"]]
        if "query" in observe:
            view = view.filter(observe["query"])
        view = _with_descriptors(view, observe.get("descriptors", []))
        return view.observe(callback, key_paths) if key_paths is not None else view.observe(callback)
    if kind == "list":
        return owner[observe["property"]].observe(callback, key_paths)
    assert kind == "object", kind
    return owner.observe(callback, key_paths)


# ---- comparing with the expected change ------------------------------------


def _check_collection(change: coffer.CollectionChange, expected: Dict[str, Any]) -> None:
    got = {
        "deletions": change.deletions,
        "insertions": change.insertions,
        "modifications": change.modifications,
        "modifications_new": change.modifications_new,
        "moves": [list(move) for move in change.moves],
    }
    want = {name: expected.get(name, []) for name in got}
    for flag, value in (("collection_was_cleared", change.cleared),
                        ("collection_root_was_deleted", change.root_deleted)):
        if flag in expected:
            got[flag], want[flag] = value, expected[flag]
    assert got == want


def _check_object(change: coffer.ObjectChange, expected: Dict[str, Any]) -> None:
    if expected.get("deleted"):
        assert change.deleted
        assert change.changes == []
        return
    assert not change.deleted
    assert "changed_properties" in expected
    assert sorted(p.name for p in change.changes) == sorted(expected["changed_properties"])


# ---- the cases -------------------------------------------------------------


@pytest.mark.parametrize("case_id", list(CASES))
def test_conformance_changes(case_id):
    case = CASES[case_id]
    schema = _schema(case)
    with coffer.open(schema=schema, in_memory_identifier=f"conformance-changes-{case_id}") as db:
        with db.write():
            for obj in SUITE["fixtures"][case["fixture"]]["objects"]:
                _create(db, schema, obj["type"], obj["value"])
        if "setup" in case:
            _apply_in_one_write(db, schema, case["setup"])
        db.auto_refresh = False

        told: List[Any] = []
        token = _observe(db, case, told.append)
        db.refresh()
        assert len(told) == 1 and told[0].initial, told

        _apply_in_one_write(db, schema, case["write"])
        db.refresh()
        expected = case["expected"]
        if expected.get("no_notification"):
            assert told[1:] == [], "expected no notification after the write"
        else:
            assert len(told) == 2, told
            assert not told[1].initial
            if case["observe"]["kind"] == "object":
                _check_object(told[1], expected)
            else:
                _check_collection(told[1], expected)
        token.stop()
