import pytest
from conftest import KEY
from models_links import DICT_SCHEMA, Address, Owner, Pet

import coffer


@pytest.fixture(params=["models", "dicts"])
def db(request, db_path):
    schema = [Owner, Pet, Address] if request.param == "models" else DICT_SCHEMA
    with coffer.open(db_path, schema=schema) as database:
        yield database


def test_models_and_dicts_declare_the_same_schema(db_path, tmp_path):
    with coffer.open(db_path, schema=[Owner, Pet, Address]) as db:
        from_models = [c.to_dict() for c in db.schema]
    with coffer.open(str(tmp_path / "dicts.coffer"), schema=DICT_SCHEMA) as db:
        from_dicts = [c.to_dict() for c in db.schema]
    assert from_models == from_dicts
    owner = from_models[0]["properties"]
    assert owner["pets"]["type"] == "Pet[]" and owner["best"]["type"] == "Pet"
    assert owner["lucky"] == {"type": "int[]", "optional": True}
    assert owner["scores"]["type"] == "double{}" and owner["nicknames"]["type"] == "string<>"
    assert from_models[1]["properties"]["owners"] == {"type": "linkingObjects", "objectType": "Owner", "property": "pets"}
    assert from_models[2]["embedded"] is True


def test_schema_round_trips_through_to_dict(db_path, tmp_path):
    with coffer.open(db_path, schema=DICT_SCHEMA) as db:
        stored = [c.to_dict() for c in db.schema]
    with coffer.open(str(tmp_path / "again.coffer"), schema=stored) as db:
        assert [c.to_dict() for c in db.schema] == stored


def test_nested_create_makes_linked_objects(db):
    with db.write():
        ann = db.create("Owner", {"name": "Ann", "pets": [{"name": "Rex"}, {"name": "Fido"}], "best": {"name": "Bo"}})
    assert [p.name for p in ann.pets] == ["Rex", "Fido"]
    assert ann.best.name == "Bo"
    assert len(db.objects("Pet")) == 3
    assert ann.best.owner is None


def test_nested_positional_lists_make_linked_objects(db):
    with db.write():
        ann = db.create("Owner", ["Ann", [["Rex"], ("Fido", None)], ["Bo"]])
        ann.address = ["Main"]
        ann.addresses = [["North", "Bergen"]]
        bob = db.create("Owner", {"name": "Bob", "best": ("Max", ann)})
    assert [p.name for p in ann.pets] == ["Rex", "Fido"] and ann.best.name == "Bo"
    assert (ann.address.street, ann.address.city) == ("Main", "Oslo")
    assert [(a.street, a.city) for a in ann.addresses] == [("North", "Bergen")]
    assert bob.best.owner == ann and len(db.objects("Pet")) == 4
    # Too many values for the linked class, or a set (which has no order), are refused.
    with pytest.raises(coffer.InvalidArgumentError, match="class 'Pet' has 3 properties, got 4 values"):
        with db.write():
            db.create("Owner", {"name": "Cy", "best": ["Rex", None, [], "extra"]})
    with pytest.raises(coffer.PropertyTypeError, match="property 'best': expected a Pet object, a dict or list"):
        with db.write():
            db.create("Owner", {"name": "Cy", "best": {"Rex"}})
    assert len(db.objects("Owner")) == 2 and len(db.objects("Pet")) == 4


def test_link_assignment_accepts_object_none_and_dict(db):
    with db.write():
        ann = db.create("Owner", {"name": "Ann"})
        rex = db.create("Pet", {"name": "Rex"})
        rex.owner = ann
    assert rex.owner == ann and isinstance(rex.owner, coffer.Object)
    with db.write():
        rex.owner = None
    assert rex.owner is None
    with db.write():
        rex.owner = {"name": "Bob"}
    assert rex.owner.name == "Bob" and len(db.objects("Owner")) == 2
    with db.write():
        rex.owner = {"name": "Bob", "scores": {"x": 1.0}}
    # A dict with an existing primary key updates that object.
    assert len(db.objects("Owner")) == 2 and rex.owner.scores == {"x": 1.0}


def test_create_update_upserts_nested_objects(db):
    with db.write():
        db.create("Owner", {"name": "Ann", "scores": {"a": 1.0}})
        db.create("Pet", {"name": "Rex", "owner": {"name": "Ann", "nicknames": ["annie"]}}, update="modified")
    ann = db.object_for_primary_key("Owner", "Ann")
    assert set(ann.nicknames) == {"annie"} and ann.scores == {"a": 1.0}
    with pytest.raises(coffer.PrimaryKeyExistsError, match="Ann"):
        with db.write():
            db.create("Pet", {"name": "Max", "owner": {"name": "Ann"}})
    assert len(db.objects("Pet")) == 1


def test_wrong_class_is_a_type_error_naming_the_property(db):
    with db.write():
        ann = db.create("Owner", {"name": "Ann"})
        rex = db.create("Pet", {"name": "Rex"})
    with pytest.raises(coffer.PropertyTypeError, match="owner") as info:
        with db.write():
            rex.owner = rex
    assert isinstance(info.value, TypeError) and info.value.status == coffer.Status.TYPE
    with pytest.raises(TypeError, match="class 'Pet', property 'owner': expected a Owner object"):
        with db.write():
            rex.owner = 5
    with pytest.raises(TypeError, match="pets"):
        with db.write():
            ann.pets.append(ann)
    assert rex.owner is None and len(ann.pets) == 0


