"""Schemas: ObjectSchema and PropertySchema, classes declared as
Realm-JS-style dicts, their conversion to the C schema arrays, and the
schema read back from an open database. Model classes become schemas in
model.py, a layer up, which also reads the whole schema list."""

from __future__ import annotations

import ctypes
import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _capi
from .errors import SchemaError

# Type names as the schema and Realm JS spell them, for scalar properties.
SCALAR_TYPES: Dict[str, int] = {
    "bool": _capi.TYPE_BOOL,
    "int": _capi.TYPE_INT,
    "float": _capi.TYPE_FLOAT,
    "double": _capi.TYPE_DOUBLE,
    "string": _capi.TYPE_STRING,
    "data": _capi.TYPE_BINARY,
    "date": _capi.TYPE_DATE,
    "objectId": _capi.TYPE_OBJECT_ID,
    "uuid": _capi.TYPE_UUID,
    "decimal128": _capi.TYPE_DECIMAL128,
}
TYPE_CODES: Dict[str, int] = {
    **SCALAR_TYPES,
    "object": _capi.TYPE_LINK,
    "mixed": _capi.TYPE_MIXED,
    "linkingObjects": _capi.TYPE_LINKING_OBJECTS,
}
TYPE_NAMES: Dict[int, str] = {code: name for name, code in TYPE_CODES.items()}

# Collection kinds: the type-string suffix, the "type" word, and the C code.
COLLECTION_SUFFIXES = {"[]": "list", "<>": "set", "{}": "map"}
COLLECTION_WORDS = {"list": "list", "set": "set", "dictionary": "map"}
COLLECTION_CODES = {"": _capi.COLLECTION_NONE, "list": _capi.COLLECTION_LIST,
                    "set": _capi.COLLECTION_SET, "map": _capi.COLLECTION_MAP}
COLLECTION_NAMES = {code: name for name, code in COLLECTION_CODES.items()}

CLASS_KEYS = {"name", "primaryKey", "embedded", "properties"}
PROPERTY_KEYS = {"name", "type", "objectType", "property", "optional", "indexed", "default"}


@dataclasses.dataclass(frozen=True)
class PropertySchema:
    """One property as the database stores it."""

    name: str
    type: str
    optional: bool = False
    primary_key: bool = False
    indexed: bool = False
    # "", "list", "set" or "map".
    collection: str = ""
    # The target class of a link, or the origin class of linkingObjects.
    object_type: Optional[str] = None
    # The origin property of linkingObjects.
    origin_property: Optional[str] = None

    def type_string(self, optional_mark: bool = True) -> str:
        """The Realm-JS type string ("int?", "Person[]", "mixed{}");
        without the "?" when optional_mark is False."""
        if self.type == "linkingObjects":
            return "linkingObjects"
        base = self.object_type if self.type == "object" else self.type
        assert base is not None
        if optional_mark and self.optional and self.type not in ("object", "mixed"):
            base += "?"
        for suffix, kind in COLLECTION_SUFFIXES.items():
            if kind == self.collection:
                return base + suffix
        return base


@dataclasses.dataclass(frozen=True)
class ObjectSchema:
    """One class as the database stores it; properties in property-id order."""

    name: str
    properties: Tuple[PropertySchema, ...]
    embedded: bool = False

    @property
    def primary_key(self) -> Optional[str]:
        for prop in self.properties:
            if prop.primary_key:
                return prop.name
        return None

    def to_dict(self) -> Dict[str, Any]:
        """The class in the Realm-JS dict form that coffer.open() accepts."""
        out: Dict[str, Any] = {"name": self.name, "properties": {}}
        for prop in self.properties:
            spec: Dict[str, Any] = {"type": prop.type_string(False), "optional": prop.optional}
            if prop.type == "linkingObjects":
                spec = {"type": "linkingObjects", "objectType": prop.object_type, "property": prop.origin_property}
            if prop.indexed:
                spec["indexed"] = True
            out["properties"][prop.name] = spec
        if self.primary_key is not None:
            out["primaryKey"] = self.primary_key
        if self.embedded:
            out["embedded"] = True
        return out


@dataclasses.dataclass
class DeclaredClass:
    """A class as the caller declared it: its schema, the Python-side
    defaults of its properties, and the model class if there is one."""

    schema: ObjectSchema
    defaults: Dict[str, Any]
    model: Optional[type] = None


