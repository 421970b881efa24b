import datetime
import sys
from typing import Any, Dict, List, Optional

import pytest
from models import PERSON, Dog, Everything

import coffer


def schema_of(db, name):
    return next(s for s in db.schema if s.name == name)


def test_model_classes_become_schemas(db_path):
    with coffer.open(db_path, schema=[Dog, Everything]) as db:
        dog = schema_of(db, "Dog")
        assert [(p.name, p.type, p.optional) for p in dog.properties] == [
            ("id", "int", False),
            ("name", "string", False),
            ("breed", "string", True),
            ("age", "int", False),
        ]
        assert dog.primary_key == "id"
        assert next(p for p in dog.properties if p.name == "name").indexed
        types = {p.name: p.type for p in schema_of(db, "Everything").properties}
        assert types["ratio"] == "float" and types["amount"] == "double"
        assert types["blob"] == "data" and types["when"] == "date"
        assert types["oid"] == "objectId" and types["uid"] == "uuid" and types["money"] == "decimal128"


def test_class_vars_and_private_names_are_not_properties():
    assert "kind" not in Dog._coffer_fields
    assert Dog.kind == "not a property"

    class Hidden(coffer.Object):
        _cache: int = 0
        value: int = 0

    assert list(Hidden._coffer_fields) == ["value"]


@pytest.mark.skipif(sys.version_info < (3, 10), reason="X | None needs Python 3.10")
def test_pipe_optional_annotation(db_path):
    namespace: Dict[str, Any] = {"coffer": coffer}
    exec("class Pipe(coffer.Object):\n    note: str | None = None\n", namespace)
    with coffer.open(db_path, schema=[namespace["Pipe"]]) as db:
        assert schema_of(db, "Pipe").properties[0].optional


def test_string_annotations_are_resolved(db_path):
    from models_postponed import Later

    with coffer.open(db_path, schema=[Later]) as db:
        assert [(p.type, p.optional) for p in schema_of(db, "Later").properties] == [("int", True), ("objectId", True)]


def test_subclasses_inherit_properties(db_path):
    class Base(coffer.Object):
        id: int = coffer.primary_key()

    class Derived(Base):
        extra: str = "x"

    with coffer.open(db_path, schema=[Derived]) as db:
        assert [p.name for p in schema_of(db, "Derived").properties] == ["id", "extra"]
        with db.write():
            d = db.add(Derived(id=1))
        assert d.extra == "x"


def test_reserved_names_are_rejected():
    with pytest.raises(coffer.SchemaError, match="property 'is_valid': the name is used by coffer.Object"):

        class Bad(coffer.Object):
            is_valid: bool


@pytest.mark.parametrize(
    "annotation, message",
    [
        (Dict[int, str], "maps need str keys"),
        (list, "give the element type"),
        (List[complex], "unsupported annotation"),
        (complex, "unsupported annotation"),
        (Optional[List[int]], "unsupported annotation"),
    ],
)
def test_unsupported_annotations(db_path, annotation, message):
    model = type("Unsupported", (coffer.Object,), {"__annotations__": {"field": annotation}})
    with pytest.raises(coffer.SchemaError, match=f"class 'Unsupported', property 'field': {message}"):
        coffer.open(db_path, schema=[model])


def test_unions_other_than_optional_are_rejected(db_path):
    from typing import Union

    model = type("U", (coffer.Object,), {"__annotations__": {"field": Union[int, str]}})
    with pytest.raises(coffer.SchemaError, match="only Optional\\[X\\] unions"):
        coffer.open(db_path, schema=[model])


def test_unresolvable_annotations_are_a_schema_error(db_path):
    model = type("Broken", (coffer.Object,), {"__annotations__": {"field": "NoSuchType"}})
    with pytest.raises(coffer.SchemaError, match="class 'Broken': cannot resolve its annotations"):
        coffer.open(db_path, schema=[model])


def test_dict_schema_forms(db_path):
    listed = {
        "name": "Listed",
        "primaryKey": "id",
        "embedded": False,
        "properties": [
            {"name": "id", "type": "string"},
            {"name": "when", "type": "date", "optional": True},
            {"name": "tag", "type": "string", "indexed": True, "default": "none"},
        ],
    }
    with coffer.open(db_path, schema=[PERSON, listed]) as db:
        person = schema_of(db, "Person")
        assert [(p.name, p.type, p.optional, p.indexed) for p in person.properties] == [
            ("name", "string", False, False),
            ("age", "int", True, False),
            ("email", "string", True, True),
        ]
        assert person.primary_key == "name"
        with db.write():
            obj = db.create("Listed", {"id": "a"})
        assert obj.tag == "none" and obj.when is None
        assert schema_of(db, "Listed").to_dict() == {
            "name": "Listed",
            "primaryKey": "id",
            "properties": {
                "id": {"type": "string", "optional": False},
                "when": {"type": "date", "optional": True},
                "tag": {"type": "string", "optional": False, "indexed": True},
            },
        }


