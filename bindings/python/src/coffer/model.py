"""Model classes: coffer.Object, the primary_key() and indexed() markers,
how an annotated class becomes a schema, and parse_schema(), which reads
the schema list coffer.open() takes (model classes and schema dicts)."""

from __future__ import annotations

import asyncio
import collections.abc
import dataclasses
import datetime
import decimal
import sys
import threading
import typing
import uuid
from typing import (TYPE_CHECKING, Any, Callable, ClassVar, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple,
                    Type)

from . import schema as _schema
from .changes import ObjectChange
from .errors import CofferError, DatabaseClosedError, InvalidObjectError, PropertyNotFoundError, SchemaError
from .notifications import ChangeStream, NotificationToken
from .objectid import ObjectId
from .values import ZERO_VALUES

if TYPE_CHECKING:
    from .database import Database, _ClassInfo

MISSING: Any = dataclasses.MISSING


class Mixed:
    """Annotate a property with Mixed (or typing.Any) to store any value
    in it: a scalar, a link to an object, or nested lists and dicts."""


class Float32(float):
    """Annotate a property with Float32 to store it as a 32-bit float
    ("float"); plain `float` is stored as a 64-bit "double"."""


PYTHON_TYPES: Dict[Any, str] = {
    bool: "bool",
    int: "int",
    float: "double",
    Float32: "float",
    str: "string",
    bytes: "data",
    datetime.datetime: "date",
    ObjectId: "objectId",
    uuid.UUID: "uuid",
    decimal.Decimal: "decimal128",
}

COLLECTION_ORIGINS = (list, set, frozenset, dict, collections.abc.Sequence, collections.abc.Set,
                      collections.abc.Mapping, collections.abc.MutableSequence,
                      collections.abc.MutableSet, collections.abc.MutableMapping)

# Names of Object's own API; a model property of one of these names would hide it.
_get_ident = threading.get_ident

RESERVED_NAMES = frozenset({"is_valid", "is_managed", "to_dict", "object_schema", "linking_objects"})


@dataclasses.dataclass(frozen=True)
class _Field:
    default: Any = MISSING
    primary_key: bool = False
    indexed: bool = False
    # For linking_objects(): the origin class and property.
    origin: Optional[Tuple[str, str]] = None


def primary_key(default: Any = MISSING) -> Any:
    """Marks the annotated property as the primary key:
    `id: int = coffer.primary_key()`."""
    return _Field(default, primary_key=True)


def indexed(default: Any = MISSING) -> Any:
    """Marks the annotated property as indexed, with an optional default:
    `name: str = coffer.indexed("")`."""
    return _Field(default, indexed=True)


def linking_objects(origin_class: str, origin_property: str) -> Any:
    """Declares the objects that link to this one through
    `origin_class.origin_property`:
    `owners: coffer.LinkingObjects = coffer.linking_objects("Person", "dogs")`."""
    return _Field(MISSING, origin=(origin_class, origin_property))


class LinkingObjects:
    """The annotation of a linking_objects() property (any annotation is
    accepted; this one documents it). Reading it gives a coffer.Results."""