def _element(text: str, class_names: Sequence[str]) -> Tuple[str, bool, Optional[str]]:
    """(type, optional, object_type) of "int?", "mixed" or a class name."""
    optional = text.endswith("?")
    base = text[:-1] if optional else text
    if base in SCALAR_TYPES:
        return base, optional, None
    if base == "mixed":
        return "mixed", True, None
    if base in class_names:
        return "object", True, base
    known = ", ".join([*SCALAR_TYPES, "mixed"])
    raise _TypeProblem(f"unknown type {text!r} (known types: {known}, or a class of the schema)")


def parse_type(spec: Mapping[str, Any], class_names: Sequence[str]) -> PropertySchema:
    """The type part of a property spec (its "type", "objectType" and
    "property"), as a PropertySchema without a name; _TypeProblem, which
    callers turn into a SchemaError naming the property, when it is wrong."""
    type_string = spec["type"]
    object_type = spec.get("objectType")
    if not isinstance(type_string, str) or not type_string:
        raise _TypeProblem(f"the type must be a non-empty string, got {type_string!r}")
    if object_type is not None and not isinstance(object_type, str):
        raise _TypeProblem(f"objectType must be a string, got {object_type!r}")
    if type_string == "linkingObjects":
        origin = spec.get("property")
        if object_type is None or not isinstance(origin, str):
            raise _TypeProblem("linkingObjects needs 'objectType' (the origin class) and 'property' (its link)")
        return PropertySchema("", "linkingObjects", object_type=object_type, origin_property=origin)
    if "property" in spec:
        raise _TypeProblem("'property' is only for linkingObjects")
    collection = ""
    element = type_string
    if type_string in COLLECTION_WORDS or type_string == "object":
        if object_type is None:
            raise _TypeProblem(f"type {type_string!r} needs an 'objectType'")
        collection = COLLECTION_WORDS.get(type_string, "")
        element = object_type
        if type_string == "object" and object_type not in class_names:
            raise _TypeProblem(f"objectType {object_type!r} is not a class of the schema")
    else:
        if object_type is not None:
            raise _TypeProblem(f"'objectType' is only for object, list, set, dictionary and linkingObjects, not {type_string!r}")
        for suffix, kind in COLLECTION_SUFFIXES.items():
            if type_string.endswith(suffix):
                collection, element = kind, type_string[: -len(suffix)]
    base, optional, target = _element(element, class_names)
    if base == "object" and collection in ("list", "set"):
        optional = False
    return PropertySchema("", base, optional, collection=collection, object_type=target)


class _TypeProblem(Exception):
    pass


def _flag(where: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SchemaError(f"{where}: '{key}' must be True or False, got {value!r}")
    return value


def _property_from_spec(
    class_name: str, name: str, spec: Any, class_names: Sequence[str]
) -> Tuple[PropertySchema, Any]:
    """A property from a type string or a spec dict; returns it and its
    default (dataclasses.MISSING when none is given)."""
    where = f"class '{class_name}', property '{name}'"
    if not isinstance(name, str) or not name:
        raise SchemaError(f"class '{class_name}': property names must be non-empty strings, got {name!r}")
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, Mapping):
        raise SchemaError(f"{where}: expected a type string or a dict, got {type(spec).__name__}")
    unknown = set(spec) - PROPERTY_KEYS
    if unknown:
        raise SchemaError(f"{where}: unknown keys {sorted(unknown)} (allowed: {sorted(PROPERTY_KEYS)})")
    if "type" not in spec:
        raise SchemaError(f"{where}: no 'type' given")
    try:
        parsed = parse_type(spec, class_names)
    except _TypeProblem as exc:
        raise SchemaError(f"{where}: {exc}") from None
    optional = parsed.optional
    if "optional" in spec:
        optional = _flag(where, "optional", spec["optional"]) or optional
    indexed = _flag(where, "indexed", spec["indexed"]) if "indexed" in spec else False
    default = spec["default"] if "default" in spec else dataclasses.MISSING
    return dataclasses.replace(parsed, name=name, optional=optional, indexed=indexed), default


