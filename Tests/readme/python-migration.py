"""Runs the README's Python migration on a version-1 file made here."""
import glob
import os

import coffer

for leftover in glob.glob("people.coffer*"):
    os.remove(leftover)
version_1 = {"name": "Person", "properties": {"first": "string", "last": "string"}}
with coffer.open("people.coffer", schema=[version_1]) as old_db:
    with old_db.write():
        old_db.create("Person", {"first": "Ada", "last": "Lovelace"})

# readme: python-migration
person = db.objects(Person)[0]
assert (person.full, person.surname) == ("Ada Lovelace", "Lovelace"), (person.full, person.surname)
db.close()
