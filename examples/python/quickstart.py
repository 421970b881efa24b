"""Coffer from Python: declare models, write in transactions, read, update
and delete. Run it with the package installed (pip install ./bindings/python):

    python examples/python/quickstart.py [path]

It creates (or reopens) the database at `path`, dogs.coffer by default.
"""

import datetime
import sys
from typing import Optional

import coffer


class Dog(coffer.Object):
    id: int = coffer.primary_key()
    name: str = coffer.indexed("")
    breed: Optional[str] = None
    born: Optional[datetime.datetime] = None


# Classes can also be declared as Realm-JS-style dicts.
PERSON = {"name": "Person", "primaryKey": "name", "properties": {"name": "string", "age": "int?"}}


def main(path: str) -> None:
    with coffer.open(path, schema=[Dog, PERSON], schema_version=1) as db:
        born = datetime.datetime(2020, 5, 17, tzinfo=datetime.timezone.utc)
        with db.write():  # commits at the end of the block, rolls back on an exception
            db.add(Dog(id=1, name="Rex", breed="Husky", born=born), update="modified")
            db.create(Dog, {"id": 2, "name": "Fido"}, update="modified")
            db.create("Person", ["Ann", 31], update="all")

        for dog in db.objects(Dog):
            print(f"{dog.id}: {dog.name} ({dog.breed or 'unknown breed'})")

        fido = db.object_for_primary_key(Dog, 2)  # None if there is no such dog
        assert fido is not None
        with db.write():
            fido.breed = "Beagle"
        print(f"Fido is now a {fido.breed}; {len(db.objects('Person'))} person")

        try:
            with db.write():
                db.create(Dog, {"id": 1, "name": "Another Rex"})
        except coffer.PrimaryKeyExistsError as error:
            print(f"refused: {error}")

        with db.write():
            db.delete(fido)
        print(f"deleted Fido: still valid? {fido.is_valid}; {len(db.objects(Dog))} dog left")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "dogs.coffer")
