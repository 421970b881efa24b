"""Results.filter(), sorted(), distinct() and limit() on plain, encrypted
and in-memory databases: arguments, errors, chaining, laziness, deletion."""

import ctypes
import datetime
import decimal
import functools
import gc
import inspect
import uuid

import pytest
from models import Dog
from models_query import SCHEMA, db, fill, kind, names, raises_each, year  # noqa: F401 (fixtures)

import coffer


def test_filter_with_arguments_of_every_kind(db):
    f = fill(db)
    people = db.objects("Person")
    assert names(people.filter("age > $0", 25)) == ["Ann", "Dee"]
    assert names(people.filter("name == $0 OR name == $1", "Bob", "Cid")) == ["Bob", "Cid"]
    assert names(people.filter("name BEGINSWITH[c] $0", "a")) == ["Ann"]
    assert names(people.filter("weight >= $0", 70)) == ["Cid", "Dee"]  # int against double
    assert names(people.filter("height < $0", 1.6)) == ["Ann"]
    assert names(people.filter("balance > $0", decimal.Decimal("2"))) == ["Ann"]
    assert names(people.filter("born < $0", year(1995))) == ["Ann"]
    assert names(people.filter("born == $0", None)) == ["Bob", "Dee"]
    assert names(people.filter("age == $0", None)) == ["Bob"]
    assert names(people.filter("photo == $0", b"\x01\x02")) == ["Ann"]
    assert names(people.filter("tag == $0", None)) == ["Ann", "Bob", "Cid", "Dee"]
    assert names(people.filter("tag == $0", coffer.ObjectId())) == []
    assert names(people.filter("token == $0", uuid.uuid4())) == []
    assert names(people.filter("extra == $0", "text")) == ["Bob"]
    assert names(people.filter("extra == $0", True)) == []
    assert names(people.filter("best == $0", f["rex"])) == ["Bob"]
    assert names(people.filter("age IN $0", [20, 40, 99])) == ["Cid", "Dee"]
    assert names(people.filter("name IN $0", ("Bob",))) == ["Bob"]
    assert names(people.filter("best IN $0", {f["rex"], f["spot"]})) == ["Bob", "Cid"]
    assert names(people.filter("best IN $0", db.objects("Dog").filter("age < 4"))) == ["Bob", "Cid"]
    assert names(people.filter("name IN $0", [])) == []
    assert names(people.filter("TRUEPREDICATE")) == ["Ann", "Bob", "Cid", "Dee"]
    assert names(people.filter("FALSEPREDICATE")) == []


def test_filter_through_links_and_collections(db):
    fill(db)
    people = db.objects("Person")
    assert names(people.filter("best.age > 2")) == ["Ann", "Bob"]
    assert names(people.filter("best.vet.city == 'Oslo'")) == ["Bob"]
    assert names(people.filter("ANY dogs.name == 'Rex'")) == ["Ann", "Bob", "Cid"]
    assert names(people.filter("ALL dogs.age > 2")) == ["Ann", "Bob", "Dee"]
    assert names(people.filter("dogs.@count >= 2")) == ["Ann", "Cid"]
    assert names(people.filter("dogs.@max.age == 5")) == ["Ann"]
    assert names(people.filter("friends.name == 'Ann'")) == ["Bob", "Cid"]
    assert names(people.filter("SUBQUERY(dogs, $d, $d.age < 3).@count > 0")) == ["Cid"]
    assert names(db.objects("Dog").filter("owners.@count > 1")) == ["Rex"]
    assert names(db.objects("Dog").filter("ANY owners.name == 'Ann'")) == ["Rex", "Fido"]


def test_results_of_model_classes_keep_their_type(db_path):
    with coffer.open(db_path, schema=[Dog]) as db:
        with db.write():
            for i, name in enumerate(["Rex", "Fido", "Bella"]):
                db.add(Dog(id=i, name=name, age=i + 2))
        found = db.objects(Dog).filter("name == $0", "Fido")
        assert len(found) == 1 and isinstance(found[0], Dog) and found[0].id == 1
        assert [d.name for d in db.objects(Dog).sorted("name")] == ["Bella", "Fido", "Rex"]