@pytest.mark.parametrize(
    "prop, message",
    [
        ("Nobody[]", "unknown type 'Nobody'"),
        ({"type": "list"}, "type 'list' needs an 'objectType'"),
        ({"type": "object", "objectType": "int"}, "objectType 'int' is not a class of the schema"),
        ({"type": "int", "objectType": "Person"}, "'objectType' is only for"),
        ({"type": "linkingObjects", "objectType": "Person"}, "linkingObjects needs 'objectType'"),
        ({"type": "int", "property": "x"}, "'property' is only for linkingObjects"),
        ("integer", "unknown type 'integer'"),
        ({"optional": True}, "no 'type' given"),
        ({"type": "int", "mapTo": "x"}, "unknown keys \\['mapTo'\\]"),
        ({"type": "int", "indexed": "full-text"}, "'indexed' must be True or False"),
        (5, "expected a type string or a dict, got int"),
    ],
)
def test_dict_schema_errors_name_class_and_property(db_path, prop, message):
    schema = [PERSON, {"name": "Thing", "properties": {"field": prop}}]
    with pytest.raises(coffer.SchemaError, match=f"class 'Thing', property 'field': (type .*: )?{message}"):
        coffer.open(db_path, schema=schema)


@pytest.mark.parametrize(
    "cls, message",
    [
        ({"properties": {}}, "needs a non-empty 'name'"),
        ({"name": "E", "embedded": "yes", "properties": {}}, "class 'E': 'embedded' must be True or False"),
        ({"name": "E", "properties": "int"}, "class 'E': 'properties' must be a dict or a list"),
        ({"name": "E", "properties": [{"type": "int"}]}, "needs a dict with a 'name'"),
        ({"name": "E", "primaryKey": "nope", "properties": {"a": "int"}}, "primaryKey 'nope' is not one of"),
        ({"name": "E", "asymmetric": True, "properties": {}}, "unknown keys \\['asymmetric'\\]"),
    ],
)
def test_dict_class_errors(db_path, cls, message):
    with pytest.raises(coffer.SchemaError, match=message):
        coffer.open(db_path, schema=[cls])


def test_schema_must_be_a_list_of_classes(db_path):
    with pytest.raises(coffer.SchemaError, match="must be a list"):
        coffer.open(db_path, schema=PERSON)
    with pytest.raises(coffer.SchemaError, match="must be coffer.Object subclasses or dicts"):
        coffer.open(db_path, schema=[int])
    with pytest.raises(coffer.SchemaError, match="class 'Person' appears twice"):
        coffer.open(db_path, schema=[PERSON, PERSON])


def test_errors_found_by_the_c_library_are_schema_errors(db_path):
    bad_key = {"name": "Bad", "primaryKey": "x", "properties": {"x": "double"}}
    with pytest.raises(coffer.SchemaError, match="Bad") as info:
        coffer.open(db_path, schema=[bad_key])
    assert info.value.status == coffer.Status.SCHEMA
    with pytest.raises(coffer.SchemaError):
        coffer.open(db_path, schema=[{"name": "x" * 100, "properties": {"a": "int"}}])


VERSION_1 = {"name": "Item", "properties": {"name": "string"}}
VERSION_2 = {"name": "Item", "properties": {"name": "string", "added": "int?"}}


def test_a_higher_schema_version_applies_the_new_schema(db_path):
    with coffer.open(db_path, schema=[VERSION_1], schema_version=1) as db:
        with db.write():
            db.create("Item", {"name": "old"})
    with coffer.open(db_path, schema=[VERSION_2], schema_version=2) as db:
        assert db.schema_version == 2
        item = db.objects("Item")[0]
        assert (item.name, item.added) == ("old", None)


def test_a_changed_schema_at_the_same_version_needs_a_migration(db_path):
    with coffer.open(db_path, schema=[VERSION_1], schema_version=1) as db:
        with db.write():
            db.create("Item", {"name": "kept"})
    with pytest.raises(coffer.MigrationRequiredError, match="added") as info:
        coffer.open(db_path, schema=[VERSION_2], schema_version=1)
    assert info.value.status == coffer.Status.MIGRATION_REQUIRED
    with coffer.open(db_path, schema=[VERSION_1], schema_version=1) as db:
        assert db.objects("Item")[0].name == "kept"


def test_a_lower_schema_version_is_an_error(db_path):
    with coffer.open(db_path, schema=[VERSION_1], schema_version=3):
        pass
    with pytest.raises(coffer.SchemaVersionError):
        coffer.open(db_path, schema=[VERSION_1], schema_version=2)


def test_delete_if_migration_needed_starts_over(db_path):
    with coffer.open(db_path, schema=[VERSION_1], schema_version=1) as db:
        with db.write():
            db.create("Item", {"name": "dropped"})
    with coffer.open(db_path, schema=[VERSION_2], schema_version=1, delete_if_migration_needed=True) as db:
        assert len(db.objects("Item")) == 0
        assert [p.name for p in db.schema[0].properties] == ["name", "added"]


def test_delete_if_migration_needed_keeps_a_file_that_needs_none(db_path):
    with coffer.open(db_path, schema=[VERSION_1]) as db:
        with db.write():
            db.create("Item", {"name": "kept"})
    with coffer.open(db_path, schema=[VERSION_1], delete_if_migration_needed=True) as db:
        assert db.objects("Item")[0].name == "kept"


