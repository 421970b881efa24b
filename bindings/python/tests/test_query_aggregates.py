"""min(), max(), sum() and average() of Results."""

import decimal

import pytest
from models_query import db, fill, kind, raises_each, year  # noqa: F401 (fixtures)

import coffer


def test_aggregates_of_ints_floats_doubles_decimals_and_dates(db):
    fill(db)
    people = db.objects("Person")
    # age: 30, None, 20, 40 (nulls are ignored)
    assert people.min("age") == 20 and people.max("age") == 40
    assert people.sum("age") == 90 and type(people.sum("age")) is int
    assert people.average("age") == 30.0 and type(people.average("age")) is float
    # height (float): 1.5, 2.0
    assert people.min("height") == 1.5 and people.max("height") == 2.0
    assert people.sum("height") == 3.5 and people.average("height") == 1.75
    # weight (double): 60.5, 80.0, 70.0
    assert people.sum("weight") == 210.5 and people.average("weight") == pytest.approx(70.1666666)
    assert people.min("weight") == 60.5 and type(people.max("weight")) is float
    # balance (decimal128): 10.25, 1.5
    assert people.sum("balance") == decimal.Decimal("11.75")
    assert people.average("balance") == decimal.Decimal("5.875")
    assert people.min("balance") == decimal.Decimal("1.5") and isinstance(people.max("balance"), decimal.Decimal)
    # born (date): 1990, 2000
    assert people.min("born") == year(1990) and people.max("born") == year(2000)
    assert people.min("id") == 1 and people.max("id") == 4


def test_aggregates_of_mixed_count_only_numbers(db):
    fill(db)
    people = db.objects("Person")
    # extra: 3, "text", 2.5, None
    assert people.max("extra") == 3 and type(people.max("extra")) is int
    assert people.min("extra") == 2.5
    assert people.sum("extra") == 5.5 and people.average("extra") == 2.75


def test_aggregates_of_filtered_and_empty_results(db):
    fill(db)
    people = db.objects("Person")
    young = people.filter("age < $0", 35)
    assert young.sum("age") == 50 and young.max("born") == year(2000)
    assert people.sorted("age").limit(2).sum("age") == 20  # Bob (null) and Cid
    none = people.filter("age > 100")
    assert none.min("age") is None and none.max("born") is None and none.average("weight") is None
    assert none.sum("age") == 0 and type(none.sum("age")) is int
    assert none.sum("weight") == 0.0 and type(none.sum("weight")) is float
    assert none.sum("balance") == decimal.Decimal(0)
    nulls = people.filter("age == nil")
    assert nulls.max("age") is None and nulls.sum("age") == 0


def test_aggregates_follow_writes(db):
    f = fill(db)
    adults = db.objects("Person").filter("age >= 18")
    assert adults.max("age") == 40
    with db.write():
        f["ann"].age = 90
        assert adults.max("age") == 90
    assert adults.max("age") == 90


def test_aggregate_errors(db):
    fill(db)
    people = db.objects("Person")
    raises_each([
        (people.sum, ("born",), coffer.PropertyTypeError, "cannot take the sum of 'Person.born': it holds date"),
        (people.min, ("name",), coffer.PropertyTypeError, "cannot take the minimum of 'Person.name': it holds string"),
        (people.max, ("dogs",), coffer.PropertyTypeError, "'Person.dogs': it holds a collection of"),
        (db.objects("Dog").average, ("owners",), coffer.PropertyTypeError, "'Dog.owners'"),
        (people.min, ("nope",), coffer.PropertyNotFoundError, "class 'Person' has no property named 'nope'"),
        (people.sum, (3,), TypeError, "aggregates take a property name, got int"),
    ])
