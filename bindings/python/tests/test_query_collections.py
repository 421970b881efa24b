"""Queries over the objects of a list, a set and backlinks."""

import pytest
from models_query import db, fill, kind, names  # noqa: F401 (fixtures)

import coffer


def test_filter_and_sort_a_list_of_objects(db):
    f = fill(db)
    cid = f["cid"]  # dogs: Spot (1), Rex (3)
    assert names(cid.dogs.filter("age > $0", 0)) == ["Spot", "Rex"]  # the list's order
    assert names(cid.dogs.filter("vet.city == 'Oslo'")) == ["Rex"]
    assert names(cid.dogs.sorted("name", False)) == ["Spot", "Rex"]
    assert names(cid.dogs.sorted("vet.name")) == ["Spot", "Rex"]
    found = cid.dogs.filter("age < 5")
    assert isinstance(found, coffer.Results) and found.max("age") == 3 and found.sum("age") == 4
    assert names(found.filter("name != 'Spot'").sorted("age")) == ["Rex"]
    assert names(f["ann"].dogs.filter("age > 100")) == []


def test_a_list_with_repeats_keeps_them(db):
    f = fill(db)
    with db.write():
        f["ann"].dogs.append(f["rex"])
    assert names(f["ann"].dogs.filter("age >= 3")) == ["Rex", "Fido", "Rex"]
    assert names(f["ann"].dogs.filter("TRUEPREDICATE").distinct("name")) == ["Rex", "Fido"]


def test_filtered_lists_follow_changes_of_the_list(db):
    f = fill(db)
    old = f["ann"].dogs.filter("age > 2")
    assert names(old) == ["Rex", "Fido"]
    with db.write():
        f["ann"].dogs.remove(f["rex"])
        assert names(old) == ["Fido"]
        f["ann"].dogs.insert(0, f["spot"])
        f["spot"].age = 7
    assert names(old) == ["Spot", "Fido"]


def test_filter_a_set_of_objects(db):
    f = fill(db)
    friends = f["cid"].friends  # Ann, Bob
    assert sorted(names(friends.filter("age == nil OR age > 25"))) == ["Ann", "Bob"]
    assert names(friends.filter("name == 'Bob'")) == ["Bob"]
    assert names(friends.sorted("id", False)) == ["Bob", "Ann"]
    assert friends.sorted("id").max("weight") == 60.5


def test_filter_backlinks(db):
    f = fill(db)
    owners = f["rex"].owners  # Ann, Bob, Cid
    assert names(owners.filter("age > 25 OR age == nil")) == ["Ann", "Bob"]
    assert names(owners.sorted("name", False).limit(2)) == ["Cid", "Bob"]
    assert owners.filter("age != nil").average("age") == 25.0
    named = f["rex"].linking_objects("Person", "best").filter("name BEGINSWITH 'B'")
    assert names(named) == ["Bob"]


def test_delete_filtered_collections_and_backlinks(db):
    f = fill(db)
    with db.write():
        db.delete(f["cid"].dogs.filter("age < 2"))  # Spot
    assert names(db.objects("Dog")) == ["Rex", "Fido"] and names(f["cid"].dogs) == ["Rex"]
    with db.write():
        db.delete(f["rex"].owners.filter("age == nil"))  # Bob
    assert names(db.objects("Person")) == ["Ann", "Cid", "Dee"]
    with db.write():
        db.delete(f["ann"].dogs)  # unfiltered results of a list: its objects
    assert names(db.objects("Dog")) == []


def test_only_collections_of_objects_filter(db):
    f = fill(db)
    with pytest.raises(coffer.QueryError, match="class 'Dog' has no property 'nope'"):
        f["ann"].dogs.filter("nope == 1")
    other = coffer.open(schema=[{"name": "Tagged", "properties": {"tags": "string[]", "codes": "int<>"}}],
                        in_memory_identifier=f"tags-{id(db)}")
    with other:
        with other.write():
            tagged = other.create("Tagged", {"tags": ["a"], "codes": [1]})
        with pytest.raises(coffer.PropertyTypeError, match="only lists and sets of objects .* holds string values"):
            tagged.tags.filter("TRUEPREDICATE")
        with pytest.raises(coffer.PropertyTypeError, match="holds int values"):
            tagged.codes.sorted("x")


def test_filter_a_collection_of_a_deleted_object(db):
    f = fill(db)
    dogs = f["ann"].dogs
    with db.write():
        db.delete(f["ann"])
    with pytest.raises(coffer.InvalidObjectError, match="was deleted"):
        dogs.filter("age > 1")[0]