def test_delete_if_migration_needed_never_deletes_a_file_in_use(db_path):
    with coffer.open(db_path, schema=[VERSION_1]) as db:
        with db.write():
            db.create("Item", {"name": "in use"})
        with pytest.raises(coffer.BusyError, match="is open in this process"):
            coffer.open(db_path, schema=[VERSION_2], delete_if_migration_needed=True)
        assert db.objects("Item")[0].name == "in use"


def test_schema_declared_defaults_apply_to_dates(db_path):
    stamp = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    schema = [{"name": "E", "properties": {"at": {"type": "date", "default": stamp}}}]
    with coffer.open(db_path, schema=schema) as db:
        with db.write():
            assert db.create("E").at == stamp


LINK_TYPE_STRINGS = [
    ("Person", ("object", True, "", "Person")),
    ({"type": "object", "objectType": "Person"}, ("object", True, "", "Person")),
    ("Person[]", ("object", False, "list", "Person")),
    ({"type": "list", "objectType": "Person"}, ("object", False, "list", "Person")),
    ("Person{}", ("object", True, "map", "Person")),
    ("string[]", ("string", False, "list", None)),
    ({"type": "list", "objectType": "int?"}, ("int", True, "list", None)),
    ("int?[]", ("int", True, "list", None)),
    ("int<>", ("int", False, "set", None)),
    ({"type": "set", "objectType": "uuid"}, ("uuid", False, "set", None)),
    ("mixed{}", ("mixed", True, "map", None)),
    ({"type": "dictionary", "objectType": "date"}, ("date", False, "map", None)),
    ("mixed", ("mixed", True, "", None)),
    ("mixed[]", ("mixed", True, "list", None)),
]


@pytest.mark.parametrize("spec, expected", LINK_TYPE_STRINGS)
def test_realm_js_link_and_collection_types(db_path, spec, expected):
    with coffer.open(db_path, schema=[PERSON, {"name": "Thing", "properties": {"field": spec}}]) as db:
        prop = schema_of(db, "Thing").properties[0]
    assert (prop.type, prop.optional, prop.collection, prop.object_type) == expected


def test_annotations_for_links_collections_and_mixed(db_path):
    from typing import Any, Dict, List, Optional, Set

    class Target(coffer.Object):
        id: int

    class Holder(coffer.Object):
        one: "Target | None"
        two: Optional[Target]
        many: List[Target]
        many_builtin: list[Target]
        tags: set[str]
        tag_set: Set[Optional[int]]
        weights: dict[str, float]
        links: Dict[str, Target]
        anything: Any
        mixed: coffer.Mixed
        mixed_list: List[coffer.Mixed]
        holders: coffer.LinkingObjects = coffer.linking_objects("Holder", "many_holder")
        many_holder: List["Holder"]
        plain = coffer.linking_objects("Holder", "one_holder")
        one_holder: Optional["Holder"]

    with coffer.open(db_path, schema=[Target, Holder]) as db:
        props = {p.name: (p.type, p.optional, p.collection, p.object_type) for p in schema_of(db, "Holder").properties}
    assert props == {
        "one": ("object", True, "", "Target"),
        "two": ("object", True, "", "Target"),
        "many": ("object", False, "list", "Target"),
        "many_builtin": ("object", False, "list", "Target"),
        "tags": ("string", False, "set", None),
        "tag_set": ("int", True, "set", None),
        "weights": ("double", False, "map", None),
        "links": ("object", True, "map", "Target"),
        "anything": ("mixed", True, "", None),
        "mixed": ("mixed", True, "", None),
        "mixed_list": ("mixed", True, "list", None),
        "holders": ("linkingObjects", False, "", "Holder"),
        "many_holder": ("object", False, "list", "Holder"),
        "plain": ("linkingObjects", False, "", "Holder"),
        "one_holder": ("object", True, "", "Holder"),
    }


def test_link_schema_errors_found_by_the_c_library(db_path):
    address = {"name": "Address", "embedded": True, "properties": {"street": "string"}}
    with pytest.raises(coffer.SchemaError, match="set"):
        coffer.open(db_path, schema=[address, {"name": "P", "properties": {"a": "Address<>"}}])
    with pytest.raises(coffer.SchemaError, match="primary key"):
        coffer.open(db_path, schema=[{**address, "primaryKey": "street"}])
    with pytest.raises(coffer.SchemaError, match="not a link, list or set of links"):
        coffer.open(db_path, schema=[{"name": "P", "properties": {
            "n": "int", "b": {"type": "linkingObjects", "objectType": "P", "property": "n"}}}])
    with pytest.raises(coffer.SchemaError, match="Nowhere"):
        coffer.open(db_path, schema=[{"name": "P", "properties": {
            "b": {"type": "linkingObjects", "objectType": "Nowhere", "property": "n"}}}])
    with pytest.raises(coffer.SchemaError, match="indexed"):
        coffer.open(db_path, schema=[{"name": "P", "properties": {"t": {"type": "int[]", "indexed": True}}}])