def class_from_dict(spec: Mapping[str, Any], class_names: Sequence[str]) -> DeclaredClass:
    """A class declared as a Realm-JS-style dict; `class_names` are the
    classes of the whole schema, which links may name."""
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise SchemaError(f"a schema dict needs a non-empty 'name', got {name!r}")
    unknown = set(spec) - CLASS_KEYS
    if unknown:
        raise SchemaError(f"class '{name}': unknown keys {sorted(unknown)} (allowed: {sorted(CLASS_KEYS)})")
    embedded = _flag(f"class '{name}'", "embedded", spec.get("embedded", False))
    raw = spec.get("properties")
    items: List[Tuple[Any, Any]] = []
    if isinstance(raw, Mapping):
        items = list(raw.items())
    elif isinstance(raw, Sequence) and not isinstance(raw, (str, bytes)):
        for entry in raw:
            if not isinstance(entry, Mapping) or "name" not in entry:
                raise SchemaError(f"class '{name}': each property in the list needs a dict with a 'name'")
            items.append((entry["name"], {k: v for k, v in entry.items() if k != "name"}))
    else:
        raise SchemaError(f"class '{name}': 'properties' must be a dict or a list of dicts")
    properties = []
    defaults: Dict[str, Any] = {}
    for prop_name, prop_spec in items:
        prop, default = _property_from_spec(name, prop_name, prop_spec, class_names)
        properties.append(prop)
        if default is not dataclasses.MISSING:
            defaults[prop_name] = default
    primary = spec.get("primaryKey")
    if primary is not None:
        properties = _mark_primary_key(name, properties, primary)
    return DeclaredClass(ObjectSchema(name, tuple(properties), embedded), defaults)


def _mark_primary_key(class_name: str, properties: List[PropertySchema], primary: Any) -> List[PropertySchema]:
    names = [p.name for p in properties]
    if not isinstance(primary, str) or primary not in names:
        raise SchemaError(f"class '{class_name}': primaryKey {primary!r} is not one of its properties {names}")
    return [dataclasses.replace(p, primary_key=True) if p.name == primary else p for p in properties]


def declared_class_names(schema: Sequence[Any]) -> List[Any]:
    names = []
    for item in schema:
        if isinstance(item, Mapping):
            names.append(item.get("name"))
        elif isinstance(item, type):
            names.append(item.__name__)
    return names


class CSchema:
    """The C arrays for a list of classes, with the buffers they point into."""

    def __init__(self, classes: Sequence[ObjectSchema]) -> None:
        self._keep: List[Any] = []
        self.classes = (_capi.coffer_class_schema * len(classes))()
        for i, cls in enumerate(classes):
            props = (_capi.coffer_property_schema * len(cls.properties))()
            for j, prop in enumerate(cls.properties):
                props[j].name = self._text(prop.name)
                props[j].type = TYPE_CODES[prop.type]
                props[j].collection = COLLECTION_CODES[prop.collection]
                if prop.object_type is not None:
                    props[j].object_class = self._text(prop.object_type)
                if prop.origin_property is not None:
                    props[j].link_origin_property = self._text(prop.origin_property)
                props[j].flags = (
                    (_capi.PROPERTY_OPTIONAL if prop.optional else 0)
                    | (_capi.PROPERTY_PRIMARY_KEY if prop.primary_key else 0)
                    | (_capi.PROPERTY_INDEXED if prop.indexed else 0)
                )
            self._keep.append(props)
            self.classes[i].name = self._text(cls.name)
            self.classes[i].properties = props
            self.classes[i].property_count = len(cls.properties)
            self.classes[i].flags = _capi.CLASS_EMBEDDED if cls.embedded else 0
        self.count = len(classes)

    def _text(self, text: str) -> bytes:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise SchemaError(f"the name {text!r} is not valid UTF-8") from None
        if b"\0" in data:
            raise SchemaError(f"the name {text!r} contains a NUL character")
        self._keep.append(data)
        return data


def read_class_schema(raw: _capi.coffer_class_schema) -> ObjectSchema:
    """An ObjectSchema from the C schema of an open database."""
    properties = []
    for j in range(raw.property_count):
        p = raw.properties[j]
        properties.append(
            PropertySchema(
                name=p.name.decode("utf-8"),
                type=TYPE_NAMES.get(p.type, _capi.type_name(p.type)),
                optional=bool(p.flags & _capi.PROPERTY_OPTIONAL),
                primary_key=bool(p.flags & _capi.PROPERTY_PRIMARY_KEY),
                indexed=bool(p.flags & _capi.PROPERTY_INDEXED),
                collection=COLLECTION_NAMES.get(p.collection, ""),
                object_type=p.object_class.decode("utf-8") if p.object_class else None,
                origin_property=p.link_origin_property.decode("utf-8") if p.link_origin_property else None,
            )
        )
    embedded = bool(raw.flags & _capi.CLASS_EMBEDDED)
    return ObjectSchema(raw.name.decode("utf-8"), tuple(properties), embedded)