def test_sorted(db):
    fill(db)
    people = db.objects("Person")
    assert names(people.sorted("name", ascending=False)) == ["Dee", "Cid", "Bob", "Ann"]
    # Nulls sort first going up.
    assert names(people.sorted("age")) == ["Bob", "Cid", "Ann", "Dee"]
    assert names(people.sorted("age", False)) == ["Dee", "Ann", "Cid", "Bob"]
    # Through links; a null link sorts like a null value.
    assert names(people.sorted("best.age")) == ["Dee", "Cid", "Bob", "Ann"]
    assert names(people.sorted("best.vet.name", False)) == ["Bob", "Ann", "Cid", "Dee"]
    assert names(people.sorted([("born", False), "name"])) == ["Cid", "Ann", "Bob", "Dee"]
    assert names(people.sorted([("extra", True), ("id", False)])) == ["Dee", "Cid", "Ann", "Bob"]
    # Sorting again makes the earlier order the tie-breaker.
    by_born_then_name = people.sorted("name", False).sorted("born")
    assert names(by_born_then_name) == ["Dee", "Bob", "Ann", "Cid"]
    assert names(people.filter("age != nil").sorted("age", False)) == ["Dee", "Ann", "Cid"]
    assert names(people.sorted(prop="name", ascending=False)) == ["Dee", "Cid", "Bob", "Ann"]


def test_sorted_signature():
    for method in (coffer.Results.sorted, coffer.List.sorted, coffer.Set.sorted):
        params = inspect.signature(method).parameters
        assert list(params) == ["self", "prop", "ascending"]
        assert params["ascending"].default is True


def test_sorted_errors(db):
    fill(db)
    people = db.objects("Person")
    raises_each([
        (people.sorted, ("nope",), coffer.QueryError, "'nope'"),
        (people.sorted, ("dogs.age",), coffer.QueryError, "SORT needs single values, but 'dogs.age' goes through a collection"),
        (people.sorted, ("best",), coffer.QueryError, "'best' is a link"),
        (people.sorted, ("name) LIMIT(1",), coffer.QueryError, r"'name\) LIMIT\(1' is not a key path"),
        (people.sorted, ("",), coffer.QueryError, "is not a key path"),
        (people.sorted, ([],), coffer.QueryError, "at least one key path"),
        (people.sorted, (3,), TypeError, "takes a key path or a list of them, got int"),
        (people.sorted, ("name", "desc"), TypeError, "ascending must be a bool"),
        (functools.partial(people.sorted, ascending=False), (["name"],), TypeError, "give the direction in each"),
        (people.sorted, ([("name", "up")],), TypeError, r"\(key_path, ascending\) pair"),
    ])


def test_distinct(db):
    fill(db)
    dogs = db.objects("Dog")
    people = db.objects("Person")
    assert names(people.distinct("best.age")) == ["Ann", "Bob", "Cid", "Dee"]
    assert names(people.filter("age != nil").distinct("born")) == ["Ann", "Cid", "Dee"]
    assert names(people.sorted("name", False).distinct("born")) == ["Dee", "Cid", "Ann"]
    assert names(dogs.distinct("vet.city")) == ["Rex", "Fido", "Spot"]
    assert names(people.distinct("extra", "born")) == ["Ann", "Bob", "Cid", "Dee"]
    with pytest.raises(coffer.QueryError, match="'best' is a link"):
        people.distinct("best")
    with pytest.raises(coffer.QueryError, match="at least one key path"):
        people.distinct()


def test_limit(db):
    fill(db)
    people = db.objects("Person")
    assert names(people.limit(2)) == ["Ann", "Bob"]
    assert names(people.sorted("name", False).limit(1)) == ["Dee"]
    assert names(people.limit(0)) == []
    assert names(people.limit(10)) == ["Ann", "Bob", "Cid", "Dee"]
    assert names(people.limit(3).filter("age > 25")) == ["Ann"]  # the limit applies first
    assert names(people.filter("TRUEPREDICATE SORT(age DESC) LIMIT(2)")) == ["Dee", "Ann"]
    with pytest.raises(coffer.QueryError, match="0 or more, got -1"):
        people.limit(-1)
    with pytest.raises(TypeError, match="limit\\(\\) takes an int"):
        people.limit(1.5)  # type: ignore[arg-type]


