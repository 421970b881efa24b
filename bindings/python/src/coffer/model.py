"""Model classes: coffer.Object, the primary_key() and indexed() markers,
and how an annotated class becomes a schema."""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import decimal
import sys
import typing
import uuid
from typing import TYPE_CHECKING, Any, ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple, Type

from . import schema as _schema
from .errors import DatabaseClosedError, InvalidObjectError, PropertyNotFoundError, SchemaError
from .objectid import ObjectId
from .values import ZERO_VALUES

if TYPE_CHECKING:
    from .database import Database, _ClassInfo

MISSING: Any = dataclasses.MISSING


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
RESERVED_NAMES = frozenset({"is_valid", "is_managed", "to_dict", "object_schema"})


@dataclasses.dataclass(frozen=True)
class _Field:
    default: Any = MISSING
    primary_key: bool = False
    indexed: bool = False


def primary_key(default: Any = MISSING) -> Any:
    """Marks the annotated property as the primary key:
    `id: int = coffer.primary_key()`."""
    return _Field(default, primary_key=True)


def indexed(default: Any = MISSING) -> Any:
    """Marks the annotated property as indexed, with an optional default:
    `name: str = coffer.indexed("")`."""
    return _Field(default, indexed=True)


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
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if name.startswith("_") or _is_class_var(annotation):
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

    @classmethod
    def _managed(cls, db: "Database", info: "_ClassInfo", key: int) -> "Object":
        obj = cls.__new__(cls)
        obj._bind(db, info, key)
        return obj

    def _bind(self, db: "Database", info: "_ClassInfo", key: int) -> None:
        object.__setattr__(self, "_db", db)
        object.__setattr__(self, "_info", info)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_values", None)

    # ---- properties --------------------------------------------------------

    def _class_name(self) -> str:
        return self._info.name if self._info is not None else type(self).__name__

    def _property_names(self) -> Sequence[str]:
        if self._info is not None:
            return self._info.names
        return list(type(self)._coffer_fields)

    def _unknown(self, name: Any) -> PropertyNotFoundError:
        return PropertyNotFoundError(f"class '{self._class_name()}' has no property named {name!r}")

    def _get(self, name: str) -> Any:
        if self._db is not None:
            return self._db._read_property(self._info, self._key, name)
        fields = type(self)._coffer_fields
        if name not in fields:
            raise self._unknown(name)
        if name in self._values:
            return self._values[name]
        declared = declared_class_of(type(self))
        if name in declared.defaults:
            return declared.defaults[name]
        prop = next(p for p in declared.schema.properties if p.name == name)
        return None if prop.optional else ZERO_VALUES[_schema.SCALAR_TYPES[prop.type]]

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
        if name.startswith("_") or isinstance(getattr(type(self), name, None), _Property):
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
        return self._db._object_exists(self._info, self._key)

    @property
    def object_schema(self) -> _schema.ObjectSchema:
        """The schema of the object's class."""
        if self._info is not None:
            return self._info.schema
        return declared_class_of(type(self)).schema

    def to_dict(self) -> Dict[str, Any]:
        """Every property value, in schema order."""
        if self._db is not None:
            return self._db._read_object(self._info, self._key)
        return {name: self._get(name) for name in self._property_names()}

    def __repr__(self) -> str:
        name = self._class_name()
        try:
            values = self.to_dict()
        except InvalidObjectError:
            return f"<{name} (deleted)>"
        except DatabaseClosedError:
            return f"<{name} (database closed)>"
        inner = ", ".join(f"{k}={v!r}" for k, v in values.items())
        return f"{name}({inner})"

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


def _annotation_type(annotation: Any, where: str) -> Tuple[str, bool]:
    origin = typing.get_origin(annotation)
    union_types: List[Any] = [typing.Union]
    if sys.version_info >= (3, 10):
        import types

        union_types.append(types.UnionType)
    if origin in union_types:
        args = typing.get_args(annotation)
        others = [a for a in args if a is not type(None)]
        if len(others) != 1 or len(others) == len(args):
            raise SchemaError(f"{where}: only Optional[X] unions are supported, got {annotation!r}")
        name, _ = _annotation_type(others[0], where)
        return name, True
    if annotation in PYTHON_TYPES:
        return PYTHON_TYPES[annotation], False
    if isinstance(annotation, type) and issubclass(annotation, Object):
        raise SchemaError(f"{where}: links to other objects are not supported yet")
    if origin in COLLECTION_ORIGINS or annotation in COLLECTION_ORIGINS:
        raise SchemaError(f"{where}: lists, sets and maps are not supported yet")
    if annotation is typing.Any:
        raise SchemaError(f"{where}: mixed values are not supported yet")
    supported = ", ".join(getattr(t, "__name__", str(t)) for t in PYTHON_TYPES)
    raise SchemaError(f"{where}: unsupported annotation {annotation!r} (supported: {supported}, Optional of them)")


def declared_class_of(model: Type[Object]) -> _schema.DeclaredClass:
    """The schema and defaults a model class declares (computed once)."""
    cached = model.__dict__.get("_coffer_declared")
    if cached is not None:
        return cached
    try:
        hints = typing.get_type_hints(model)
    except Exception as exc:  # unresolvable string annotations and the like
        raise SchemaError(f"class '{model.__name__}': cannot resolve its annotations: {exc}") from None
    properties = []
    defaults: Dict[str, Any] = {}
    for name, field in model._coffer_fields.items():
        where = f"class '{model.__name__}', property '{name}'"
        type_name, optional = _annotation_type(hints[name], where)
        properties.append(_schema.PropertySchema(name, type_name, optional, field.primary_key, field.indexed))
        if field.default is not MISSING:
            defaults[name] = field.default
    declared = _schema.DeclaredClass(_schema.ObjectSchema(model.__name__, tuple(properties)), defaults, model)
    model._coffer_declared = declared
    return declared
