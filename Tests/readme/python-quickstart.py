"""Runs the README's Python quick start, then its query block on the same file."""
# readme: python-quickstart

# readme: python-query

with coffer.open("dogs-python.coffer", schema=[Dog, person]) as db:
    assert [d.name for d in db.objects(Dog)] == ["Rex"], "Fido was deleted"
    assert db.object_for_primary_key(Dog, 1).breed == "Husky"
    assert db.objects("Person").max("age") == 31