def test_unmanaged_model_objects_create_linked_objects(db_path):
    with coffer.open(db_path, schema=[Owner, Pet, Address]) as db:
        with db.write():
            ann = db.add(Owner(name="Ann", best=Pet(name="Rex"), address=Address(street="Main")))
        assert ann.best.name == "Rex" and ann.address.city == "Oslo"
        with pytest.raises(TypeError, match="expected a Pet object, got a Owner"):
            with db.write():
                ann.best = Owner(name="Bob")


def test_unmanaged_objects_hold_collections_as_python_values():
    owner = Owner(name="Ann")
    assert owner.pets == [] and owner.nicknames == set() and owner.scores == {} and owner.best is None
    owner.pets.append(Pet(name="Rex"))
    assert len(owner.pets) == 1
    assert Pet(name="Rex").owners == ()


def test_deleting_a_target_clears_links_and_list_entries(db):
    with db.write():
        ann = db.create("Owner", {"name": "Ann", "pets": [{"name": "Rex"}, {"name": "Fido"}], "extra": {"k": None}})
        rex = ann.pets[0]
        ann.best = rex
        ann.extra = {"pet": rex}
        db.delete(rex)
    assert ann.best is None
    assert [p.name for p in ann.pets] == ["Fido"]
    assert not rex.is_valid
    with pytest.raises(coffer.InvalidObjectError):
        rex.name


def test_linking_to_a_deleted_object_fails(db):
    with db.write():
        ann = db.create("Owner", {"name": "Ann"})
        rex = db.create("Pet", {"name": "Rex"})
        db.delete(ann)
    with pytest.raises(coffer.NotFoundError):
        with db.write():
            rex.owner = ann


def test_objects_of_another_database_are_refused(db_path, tmp_path):
    with coffer.open(db_path, schema=[Owner, Pet, Address]) as db, \
            coffer.open(str(tmp_path / "other.coffer"), schema=[Owner, Pet, Address]) as other:
        with other.write():
            foreign = other.create(Pet, {"name": "Rex"})
        with pytest.raises(coffer.InvalidArgumentError, match="another database handle"):
            with db.write():
                db.create(Owner, {"name": "Ann", "best": foreign})


def test_embedded_objects_live_and_die_with_their_parent(db):
    with db.write():
        ann = db.create("Owner", {"name": "Ann", "address": {"street": "Main"},
                                  "addresses": [{"street": "A"}, {"street": "B", "city": "Rome"}]})
    assert (ann.address.street, ann.address.city) == ("Main", "Oslo")
    assert [(a.street, a.city) for a in ann.addresses] == [("A", "Oslo"), ("B", "Rome")]
    assert len(db.objects("Address")) == 3
    old = ann.address
    with db.write():
        ann.address = {"street": "New"}
    assert not old.is_valid and ann.address.street == "New"
    with db.write():
        ann.address = None
        del ann.addresses[0]
    assert len(db.objects("Address")) == 1
    with db.write():
        db.delete(ann)
    assert len(db.objects("Address")) == 0


def test_embedded_objects_cannot_be_created_alone_or_linked_twice(db):
    with pytest.raises(coffer.InvalidArgumentError, match="Address"):
        with db.write():
            db.create("Address", {"street": "Main"})
    with db.write():
        ann = db.create("Owner", {"name": "Ann", "address": {"street": "Main"}})
        bob = db.create("Owner", {"name": "Bob"})
    with pytest.raises(coffer.PropertyTypeError, match="address"):
        with db.write():
            bob.address = ann.address
    assert bob.address is None


def test_backlinks(db):
    with db.write():
        rex = db.create("Pet", {"name": "Rex"})
        ann = db.create("Owner", {"name": "Ann", "pets": [rex, rex]})
        bob = db.create("Owner", {"name": "Bob", "pets": [rex], "best": rex})
    owners = rex.owners
    assert isinstance(owners, coffer.Results)
    assert len(owners) == 3 and [o.name for o in owners] == ["Ann", "Ann", "Bob"]
    best_of = rex.linking_objects("Owner", "best")
    assert [o.name for o in best_of] == ["Bob"]
    with db.write():
        ann.pets.clear()
    assert [o.name for o in rex.owners] == ["Bob"]
    with pytest.raises(coffer.InvalidArgumentError, match="name"):
        rex.linking_objects("Owner", "name")
    with pytest.raises(coffer.PropertyNotFoundError):
        rex.linking_objects("Owner", "nope")
    with pytest.raises(coffer.NotFoundError):
        rex.linking_objects("Nobody", "pets")
    with pytest.raises(TypeError, match="read-only"):
        with db.write():
            rex.owners = []
    with db.write():
        db.delete(rex.owners)
    assert len(db.objects("Owner")) == 1 and bob.is_valid is False


def test_links_in_an_encrypted_file(tmp_path):
    path = str(tmp_path / "enc.coffer")
    with coffer.open(path, schema=[Owner, Pet, Address], encryption_key=KEY) as db:
        with db.write():
            db.create(Owner, {"name": "Ann", "pets": [{"name": "Rex"}], "scores": {"b": 2.0, "a": 1.0},
                              "extra": {"deep": [1, [2, {"x": "y"}]]}})
    with coffer.open(path, schema=[Owner, Pet, Address], encryption_key=KEY) as db:
        ann = db.object_for_primary_key(Owner, "Ann")
        assert ann.pets[0].name == "Rex" and ann.pets[0].owners[0] == ann
        assert ann.scores == {"a": 1.0, "b": 2.0}
        assert ann.extra == {"deep": [1, [2, {"x": "y"}]]}
    with pytest.raises(coffer.EncryptionError):
        coffer.open(path, schema=[Owner, Pet, Address])
