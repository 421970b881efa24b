import pytest
from models import PERSON, Dog

import coffer


@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=[Dog, PERSON]) as database:
        yield database


def test_create_from_dict_and_read_back(db):
    with db.write():
        rex = db.create("Dog", {"id": 1, "name": "Rex", "breed": "Husky"})
    assert isinstance(rex, Dog)
    assert (rex.id, rex.name, rex.breed, rex.age) == (1, "Rex", "Husky", 1)
    assert rex["name"] == "Rex"
    assert rex.is_managed and rex.is_valid


def test_create_with_model_class_and_positional_list(db):
    with db.write():
        dog = db.create(Dog, [2, "Fido"])
        person = db.create("Person", ["Ann", 31])
    assert (dog.id, dog.name, dog.breed, dog.age) == (2, "Fido", None, 1)
    assert (person.name, person.age, person.email) == ("Ann", 31, None)
    assert type(person) is coffer.Object


def test_positional_list_longer_than_the_schema_is_an_error(db):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="class 'Person' has 3 properties, got 4 values"):
            db.create("Person", ["Ann", 1, "a@b", "extra"])
    assert len(db.objects("Person")) == 0


def test_values_of_the_wrong_kind_are_rejected(db):
    with db.write():
        with pytest.raises(TypeError, match="must be a dict or a list"):
            db.create("Person", "Ann")


def test_unknown_property_in_create_names_it(db):
    with db.write():
        with pytest.raises(coffer.PropertyNotFoundError, match="class 'Person' has no property named 'nickname'"):
            db.create("Person", {"name": "Ann", "nickname": "A"})


def test_unknown_class_names_it(db):
    with pytest.raises(coffer.NotFoundError, match="no class named 'Cat'"):
        db.objects("Cat")
    with db.write():
        with pytest.raises(coffer.NotFoundError, match="Cat"):
            db.create("Cat", {})


def test_model_class_not_in_the_schema_is_rejected(db_path):
    with coffer.open(db_path, schema=[PERSON]) as db:
        with pytest.raises(coffer.NotFoundError, match="Dog is not part of the schema"):
            db.objects(Dog)
        with pytest.raises(TypeError):
            db.objects(42)


def test_add_makes_the_instance_managed(db):
    rex = Dog(id=1, name="Rex")
    assert not rex.is_managed
    assert rex.age == 1 and rex.breed is None
    with db.write():
        assert db.add(rex) is rex
        assert db.add(rex) is rex  # adding again does nothing
    assert rex.is_managed
    assert db.object_for_primary_key(Dog, 1) == rex
    assert len(db.objects(Dog)) == 1


def test_add_needs_a_model_instance(db):
    with db.write():
        with pytest.raises(TypeError, match="add\\(\\) takes an instance"):
            db.add({"id": 1})


def test_add_rejects_an_object_of_another_handle(db_path, db):
    with db.write():
        rex = db.add(Dog(id=1, name="Rex"))
    with coffer.open(db_path, schema=[Dog, PERSON]) as other:
        with other.write():
            with pytest.raises(coffer.InvalidArgumentError, match="another database handle"):
                other.add(rex)


def test_unmanaged_instances_check_their_property_names():
    with pytest.raises(TypeError, match="Dog\\(\\) has no property named 'colour'"):
        Dog(colour="brown")
    dog = Dog(id=3)
    dog.name = "Max"
    assert dog["name"] == "Max"
    with pytest.raises(coffer.PropertyNotFoundError):
        dog.colour = "brown"
    with pytest.raises(TypeError, match="base class"):
        coffer.Object()


def test_duplicate_primary_key_is_an_error_and_keeps_committed_data(db):
    with db.write():
        db.create(Dog, {"id": 1, "name": "Rex"})
    with pytest.raises(coffer.PrimaryKeyExistsError, match="class 'Dog' already has an object with primary key 1"):
        with db.write():
            db.create(Dog, {"id": 2, "name": "Fido"})
            db.create(Dog, {"id": 1, "name": "Other"})
    assert [d.name for d in db.objects(Dog)] == ["Rex"]
    assert db.object_for_primary_key(Dog, 2) is None


def test_update_all_and_modified(db):
    with db.write():
        db.create(Dog, {"id": 1, "name": "Rex", "breed": "Husky", "age": 5})
    with db.write():
        same = db.create(Dog, {"id": 1, "name": "Rex II"}, update="all")
    # Only the given values change; the declared default of age is not applied.
    assert (same.name, same.breed, same.age) == ("Rex II", "Husky", 5)
    with db.write():
        db.create(Dog, {"id": 1, "breed": None}, update="modified")
        created = db.create(Dog, {"id": 2, "name": "New"}, update="modified")
    assert db.object_for_primary_key(Dog, 1).breed is None
    assert created.age == 1  # a new object gets its defaults
    assert len(db.objects(Dog)) == 2


@pytest.mark.parametrize("update", [True, "yes", 1, None])
def test_bad_update_values_are_rejected(db, update):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="update must be False, 'modified' or 'all'"):
            db.create(Dog, {"id": 1}, update=update)


def test_missing_primary_key_is_an_error(db):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="needs a value for its primary key 'name'"):
            db.create("Person", {"age": 3})


def test_assignment_inside_a_write(db):
    with db.write():
        rex = db.create(Dog, {"id": 1, "name": "Rex"})
    with db.write():
        rex.name = "Rex II"
        rex["age"] = 7
        assert rex.name == "Rex II"  # the write transaction sees its own changes
    assert (rex.name, rex.age) == ("Rex II", 7)
    person = None
    with db.write():
        person = db.create("Person", {"name": "Ann"})
        person.age = 40  # attribute access on a class declared as a dict
    assert person.age == 40