class _Property:
    """The class attribute a model property becomes; reads and writes go
    through the object, to the database once it is managed."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Optional["Object"], owner: type) -> Any:
        if obj is None:
            return self
        return obj._get(self.name)

    def __set__(self, obj: "Object", value: Any) -> None:
        obj._set(self.name, value)


def _is_class_var(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or typing.get_origin(annotation) is ClassVar


class Object:
    """Base class of model classes, and the type of objects read from
    classes declared with schema dicts.

    An instance made with `Dog(id=1, name="Rex")` is unmanaged: it only holds
    its values until `db.add()` stores it and makes it managed. A managed
    object reads and writes its properties in the database; writes need
    `with db.write():`."""

    _coffer_fields: ClassVar[Dict[str, _Field]] = {}
    _coffer_declared: ClassVar[Optional[_schema.DeclaredClass]] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: Dict[str, _Field] = {}
        for base in reversed(cls.__mro__[1:]):
            fields.update(base.__dict__.get("_coffer_fields", {}))
        names = list(cls.__dict__.get("__annotations__", {}).items())
        names += [(n, None) for n, v in cls.__dict__.items() if isinstance(v, _Field) and v.origin is not None
                  and n not in cls.__dict__.get("__annotations__", {})]
        for name, annotation in names:
            if name.startswith("_") or (annotation is not None and _is_class_var(annotation)):
                continue
            if name in RESERVED_NAMES:
                raise SchemaError(
                    f"class '{cls.__name__}', property '{name}': the name is used by coffer.Object itself"
                )
            value = cls.__dict__.get(name, MISSING)
            fields[name] = value if isinstance(value, _Field) else _Field(value)
            setattr(cls, name, _Property(name))
        cls._coffer_fields = fields
        cls._coffer_declared = None

    def __init__(self, **values: Any) -> None:
        cls = type(self)
        if cls is Object:
            raise TypeError(
                "coffer.Object is a base class: subclass it, or use db.create() for classes declared as dicts"
            )
        for name in values:
            if name not in cls._coffer_fields:
                raise TypeError(f"{cls.__name__}() has no property named '{name}'")
        object.__setattr__(self, "_db", None)
        object.__setattr__(self, "_info", None)
        object.__setattr__(self, "_key", None)
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_row", None)

    @classmethod
    def _managed(cls, db: "Database", info: "_ClassInfo", key: int, row: Any = None) -> "Object":
        """A managed object; `row`, if given, is a pages.PackedRow holding
        its values as packed in a page, read from there while the database
        stays as it was packed."""
        obj = cls.__new__(cls)
        # What _bind sets, without a call per attribute.
        obj.__dict__.update(_db=db, _info=info, _key=key, _values=None, _row=row)
        return obj

    def _bind(self, db: "Database", info: "_ClassInfo", key: int) -> None:
        object.__setattr__(self, "_db", db)
        object.__setattr__(self, "_info", info)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_values", None)
        object.__setattr__(self, "_row", None)

    # ---- properties --------------------------------------------------------

    def _class_name(self) -> str:
        return self._info.name if self._info is not None else type(self).__name__

    def _property_names(self) -> Sequence[str]:
        if self._info is not None:
            names: Sequence[str] = self._info.names
            return names
        return list(type(self)._coffer_fields)

    def _unknown(self, name: Any) -> PropertyNotFoundError:
        return PropertyNotFoundError(f"class '{self._class_name()}' has no property named {name!r}")

    def _get(self, name: str) -> Any:
        db = self._db
        if db is not None:
            row = self._row
            if row is not None:
                if row.current(db):
                    value = row.get(name, self._info)
                    if value is not MISSING:
                        return value
                else:
                    self.__dict__["_row"] = None  # the database moved on
            return db._read_property(self._info, self._key, name)
        fields = type(self)._coffer_fields
        if name not in fields:
            raise self._unknown(name)
        if name in self._values:
            return self._values[name]
        declared = declared_class_of(type(self))
        if name in declared.defaults:
            return declared.defaults[name]
        prop = next(p for p in declared.schema.properties if p.name == name)
        if prop.collection or prop.type == "linkingObjects":
            # An unmanaged object keeps its own collection, as Python values.
            empty: Any = {"list": [], "set": set(), "map": {}}.get(prop.collection, ())
            if prop.type != "linkingObjects":
                self._values[name] = empty
            return empty
        if prop.optional:
            return None
        return ZERO_VALUES[_schema.SCALAR_TYPES[prop.type]]

    def _set(self, name: str, value: Any) -> None:
        if self._db is not None:
            self._db._write_property(self._info, self._key, name, value)
            return
        if name not in type(self)._coffer_fields:
            raise self._unknown(name)
        self._values[name] = value

    def __getattr__(self, name: str) -> Any:
        # Only called when ordinary lookup fails: properties of classes
        # declared as dicts, and unknown names.
        if name.startswith("_"):
            raise AttributeError(name)
        if self._info is not None and name in self._info.properties:
            return self._get(name)
        raise self._unknown(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(getattr(type(self), name, None), _Property):
            self._set(name, value)  # what the descriptor's __set__ does
        elif name.startswith("_"):
            object.__setattr__(self, name, value)
        elif self._info is not None and name in self._info.properties:
            self._set(name, value)
        else:
            raise self._unknown(name)

    def __getitem__(self, name: str) -> Any:
        if not isinstance(name, str) or name not in self._property_names():
            raise self._unknown(name)
        return self._get(name)

    def __setitem__(self, name: str, value: Any) -> None:
        if not isinstance(name, str) or name not in self._property_names():
            raise self._unknown(name)
        self._set(name, value)

    def __iter__(self) -> Iterator[str]:
        return iter(self._property_names())

    # ---- state -------------------------------------------------------------

    @property
    def is_managed(self) -> bool:
        """True once the object is stored in a database."""
        return self._db is not None

    @property
    def is_valid(self) -> bool:
        """False once the object was deleted (or its database closed)."""
        if self._db is None:
            return True
        return bool(self._db._object_exists(self._info, self._key))

    @property
    def object_schema(self) -> _schema.ObjectSchema:
        """The schema of the object's class."""
        if self._info is not None:
            stored: _schema.ObjectSchema = self._info.schema
            return stored
        return declared_class_of(type(self)).schema

    def linking_objects(self, origin_class: str, origin_property: str) -> Any:
        """The objects of `origin_class` that link to this one through
        `origin_property` (a link, list, set or map of links, or mixed
        property), declared as linking objects or not; a coffer.Results."""
        if self._db is None:
            raise InvalidObjectError("an unmanaged object has no linking objects; add it to a database first")
        return self._db._backlinks_from(self._info, self._key, origin_class, origin_property)

    def observe(self, callback: Callable[[ObjectChange], None], key_paths: Optional[Sequence[str]] = None,
                loop: Optional[asyncio.AbstractEventLoop] = None) -> NotificationToken:
        """Calls `callback(change)` with a coffer.ObjectChange each time this
        object changes: first with `initial` True, then with the changed
        properties and their old and new values, and last with `deleted`
        True when it is deleted. `key_paths` ("name", "owner.name")
        restricts which changes count; a change reached through a link is
        reported as the link property. An unknown key path raises
        QueryError naming it. See the coffer module for threads and loops.
        Keep the token: collecting it stops the observer."""
        if self._db is None:
            raise InvalidObjectError("an unmanaged object cannot be observed; add it to a database first")
        token: NotificationToken = self._db._observe_object(self._info, self._key, key_paths, callback, loop)
        return token

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[ObjectChange]":
        """The changes of observe() as an async iterator on the running
        loop, ending after the deletion: `async for change in dog.changes():`."""
        return ChangeStream(lambda put, loop: self.observe(put, key_paths, loop))

    def to_dict(self) -> Dict[str, Any]:
        """Every property value, in schema order."""
        db = self._db
        if db is not None:
            row = self._row
            # row.current(db) and row.as_dict(), their common case inlined:
            # this runs once per object read whole.
            if row is not None and row.generation == db._generation and row.thread == _get_ident():
                decode = row.layout.decode
                packed: Optional[Dict[str, Any]] = decode(row.values, row.data) if decode is not None else None
                if packed is None:
                    packed = row.as_dict(self._info)
                if packed is not None:
                    return packed
            values: Dict[str, Any] = db._read_object(self._info, self._key)
            return values
        return {name: self._get(name) for name in self._property_names()}

    def to_tuple(self) -> Tuple[Any, ...]:
        """Every property value as a tuple, in schema order (the order of
        `to_dict()`'s keys): what a sqlite3 cursor gives for a row, and
        cheaper than a dict to make. A managed object read from a page or
        by primary key decodes it from the packed row in one generated
        expression while the database is as it was read."""
        db = self._db
        if db is not None:
            row = self._row
            if row is not None and row.generation == db._generation and row.thread == _get_ident():
                decode = row.layout.decode_tuple
                if decode is not None:
                    packed: Optional[Tuple[Any, ...]] = decode(row.values, row.data)
                    if packed is not None:
                        return packed
        values = self.to_dict()
        return tuple(values[name] for name in self._property_names())

    def __repr__(self) -> str:
        name = self._class_name()
        try:
            values = self.to_dict()
        except InvalidObjectError:
            return f"<{name} (deleted)>"
        except DatabaseClosedError:
            return f"<{name} (database closed)>"
        inner = ", ".join(f"{k}={brief(v)}" for k, v in values.items())
        return f"{name}({inner})"

    def _brief(self) -> str:
        # Linked objects print by class and primary key (or storage key),
        # so that cycles of links print finitely.
        name = self._class_name()
        if self._info is None:
            return f"<unmanaged {name}>"
        pk = self._info.primary_key
        if pk is not None:
            try:
                return f"<{name} {pk.name}={self._get(pk.name)!r}>"
            except CofferError:
                pass
        return f"<{name} #{self._key}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Object):
            return NotImplemented
        if self._db is None or other._db is None:
            return self is other
        return self._db is other._db and self._info is other._info and self._key == other._key

    def __hash__(self) -> int:
        if self._db is None:
            return id(self)
        return hash((self._info.name, self._key))


