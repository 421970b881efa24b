"""The query conformance suite of the Realm JavaScript SDK, run through
coffer.Results.filter(): one pytest case per test of each suite.

The suite and its attribution live in the repository's Tests/conformance/
(README.md there describes the format), shared with the C tests."""

import base64
import datetime
import json
import uuid
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import coffer

SUITE_FILE = Path(__file__).resolve().parents[3] / "Tests" / "conformance" / "realm-query-tests.json"
if not SUITE_FILE.is_file():
    raise FileNotFoundError(
        f"the query conformance suite is missing: {SUITE_FILE} (run the tests from a checkout of the repository)"
    )
SUITES: Dict[str, Any] = json.loads(SUITE_FILE.read_text(encoding="utf-8"))

# Where Coffer decides differently from Realm on purpose: (suite, query) -> reason.
DEVIATIONS = {
    ("stringTests", 'stringCol == "\\"\\n\\0\\r\\\\\'"'): "deviation: string escapes are decoded (docs/QUERY.md)",
}


def _cases() -> List[Any]:
    cases = []
    for suite, spec in SUITES.items():
        for index, test in enumerate(spec["tests"]):
            marks = []
            query = test[2] if test[0] == "QueryThrows" else test[3] if test[0] != "Disabled" else None
            reason = DEVIATIONS.get((suite, query))
            if reason is not None:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            cases.append(pytest.param(suite, index, id=f"{suite}-{index}", marks=marks))
    return cases


# ---- building a suite's database ------------------------------------------


def _class(schema: List[Dict[str, Any]], name: str) -> Dict[str, Any]:
    return next(c for c in schema if c["name"] == name)


def _value(schema: List[Dict[str, Any]], prop: Dict[str, Any], value: Any) -> Any:
    """The Python value of a property from the suite's JSON form."""
    kind = prop["type"]
    base = kind.rstrip("?")
    if base.endswith("[]"):
        element = dict(prop, type=base[:-2])
        return [_value(schema, element, v) for v in value]
    if value is None:
        return None
    if kind == "object":
        return _object(schema, prop["objectType"], value)
    if any(c["name"] == base for c in schema):
        return _object(schema, base, value)
    if base == "date":
        return datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=value)
    if base == "data":
        return bytes(value) if isinstance(value, list) else base64.b64decode(value)
    if base == "objectId":
        return coffer.ObjectId(value)
    if base == "uuid":
        return uuid.UUID(value)
    return value


def _object(schema: List[Dict[str, Any]], class_name: str, values: List[Any]) -> Dict[str, Any]:
    """A dict for db.create(): values positional in schema order; nested
    arrays describe linked objects."""
    props = _class(schema, class_name)["properties"]
    return {p["name"]: _value(schema, p, v) for p, v in zip(props, values)}


@pytest.fixture(scope="module")
def databases():
    """One in-memory database per suite, filled on first use."""
    opened: Dict[str, Tuple[coffer.Database, List[coffer.Object]]] = {}

    def get(suite: str) -> Tuple[coffer.Database, List[coffer.Object]]:
        if suite not in opened:
            spec = SUITES[suite]
            db = coffer.open(schema=spec["schema"], in_memory_identifier=f"conformance-{suite}-{id(opened)}")
            with db.write():
                objects = [db.create(o["type"], _object(spec["schema"], o["type"], o["value"]))
                           for o in spec["objects"]]
            opened[suite] = (db, objects)
        return opened[suite]

    yield get
    for db, _ in opened.values():
        db.close()


def _argument(objects: List[coffer.Object], arg: Any) -> Any:
    """`[i, "prop"]` is the value of prop of object i; others are literals."""
    if isinstance(arg, list) and len(arg) == 2 and isinstance(arg[0], int) and isinstance(arg[1], str):
        return objects[arg[0]][arg[1]]
    return arg


# ---- the cases -------------------------------------------------------------


@pytest.mark.parametrize("suite,index", _cases())
def test_conformance(databases, suite, index):
    test = SUITES[suite]["tests"][index]
    kind = test[0]
    if kind == "Disabled":
        pytest.skip(f"disabled in the suite: {test[1:]}")
    db, objects = databases(suite)
    if kind == "QueryThrows":
        class_name, query, raw_args = test[1], test[2], test[3:]
        args = [_argument(objects, a) for a in raw_args]
        with pytest.raises(coffer.QueryError):
            list(db.objects(class_name).filter(query, *args))
        return
    expected, class_name, query, raw_args = test[1], test[2], test[3], test[4:]
    args = [_argument(objects, a) for a in raw_args]
    results = db.objects(class_name).filter(query, *args)
    if kind == "QueryCount":
        assert len(results) == expected
    elif kind == "ObjectSet":
        primary_key = _class(SUITES[suite]["schema"], class_name)["primaryKey"]
        got = [obj[primary_key] for obj in results]
        if "SORT" in query.upper():
            assert got == expected
        else:
            assert sorted(got) == sorted(expected)
    else:
        pytest.fail(f"unknown test kind {kind!r}")