def test_assignment_outside_a_write_is_an_error(db):
    with db.write():
        rex = db.create(Dog, {"id": 1, "name": "Rex"})
        ann = db.create("Person", {"name": "Ann"})
    with pytest.raises(coffer.NotInWriteError, match="setting Dog.name needs a write transaction"):
        rex.name = "Max"
    with pytest.raises(coffer.NotInWriteError):
        rex["age"] = 3
    with pytest.raises(coffer.NotInWriteError):
        ann.age = 3
    assert rex.name == "Rex" and ann.age is None


def test_unknown_properties_of_managed_objects(db):
    with db.write():
        ann = db.create("Person", {"name": "Ann"})
    with pytest.raises(AttributeError, match="class 'Person' has no property named 'height'"):
        ann.height
    with pytest.raises(KeyError):
        ann["height"]
    with pytest.raises(coffer.PropertyNotFoundError):
        ann[0]
    with db.write():
        with pytest.raises(coffer.PropertyNotFoundError):
            ann.height = 2


def test_primary_key_cannot_change(db):
    with db.write():
        rex = db.create(Dog, {"id": 1, "name": "Rex"})
    with pytest.raises(coffer.ImmutablePropertyError, match="primary key 'id' cannot be changed"):
        with db.write():
            rex.id = 2
    assert rex.id == 1


def test_wrong_value_types_name_class_and_property(db):
    with db.write():
        rex = db.create(Dog, {"id": 1, "name": "Rex"})
        with pytest.raises(coffer.PropertyTypeError, match="class 'Dog', property 'age': expected int, got str"):
            rex.age = "old"
        with pytest.raises(TypeError):
            db.create(Dog, {"id": "two"})
        with pytest.raises(coffer.PropertyTypeError, match="null is not allowed"):
            rex.name = None
    assert rex.age == 1 and rex.name == "Rex"


def test_write_rolls_back_on_exception(db):
    with pytest.raises(RuntimeError, match="boom"):
        with db.write():
            db.create(Dog, {"id": 1, "name": "Rex"})
            raise RuntimeError("boom")
    assert len(db.objects(Dog)) == 0
    assert not db.in_transaction


def test_nested_write_is_an_error(db):
    with db.write():
        assert db.in_transaction
        with pytest.raises(coffer.MisuseError, match="already open"):
            with db.write():
                pass
        db.create(Dog, {"id": 1})
    assert len(db.objects(Dog)) == 1


def test_create_and_delete_need_a_write(db):
    with pytest.raises(coffer.NotInWriteError, match="create\\(\\) needs a write transaction"):
        db.create(Dog, {"id": 1})
    with pytest.raises(coffer.NotInWriteError):
        db.add(Dog(id=1))
    with pytest.raises(coffer.NotInWriteError):
        db.delete(db.objects(Dog))


def test_object_for_primary_key(db):
    with db.write():
        db.create("Person", {"name": "Ann", "age": 3})
    assert db.object_for_primary_key("Person", "Ann").age == 3
    assert db.object_for_primary_key("Person", "Bob") is None
    with pytest.raises(coffer.PropertyTypeError, match="property 'name': expected str, got int"):
        db.object_for_primary_key("Person", 5)


def test_object_for_primary_key_on_a_class_without_one(db_path):
    with coffer.open(db_path, schema=[{"name": "Log", "properties": {"line": "string"}}]) as db:
        with pytest.raises(coffer.InvalidArgumentError, match="class 'Log' has no primary key"):
            db.object_for_primary_key("Log", "x")


def test_delete_object_results_and_lists(db):
    with db.write():
        dogs = [db.create(Dog, {"id": i, "name": f"d{i}"}) for i in range(6)]
    with db.write():
        db.delete(dogs[0])
    assert not dogs[0].is_valid and dogs[1].is_valid
    with db.write():
        db.delete([dogs[1], dogs[2]])
    assert [d.id for d in db.objects(Dog)] == [3, 4, 5]
    with db.write():
        db.delete(db.objects(Dog))
    assert len(db.objects(Dog)) == 0
    assert not any(d.is_valid for d in dogs)


def test_deleted_objects_raise_on_use(db):
    with db.write():
        rex = db.create(Dog, {"id": 1, "name": "Rex"})
        db.delete(rex)
        assert not rex.is_valid
        with pytest.raises(coffer.InvalidObjectError, match="the Dog object was deleted"):
            rex.name
        with pytest.raises(coffer.InvalidObjectError):
            rex.name = "x"
        with pytest.raises(coffer.InvalidObjectError):
            db.delete(rex)
    assert repr(rex) == "<Dog (deleted)>"


def test_delete_rejects_what_it_cannot_delete(db):
    with db.write():
        with pytest.raises(coffer.InvalidArgumentError, match="unmanaged"):
            db.delete(Dog(id=1))
        with pytest.raises(TypeError):
            db.delete(5)
        with pytest.raises(TypeError, match="takes objects"):
            db.delete([1, 2])


def test_equality_hash_dict_and_repr(db):
    with db.write():
        rex = db.create(Dog, {"id": 1, "name": "Rex"})
        fido = db.create(Dog, {"id": 2, "name": "Fido"})
    again = db.object_for_primary_key(Dog, 1)
    assert rex == again and hash(rex) == hash(again) and rex != fido
    assert len({rex, again, fido}) == 2
    assert rex.to_dict() == {"id": 1, "name": "Rex", "breed": None, "age": 1}
    assert list(rex) == ["id", "name", "breed", "age"]
    assert repr(rex) == "Dog(id=1, name='Rex', breed=None, age=1)"
    assert rex.object_schema.primary_key == "id"
    unmanaged = Dog(id=5)
    assert unmanaged == unmanaged and unmanaged != Dog(id=5)