class EmbeddedObject(Object):
    """Base class of embedded model classes: their objects have no primary
    key and live inside one parent object (through a link, list or map
    property), are replaced with the value that holds them and deleted
    with the parent."""


_UNION_TYPES: List[Any] = [typing.Union]
if sys.version_info >= (3, 10):
    import types

    _UNION_TYPES.append(types.UnionType)

_SEQUENCES = (list, collections.abc.Sequence, collections.abc.MutableSequence)
_SETS = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def _element_type(annotation: Any, where: str) -> Tuple[str, bool, Optional[str]]:
    """(type, optional, object_type) of a non-collection annotation."""
    if typing.get_origin(annotation) in _UNION_TYPES:
        args = typing.get_args(annotation)
        others = [a for a in args if a is not type(None)]
        if len(others) != 1 or len(others) == len(args):
            raise SchemaError(f"{where}: only Optional[X] unions are supported, got {annotation!r}")
        name, _, target = _element_type(others[0], where)
        return name, True, target
    if annotation in PYTHON_TYPES:
        return PYTHON_TYPES[annotation], False, None
    if annotation is Mixed or annotation is typing.Any:
        return "mixed", True, None
    if isinstance(annotation, type) and issubclass(annotation, Object) and annotation is not Object:
        return "object", True, annotation.__name__
    supported = ", ".join(getattr(t, "__name__", str(t)) for t in PYTHON_TYPES)
    raise SchemaError(
        f"{where}: unsupported annotation {annotation!r} (supported: {supported}, coffer.Mixed, "
        "model classes, Optional of them, and list, set and dict of them)"
    )