def test_chained_filters_and_description(db):
    fill(db)
    people = db.objects("Person")
    adults = people.filter("age >= $0", 18)
    named = adults.filter("name != $0", "Dee")
    ordered = named.sorted("age")
    assert names(adults) == ["Ann", "Cid", "Dee"]
    assert names(named) == ["Ann", "Cid"]
    assert names(ordered) == ["Cid", "Ann"]
    assert names(adults) == ["Ann", "Cid", "Dee"]  # unchanged by what was derived from it
    assert ordered.description == "age >= $0 then name != $0 then TRUEPREDICATE SORT(age ASC)"
    assert people.description == "TRUEPREDICATE"
    assert ordered[0].name == "Cid" and ordered[-1].name == "Ann"
    assert [p.name for p in ordered[::-1]] == ["Ann", "Cid"]
    assert len(ordered) == 2 and bool(ordered) and not people.filter("FALSEPREDICATE")
    assert repr(ordered) == "<coffer.Results of Person: 2 objects>"
    with pytest.raises(IndexError, match="index 2 is out of range for 2 Person objects"):
        ordered[2]


def test_query_errors(db):
    fill(db)
    people = db.objects("Person")
    with pytest.raises(coffer.QueryError, match=r"at offset 6: expected a value") as info:
        people.filter("age >")
    assert info.value.status == coffer.Status.QUERY and info.value.status > 20
    assert isinstance(info.value, coffer.CofferError) and isinstance(info.value, ValueError)
    raises_each([
        (people.filter, (")",), coffer.QueryError, "at offset 1:"),
        (people.filter, ("nope == 1",), coffer.QueryError, "class 'Person' has no property 'nope'"),
        (people.filter, ("best.vet.town == 'Oslo'",), coffer.QueryError, r"class 'Vet' has no property 'town'"),
        (people.filter, ("age == 'x'",), coffer.QueryError, r"cannot compare 'age' \(int\) with a string"),
        (people.filter, ("age == $0", "thirty"), coffer.QueryError, r"argument \$0 \(string\)"),
        (people.filter, ("age == $1", 1), coffer.QueryError, r"uses \$1 but 1 argument was given"),
        (people.filter, ("age == $0",), coffer.QueryError, r"\$0"),
        (people.filter, ("age == $0", {"a": 1}), coffer.QueryError, r"query argument \$0: dict values cannot be query arguments"),
        (people.filter, ("age == $0 OR age == $1", 1, object()), coffer.QueryError, r"query argument \$1: object values cannot be"),
        (people.filter, ("age IN $0", [1, [2]]), coffer.QueryError, r"query argument \$0: item 1 is a collection"),
        (people.filter, ("born == $0", datetime.datetime(2000, 1, 1)), coffer.QueryError, "naive datetime"),
        (people.filter, ("age == $0", 2**70), coffer.QueryError, "outside the 64-bit integer range"),
        (db.objects("Dog").filter, ("name == $0", Dog(id=1)), coffer.QueryError, "not stored; add it to the database first"),
        (people.filter, (b"age > 1",), TypeError, "a query must be a str, got bytes"),
        (people.filter, ("name == '\ud800'",), coffer.QueryError, "cannot be encoded as UTF-8"),
    ])


def test_link_argument_of_another_handle_is_an_error(db_path):
    with coffer.open(db_path, schema=SCHEMA) as first, coffer.open(db_path, schema=SCHEMA) as second:
        fill(first)
        rex = first.object_for_primary_key("Dog", "Rex")
        with pytest.raises(coffer.QueryError, match="belongs to another database handle"):
            second.objects("Person").filter("best == $0", rex)


def test_results_recompute_after_writes(db):
    f = fill(db)
    adults = db.objects("Person").filter("age >= 21").sorted("age")
    assert names(adults) == ["Ann", "Dee"]
    with db.write():
        f["cid"].age = 50
        assert names(adults) == ["Ann", "Dee", "Cid"]  # the write sees itself
        db.create("Person", {"id": 5, "name": "Eve", "age": 21})
        assert names(adults) == ["Eve", "Ann", "Dee", "Cid"]
    assert names(adults) == ["Eve", "Ann", "Dee", "Cid"]
    with db.write():
        db.delete(f["ann"])
    assert names(adults) == ["Eve", "Dee", "Cid"] and len(adults) == 3


def test_results_stay_on_their_snapshot_until_refresh(db_path):
    with coffer.open(db_path, schema=SCHEMA) as db:
        fill(db)
        young = db.objects("Person").filter("age < 35")
        assert names(young) == ["Ann", "Cid"]
        with coffer.open(db_path, schema=SCHEMA) as other:
            with other.write():
                other.create("Person", {"id": 9, "name": "Zed", "age": 5})
        assert names(young) == ["Ann", "Cid"]
        db.refresh()
        assert names(young) == ["Ann", "Cid", "Zed"]


def test_iteration_is_stable_while_the_results_change(db):
    fill(db)
    young = db.objects("Person").filter("age < 35")
    with db.write():
        for person in young:
            person.age = 99
    assert names(young) == []


