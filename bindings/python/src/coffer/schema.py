"""Schemas: the property and class descriptions coffer.open() accepts
(model classes and Realm-JS-style dicts), their conversion to the C schema
arrays, and the schema read back from an open database."""

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
TYPE_NAMES: Dict[int, str] = {code: name for name, code in SCALAR_TYPES.items()}

COLLECTION_SUFFIXES = {"[]": "lists", "<>": "sets", "{}": "maps"}
COLLECTION_TYPES = {"list": "lists", "set": "sets", "dictionary": "maps"}
LINK_TYPES = {"object": "links", "linkingObjects": "backlinks (linkingObjects)"}

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


@dataclasses.dataclass(frozen=True)
class ObjectSchema:
    """One class as the database stores it; properties in property-id order."""

    name: str
    properties: Tuple[PropertySchema, ...]

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
            spec: Dict[str, Any] = {"type": prop.type, "optional": prop.optional}
            if prop.indexed:
                spec["indexed"] = True
            out["properties"][prop.name] = spec
        if self.primary_key is not None:
            out["primaryKey"] = self.primary_key
        return out


@dataclasses.dataclass
class DeclaredClass:
    """A class as the caller declared it: its schema, the Python-side
    defaults of its properties, and the model class if there is one."""

    schema: ObjectSchema
    defaults: Dict[str, Any]
    model: Optional[type] = None


def parse_type(type_string: str, class_names: Sequence[str]) -> Tuple[str, bool]:
    """("int", optional) for "int?"; _TypeProblem, which callers turn into a
    SchemaError naming the property, for anything that is not a scalar type
    Coffer can store today."""
    if not isinstance(type_string, str) or not type_string:
        raise _TypeProblem(f"the type must be a non-empty string, got {type_string!r}")
    for suffix, kind in COLLECTION_SUFFIXES.items():
        if type_string.endswith(suffix):
            raise _TypeProblem(f"type {type_string!r}: {kind} are not supported yet")
    optional = type_string.endswith("?")
    base = type_string[:-1] if optional else type_string
    if base in SCALAR_TYPES:
        return base, optional
    if base in COLLECTION_TYPES:
        raise _TypeProblem(f"type {type_string!r}: {COLLECTION_TYPES[base]} are not supported yet")
    if base in LINK_TYPES:
        raise _TypeProblem(f"type {type_string!r}: {LINK_TYPES[base]} are not supported yet")
    if base == "mixed":
        raise _TypeProblem("type 'mixed': mixed values are not supported yet")
    if base in class_names:
        raise _TypeProblem(f"type {type_string!r}: links to other objects are not supported yet")
    known = ", ".join(SCALAR_TYPES)
    raise _TypeProblem(f"unknown type {type_string!r} (known types: {known})")


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
        type_name, optional = parse_type(spec["type"], class_names)
    except _TypeProblem as exc:
        raise SchemaError(f"{where}: {exc}") from None
    if "optional" in spec:
        optional = _flag(where, "optional", spec["optional"]) or optional
    indexed = _flag(where, "indexed", spec["indexed"]) if "indexed" in spec else False
    default = spec["default"] if "default" in spec else dataclasses.MISSING
    return PropertySchema(name, type_name, optional, False, indexed), default


def _class_from_dict(spec: Mapping, class_names: Sequence[str]) -> DeclaredClass:
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise SchemaError(f"a schema dict needs a non-empty 'name', got {name!r}")
    unknown = set(spec) - CLASS_KEYS
    if unknown:
        raise SchemaError(f"class '{name}': unknown keys {sorted(unknown)} (allowed: {sorted(CLASS_KEYS)})")
    if spec.get("embedded", False) is not False:
        raise SchemaError(f"class '{name}': embedded objects are not supported yet")
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
    return DeclaredClass(ObjectSchema(name, tuple(properties)), defaults)


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


def parse_schema(schema: Sequence[Any]) -> List[DeclaredClass]:
    """The classes of a coffer.open(schema=...) list."""
    from .model import Object, declared_class_of  # model imports this module

    if isinstance(schema, (str, bytes, Mapping)) or not isinstance(schema, Sequence):
        raise SchemaError("schema must be a list of coffer.Object subclasses or schema dicts")
    class_names = declared_class_names(schema)
    classes = []
    for item in schema:
        if isinstance(item, Mapping):
            classes.append(_class_from_dict(item, class_names))
        elif isinstance(item, type) and issubclass(item, Object) and item is not Object:
            classes.append(declared_class_of(item))
        else:
            raise SchemaError(
                f"schema items must be coffer.Object subclasses or dicts, got {item!r}"
            )
    seen = set()
    for declared in classes:
        if declared.schema.name in seen:
            raise SchemaError(f"class '{declared.schema.name}' appears twice in the schema")
        seen.add(declared.schema.name)
    return classes


class CSchema:
    """The C arrays for a list of classes, with the buffers they point into."""

    def __init__(self, classes: Sequence[ObjectSchema]) -> None:
        self._keep: List[Any] = []
        self.classes = (_capi.coffer_class_schema * len(classes))()
        for i, cls in enumerate(classes):
            props = (_capi.coffer_property_schema * len(cls.properties))()
            for j, prop in enumerate(cls.properties):
                props[j].name = self._text(prop.name)
                props[j].type = SCALAR_TYPES[prop.type]
                props[j].flags = (
                    (_capi.PROPERTY_OPTIONAL if prop.optional else 0)
                    | (_capi.PROPERTY_PRIMARY_KEY if prop.primary_key else 0)
                    | (_capi.PROPERTY_INDEXED if prop.indexed else 0)
                )
            self._keep.append(props)
            self.classes[i].name = self._text(cls.name)
            self.classes[i].properties = props
            self.classes[i].property_count = len(cls.properties)
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
            )
        )
    return ObjectSchema(raw.name.decode("utf-8"), tuple(properties))