def brief(value: Any) -> str:
    """The repr of a property value, with objects as short references."""
    if isinstance(value, Object):
        return value._brief()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(brief(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {brief(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _annotation_type(annotation: Any, where: str) -> _schema.PropertySchema:
    """The type of a property from its annotation, as a PropertySchema
    without a name."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in _SEQUENCES or origin in _SETS or origin in _MAPPINGS:
        if origin in _MAPPINGS:
            if len(args) != 2 or args[0] is not str:
                raise SchemaError(f"{where}: maps need str keys: dict[str, X], got {annotation!r}")
            kind, element = "map", args[1]
        else:
            if len(args) != 1:
                raise SchemaError(f"{where}: give the element type: list[X] or set[X], got {annotation!r}")
            kind, element = ("list" if origin in _SEQUENCES else "set"), args[0]
        name, optional, target = _element_type(element, where)
        if name == "object" and kind != "map":
            optional = False
        return _schema.PropertySchema("", name, optional, collection=kind, object_type=target)
    if annotation in _SEQUENCES or annotation in _SETS or annotation in _MAPPINGS:
        raise SchemaError(f"{where}: give the element type: list[X], set[X] or dict[str, X], got {annotation!r}")
    name, optional, target = _element_type(annotation, where)
    return _schema.PropertySchema("", name, optional, object_type=target)


def declared_class_of(model: Type[Object], models: Optional[Dict[str, type]] = None) -> _schema.DeclaredClass:
    """The schema and defaults a model class declares (computed once).
    `models` resolves string annotations that name other model classes."""
    cached = model.__dict__.get("_coffer_declared")
    if isinstance(cached, _schema.DeclaredClass):
        return cached
    try:
        hints = typing.get_type_hints(model, localns=dict(models or {}))
    except Exception as exc:  # unresolvable string annotations and the like
        raise SchemaError(f"class '{model.__name__}': cannot resolve its annotations: {exc}") from None
    properties = []
    defaults: Dict[str, Any] = {}
    for name, field in model._coffer_fields.items():
        where = f"class '{model.__name__}', property '{name}'"
        if field.origin is not None:
            prop = _schema.PropertySchema(name, "linkingObjects", object_type=field.origin[0],
                                          origin_property=field.origin[1])
        else:
            prop = dataclasses.replace(_annotation_type(hints[name], where), name=name,
                                       primary_key=field.primary_key, indexed=field.indexed)
            if field.default is not MISSING:
                defaults[name] = field.default
        properties.append(prop)
    embedded = issubclass(model, EmbeddedObject)
    declared = _schema.DeclaredClass(_schema.ObjectSchema(model.__name__, tuple(properties), embedded), defaults, model)
    model._coffer_declared = declared
    return declared


def parse_schema(schema: Sequence[Any]) -> List[_schema.DeclaredClass]:
    """The classes of a coffer.open(schema=...) list."""
    if isinstance(schema, (str, bytes, Mapping)) or not isinstance(schema, Sequence):
        raise SchemaError("schema must be a list of coffer.Object subclasses or schema dicts")
    class_names = _schema.declared_class_names(schema)
    models = {m.__name__: m for m in schema if isinstance(m, type)}
    classes = []
    for item in schema:
        if isinstance(item, Mapping):
            classes.append(_schema.class_from_dict(item, class_names))
        elif isinstance(item, type) and issubclass(item, Object) and item is not Object:
            classes.append(declared_class_of(item, models))
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