def test_delete_filtered_results(db):
    f = fill(db)
    with db.write():
        db.delete(db.objects("Person").filter("age > $0", 25))
    assert names(db.objects("Person")) == ["Bob", "Cid"]
    with db.write():
        db.delete(db.objects("Dog").sorted("age").limit(2))
    assert names(db.objects("Dog")) == ["Fido"]
    assert f["bob"].best is None  # the link to a deleted dog reads as null
    with pytest.raises(coffer.NotInWriteError, match="delete\\(\\) needs a write transaction"):
        db.delete(db.objects("Person").filter("age > 1"))
    # A write that raises rolls back the deletion.
    with pytest.raises(RuntimeError):
        with db.write():
            db.delete(db.objects("Person").filter("TRUEPREDICATE"))
            raise RuntimeError("changed my mind")
    assert names(db.objects("Person")) == ["Bob", "Cid"]


def test_queries_of_a_closed_database_raise(db_path):
    db = coffer.open(db_path, schema=SCHEMA)
    fill(db)
    people = db.objects("Person")
    adults = people.filter("age > 18")
    assert len(adults) == 3
    db.close()
    with pytest.raises(coffer.DatabaseClosedError):
        people.filter("age > 18")
    with pytest.raises(coffer.DatabaseClosedError):
        len(adults)
    with pytest.raises(coffer.DatabaseClosedError):
        list(adults)
    with pytest.raises(coffer.DatabaseClosedError):
        adults.max("age")
    with pytest.raises(coffer.DatabaseClosedError):
        adults.sorted("age")
    assert repr(adults) == "<coffer.Results of Person (database closed)>"
    del adults, people
    gc.collect()  # the compiled queries outlive the database; freeing them is safe


def test_compiled_queries_are_freed_with_their_results(db, monkeypatch):
    fill(db)
    freed = []
    free = coffer._capi.coffer_query_free
    monkeypatch.setattr(coffer._capi, "coffer_query_free",
                        lambda handle: (freed.append(ctypes.addressof(handle.contents)), free(handle)))
    adults = db.objects("Person").filter("age > 18")
    address = ctypes.addressof(adults._queries[0].handle.contents)
    chained = adults.sorted("age")
    assert chained._queries[0] is adults._queries[0]  # shared, not compiled again
    del adults
    gc.collect()
    assert address not in freed and names(chained) == ["Cid", "Ann", "Dee"]
    del chained
    gc.collect()
    # Both queries (the filter's and the sort's) are kept to be rebound for
    # their next arguments, until the database closes.
    assert freed == []
    db.close()
    gc.collect()
    assert address in freed and len(freed) == 2


def test_a_query_text_is_parsed_once_and_rebound(db, monkeypatch):
    fill(db)
    compiled = []
    compile_ = coffer._capi.coffer_query_compile
    monkeypatch.setattr(coffer._capi, "coffer_query_compile",
                        lambda *a: (compiled.append(a[2]), compile_(*a))[1])
    people = db.objects("Person")
    assert names(people.filter("age > $0", 18)) == ["Ann", "Cid", "Dee"]
    assert names(people.filter("age > $0", 25)) == ["Ann", "Dee"]
    assert compiled.count(b"age > $0") == 1
    # Each run checks its own arguments; a refused one changes nothing.
    with pytest.raises(coffer.QueryError, match=r"\$0"):
        people.filter("age > $0", "old")
    assert names(people.filter("age > $0", 18)) == ["Ann", "Cid", "Dee"]
    # Many texts stay correct when the kept queries start afresh.
    for limit in range(1, 100):
        assert len(people.filter(f"age > $0 LIMIT({limit})", 0)) == min(limit, 3)


def test_indexed_lookups_agree_with_scans(db):
    fill(db)
    people = db.objects("Person")
    with db.write():
        for i in range(10, 200):
            db.create("Person", {"id": i, "name": f"p{i % 7}", "age": i % 13})
    # name is indexed (hashed in encrypted files), id is the primary key.
    assert len(people.filter("name == 'p3'")) == len([p for p in people if p.name == "p3"]) > 20
    assert len(people.filter("name IN {'p1', 'p2'} AND age < 5")) == len(
        [p for p in people if p.name in ("p1", "p2") and p.age is not None and p.age < 5])
    assert names(people.filter("id == 150")) == ["p3"]
    assert len(people.filter("name BEGINSWITH 'p'")) == 190
    assert len(people.filter("id > 100 AND id <= 110")) == 10
