"""The C API as ctypes sees it: structures, handle types, and the argtypes,
restype and error check of every C function this package calls. No other
module touches the library object directly."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Callable, List, Optional
from ctypes import (
    POINTER,
    Structure,
    Union,
    c_bool,
    c_char,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)

from . import _library
from .errors import Status, error_for

lib, library_path = _library.load()

# ---- enums and flags (include/coffer.h) ------------------------------------

TYPE_NULL = 0
TYPE_BOOL = 1
TYPE_INT = 2
TYPE_FLOAT = 3
TYPE_DOUBLE = 4
TYPE_STRING = 5
TYPE_BINARY = 6
TYPE_DATE = 7
TYPE_OBJECT_ID = 8
TYPE_UUID = 9
TYPE_DECIMAL128 = 10
TYPE_LINK = 11
TYPE_MIXED = 12
TYPE_LINKING_OBJECTS = 13
TYPE_LIST = 14
TYPE_MAP = 15
TYPE_SET = 16
TYPE_OBJECT = 17
TYPE_FIELDS = 18

COLLECTION_NONE = 0
COLLECTION_LIST = 1
COLLECTION_SET = 2
COLLECTION_MAP = 3

CLASS_EMBEDDED = 1 << 0
MAX_NESTING = 100

PROPERTY_OPTIONAL = 1 << 0
PROPERTY_PRIMARY_KEY = 1 << 1
PROPERTY_INDEXED = 1 << 2

TXN_READ = 0
TXN_WRITE = 1

UPDATE_ERROR = 0
UPDATE_ALL = 1
UPDATE_MODIFIED = 2

DECIMAL128_STRING_SIZE = 48

# The packed layout of coffer_object_pack() and coffer_results_pack().
PACK_MAGIC = 0x4B504643
PACK_VERSION = 1
PACK_COPY = 0
PACK_BORROW = 1
PACK_ROW_DELETED = 1
PACK_HEADER_SIZE = 32
PACK_ROW_HEAD_SIZE = 16
PACK_VALUE_SIZE = 24

AGGREGATE_MIN = 0
AGGREGATE_MAX = 1
AGGREGATE_SUM = 2
AGGREGATE_AVG = 3

CHANGE_DELETIONS = 0
CHANGE_INSERTIONS = 1
CHANGE_MODIFICATIONS = 2
CHANGE_MODIFICATIONS_NEW = 3

SORT_NONE = 0
SORT_ASCENDING = 1
SORT_DESCENDING = 2

ORIGIN_LOCAL = 0
ORIGIN_REMOTE = 1

# ---- structures ------------------------------------------------------------


class coffer_bytes(Structure):
    _fields_ = [("data", c_void_p), ("size", c_size_t)]


class coffer_timestamp(Structure):
    _fields_ = [("seconds", c_int64), ("nanoseconds", c_int32)]


class coffer_object_id(Structure):
    _fields_ = [("bytes", c_uint8 * 12)]


class coffer_uuid(Structure):
    _fields_ = [("bytes", c_uint8 * 16)]


class coffer_decimal128(Structure):
    _fields_ = [("w", c_uint64 * 2)]


class coffer_link(Structure):
    _fields_ = [("class_id", c_uint32), ("key", c_uint64)]


class coffer_value(Structure):
    pass


class coffer_field(Structure):
    pass


class coffer_map_entry(Structure):
    pass


class _coffer_items(Structure):
    _fields_ = [("items", POINTER(coffer_value)), ("count", c_size_t)]


class _coffer_entries(Structure):
    _fields_ = [("entries", POINTER(coffer_map_entry)), ("count", c_size_t)]


class _coffer_fields(Structure):
    _fields_ = [("fields", POINTER(coffer_field)), ("count", c_size_t)]


class _coffer_value_union(Union):
    _fields_ = [
        ("boolean", c_bool),
        ("integer", c_int64),
        ("float_value", c_float),
        ("double_value", c_double),
        ("string", coffer_bytes),
        ("binary", coffer_bytes),
        ("date", coffer_timestamp),
        ("object_id", coffer_object_id),
        ("uuid", coffer_uuid),
        ("decimal128", coffer_decimal128),
        ("link", coffer_link),
        ("list", _coffer_items),
        ("map", _coffer_entries),
        ("fields", _coffer_fields),
        ("object", c_void_p),
    ]


coffer_value._fields_ = [("type", c_int), ("u", _coffer_value_union)]
coffer_field._fields_ = [("property", c_uint32), ("value", coffer_value)]
coffer_map_entry._fields_ = [("key", coffer_bytes), ("value", coffer_value)]


class coffer_property_schema(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("type", c_int),
        ("flags", c_uint32),
        ("collection", c_uint32),
        ("object_class", c_char_p),
        ("link_origin_property", c_char_p),
        ("reserved", c_void_p * 2),
    ]


class coffer_class_schema(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("properties", POINTER(coffer_property_schema)),
        ("property_count", c_size_t),
        ("flags", c_uint32),
        ("reserved", c_void_p * 2),
    ]


class coffer_stats(Structure):
    _fields_ = [
        ("file_size", c_uint64),
        ("page_size", c_uint64),
        ("pages_used", c_uint64),
        ("pages_free", c_uint64),
        ("map_size", c_uint64),
        ("version", c_uint64),
        ("changelog_entries", c_uint64),
        ("changelog_bytes", c_uint64),
        ("collection_bytes", c_uint64),
        ("metadata_bytes", c_uint64),
        ("max_readers", c_uint32),
        ("readers", c_uint32),
    ]


class coffer_class_stats(Structure):
    _fields_ = [
        ("objects", c_uint64),
        ("object_bytes", c_uint64),
        ("index_entries", c_uint64),
        ("index_bytes", c_uint64),
    ]


class coffer_reader(Structure):
    _fields_ = [("pid", c_int64), ("thread", c_uint64), ("version", c_uint64)]


# Opaque handles get their own pointer types so that ctypes rejects a handle
# of the wrong kind instead of passing it on.
class _Config(Structure):
    pass


class _Db(Structure):
    pass


class _Txn(Structure):
    pass


class _Object(Structure):
    pass


class _Iter(Structure):
    pass


class _List(Structure):
    pass


class _Set(Structure):
    pass


class _Map(Structure):
    pass


class _Query(Structure):
    pass


class _Results(Structure):
    pass


class _Token(Structure):
    pass


class _CollectionChanges(Structure):
    pass


class _ObjectChanges(Structure):
    pass


class _MapChanges(Structure):
    pass


if TYPE_CHECKING:
    ConfigP = ctypes._Pointer[_Config]
    DbP = ctypes._Pointer[_Db]
    TxnP = ctypes._Pointer[_Txn]
    ObjectP = ctypes._Pointer[_Object]
    IterP = ctypes._Pointer[_Iter]
    ListP = ctypes._Pointer[_List]
    SetP = ctypes._Pointer[_Set]
    MapP = ctypes._Pointer[_Map]
    QueryP = ctypes._Pointer[_Query]
    ResultsP = ctypes._Pointer[_Results]
    TokenP = ctypes._Pointer[_Token]
    CollectionChangesP = ctypes._Pointer[_CollectionChanges]
    ObjectChangesP = ctypes._Pointer[_ObjectChanges]
    MapChangesP = ctypes._Pointer[_MapChanges]
else:
    ConfigP = POINTER(_Config)
    DbP = POINTER(_Db)
    TxnP = POINTER(_Txn)
    ObjectP = POINTER(_Object)
    IterP = POINTER(_Iter)
    ListP = POINTER(_List)
    SetP = POINTER(_Set)
    MapP = POINTER(_Map)
    QueryP = POINTER(_Query)
    ResultsP = POINTER(_Results)
    TokenP = POINTER(_Token)
    CollectionChangesP = POINTER(_CollectionChanges)
    ObjectChangesP = POINTER(_ObjectChanges)
    MapChangesP = POINTER(_MapChanges)

# ---- error checks ----------------------------------------------------------


def last_error_message() -> str:
    raw = lib.coffer_last_error()
    return raw.decode("utf-8", "replace") if raw else ""


def _check(result: int, func: Any, args: Any) -> int:
    if result != Status.OK:
        raise error_for(result, last_error_message())
    return result


def _check_allow_done(result: int, func: Any, args: Any) -> int:
    if result not in (Status.OK, Status.DONE):
        raise error_for(result, last_error_message())
    return result


def _declare(name: str, restype: Any, argtypes: List[Any], errcheck: Optional[Callable[[int, Any, Any], int]] = None) -> Any:
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = argtypes
    if errcheck is not None:
        fn.errcheck = errcheck
    return fn


def _declare_unconverted(name: str, restype: Any) -> Any:
    """A second function object for C function `name`, for a call that runs
    once per object or query: without argtypes, so that ctypes converts
    nothing. Its callers pass only ctypes objects of the C parameter types
    (pointers, arrays, byref(), c_size_t and the like, made once where they
    can be), never Python ints, which ctypes would pass as C int; the
    status comes back unchecked. The function _declare() gave stays as it
    was."""
    fn = lib[name]  # a new function object, unlike getattr
    fn.restype = restype
    return fn


def _status(name: str, *argtypes: Any) -> Any:
    return _declare(name, c_int, list(argtypes), _check)


# ---- functions -------------------------------------------------------------

coffer_version = _declare("coffer_version", c_char_p, [])
coffer_version_number = _declare("coffer_version_number", c_int, [])
coffer_last_error = _declare("coffer_last_error", c_char_p, [])
coffer_type_name = _declare("coffer_type_name", c_char_p, [c_int])
coffer_encryption_key_size = _declare("coffer_encryption_key_size", c_size_t, [])

coffer_object_id_generate = _status("coffer_object_id_generate", POINTER(coffer_object_id))
coffer_decimal128_from_string = _status(
    "coffer_decimal128_from_string", c_char_p, POINTER(coffer_decimal128)
)
coffer_decimal128_to_string = _declare(
    "coffer_decimal128_to_string", None, [POINTER(coffer_decimal128), POINTER(c_char)]
)

coffer_config_new = _status("coffer_config_new", POINTER(ConfigP))
coffer_config_free = _declare("coffer_config_free", None, [ConfigP])
coffer_config_set_path = _status("coffer_config_set_path", ConfigP, c_char_p)
coffer_config_path = _declare("coffer_config_path", c_char_p, [ConfigP])
coffer_config_set_in_memory_identifier = _status(
    "coffer_config_set_in_memory_identifier", ConfigP, c_char_p
)
coffer_config_set_read_only = _status("coffer_config_set_read_only", ConfigP, c_int)
coffer_config_set_seed_path = _status("coffer_config_set_seed_path", ConfigP, c_char_p)
coffer_config_set_encryption_key = _status(
    "coffer_config_set_encryption_key", ConfigP, c_void_p, c_size_t
)
coffer_config_set_schema = _status(
    "coffer_config_set_schema", ConfigP, POINTER(coffer_class_schema), c_size_t, c_uint64
)
coffer_config_set_class_subset = _status(
    "coffer_config_set_class_subset", ConfigP, POINTER(c_char_p), c_size_t
)
coffer_config_set_max_file_size = _status("coffer_config_set_max_file_size", ConfigP, c_uint64)
coffer_config_set_durability = _status("coffer_config_set_durability", ConfigP, c_int)
coffer_set_default_path = _status("coffer_set_default_path", c_char_p)

# Lifecycle: deletion when a migration is needed, compaction, versions, copies.
coffer_config_set_delete_if_migration_needed = _status("coffer_config_set_delete_if_migration_needed", ConfigP, c_int)
SHOULD_COMPACT_FN = ctypes.CFUNCTYPE(c_int, c_uint64, c_uint64, c_void_p)
coffer_config_set_should_compact_on_launch = _status(
    "coffer_config_set_should_compact_on_launch", ConfigP, SHOULD_COMPACT_FN, c_void_p
)
coffer_config_set_max_active_versions = _status("coffer_config_set_max_active_versions", ConfigP, c_uint64)
PROGRESS_FN = ctypes.CFUNCTYPE(c_int, c_int, c_uint64, c_uint64, c_void_p)
coffer_config_set_progress = _status("coffer_config_set_progress", ConfigP, PROGRESS_FN, c_void_p)

# Sync: the session of a synced handle and the transport interface.
SYNC_OPEN_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, POINTER(c_void_p))
SYNC_SEND_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, POINTER(ctypes.c_uint8), c_size_t)
SYNC_RECEIVE_FN = ctypes.CFUNCTYPE(
    c_int, c_void_p, c_void_p, c_int, POINTER(POINTER(ctypes.c_uint8)), POINTER(c_size_t)
)
SYNC_CLOSE_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)


class coffer_sync_transport(Structure):
    _fields_ = [
        ("ctx", c_void_p),
        ("open", SYNC_OPEN_FN),
        ("send", SYNC_SEND_FN),
        ("receive", SYNC_RECEIVE_FN),
        ("close", SYNC_CLOSE_FN),
    ]


SYNC_OFF = 0
SYNC_DISCONNECTED = 1
SYNC_CONNECTING = 2
SYNC_CONNECTED = 3
SYNC_PAUSED = 4
SYNC_FAILED = 5
coffer_config_set_sync = _status("coffer_config_set_sync", ConfigP, c_char_p, c_char_p)
coffer_config_set_sync_transport = _status(
    "coffer_config_set_sync_transport", ConfigP, POINTER(coffer_sync_transport)
)
SYNC_TOKEN_MAX = 8192
SYNC_TOKEN_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_void_p, c_size_t)
coffer_config_set_sync_token = _status("coffer_config_set_sync_token", ConfigP, c_char_p)
coffer_config_set_sync_token_callback = _status(
    "coffer_config_set_sync_token_callback", ConfigP, SYNC_TOKEN_FN, c_void_p
)
coffer_sync_state = _declare("coffer_sync_state", c_int, [DbP])
coffer_sync_transport_fail = _declare("coffer_sync_transport_fail", c_int, [c_int, c_char_p])
SYNC_STATE_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_int)
coffer_config_set_sync_state_callback = _status(
    "coffer_config_set_sync_state_callback", ConfigP, SYNC_STATE_FN, c_void_p
)
coffer_sync_error = _status("coffer_sync_error", DbP, c_char_p, c_size_t)
coffer_sync_wait_for_upload = _status("coffer_sync_wait_for_upload", DbP, c_uint64)
coffer_sync_wait_for_download = _status("coffer_sync_wait_for_download", DbP, c_uint64)
coffer_sync_pause = _status("coffer_sync_pause", DbP)
coffer_sync_resume = _status("coffer_sync_resume", DbP)
coffer_sync_progress_get = _status(
    "coffer_sync_progress_get", DbP, c_int, POINTER(c_uint64), POINTER(c_uint64)
)
coffer_config_set_sync_download_before_open = _status(
    "coffer_config_set_sync_download_before_open", ConfigP, c_int, c_uint64
)


class coffer_sync_error_event(Structure):
    _fields_ = [
        ("code", c_uint64),
        ("code_name", c_char_p),
        ("message", c_char_p),
        ("fatal", c_int),
        ("class_name", c_char_p),
        ("primary_key", POINTER(coffer_value)),
    ]


SYNC_ERROR_COMPENSATING_WRITE = 10
SYNC_ERROR_FN = ctypes.CFUNCTYPE(None, c_void_p, POINTER(coffer_sync_error_event))
coffer_config_set_sync_error_callback = _status(
    "coffer_config_set_sync_error_callback", ConfigP, SYNC_ERROR_FN, c_void_p
)
CLIENT_RESET_RECOVER_UNSYNCED = 0
CLIENT_RESET_DISCARD_UNSYNCED = 1
CLIENT_RESET_MANUAL = 2
CLIENT_RESET_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_int)
coffer_config_set_sync_client_reset = _status(
    "coffer_config_set_sync_client_reset", ConfigP, c_int, CLIENT_RESET_FN, c_void_p
)
CLOCK_FN = ctypes.CFUNCTYPE(c_uint64, c_void_p)
coffer_sync_set_clock_source = _declare("coffer_sync_set_clock_source", None, [CLOCK_FN, c_void_p])

# Flexible sync: query subscriptions (include/coffer.h).
SubscriptionSetP = c_void_p
SUBSCRIPTION_PENDING = 0
SUBSCRIPTION_BOOTSTRAPPING = 1
SUBSCRIPTION_COMPLETE = 2
SUBSCRIPTION_ERROR = 3
SUBSCRIPTION_SUPERSEDED = 4
coffer_config_set_sync_flexible = _status("coffer_config_set_sync_flexible", ConfigP, c_int)
coffer_subscriptions_latest = _status("coffer_subscriptions_latest", DbP, POINTER(c_void_p))
coffer_subscriptions_update = _status("coffer_subscriptions_update", DbP, POINTER(c_void_p))
coffer_subscription_set_append = _status(
    "coffer_subscription_set_append", SubscriptionSetP, c_char_p, c_char_p, c_char_p
)
coffer_subscription_set_remove_named = _status(
    "coffer_subscription_set_remove_named", SubscriptionSetP, c_char_p, POINTER(c_int)
)
coffer_subscription_set_remove_class = _status(
    "coffer_subscription_set_remove_class", SubscriptionSetP, c_char_p, POINTER(c_size_t)
)
coffer_subscription_set_remove_all = _status("coffer_subscription_set_remove_all", SubscriptionSetP, POINTER(c_size_t))
coffer_subscription_set_commit = _status("coffer_subscription_set_commit", SubscriptionSetP, POINTER(c_uint64))
coffer_subscription_set_version = _declare("coffer_subscription_set_version", c_uint64, [SubscriptionSetP])
coffer_subscription_set_count = _declare("coffer_subscription_set_count", c_size_t, [SubscriptionSetP])
coffer_subscription_set_at = _status(
    "coffer_subscription_set_at", SubscriptionSetP, c_size_t, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_char_p)
)
coffer_subscription_set_find = _status("coffer_subscription_set_find", SubscriptionSetP, c_char_p, POINTER(c_size_t))
coffer_subscription_set_state = _declare("coffer_subscription_set_state", c_int, [SubscriptionSetP])
coffer_subscription_set_error = _declare("coffer_subscription_set_error", c_char_p, [SubscriptionSetP])
coffer_subscription_set_free = _declare("coffer_subscription_set_free", None, [SubscriptionSetP])
coffer_subscriptions_wait = _status("coffer_subscriptions_wait", DbP, c_uint64, c_uint64)

# Migrations: the callback coffer_open() runs, and what it may call.
MigrationP = c_void_p
MIGRATION_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint64, c_uint64, c_void_p)
MIGRATION_ENUMERATE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, ObjectP, ObjectP, c_void_p)
coffer_config_set_migration = _status("coffer_config_set_migration", ConfigP, MIGRATION_FN, c_void_p)
coffer_migration_db = _declare("coffer_migration_db", DbP, [MigrationP])
coffer_migration_txn = _declare("coffer_migration_txn", TxnP, [MigrationP])
coffer_migration_old_db = _declare("coffer_migration_old_db", DbP, [MigrationP])
coffer_migration_old_txn = _declare("coffer_migration_old_txn", TxnP, [MigrationP])
coffer_migration_enumerate = _status(
    "coffer_migration_enumerate", MigrationP, c_char_p, MIGRATION_ENUMERATE_FN, c_void_p
)
# coffer_migration_enumerate_v2's flag: the caller counts each object done.
MIGRATION_COUNT_LATER = 1
coffer_migration_enumerate_v2 = _status(
    "coffer_migration_enumerate_v2", MigrationP, c_char_p, MIGRATION_ENUMERATE_FN, c_void_p, c_uint32
)
coffer_migration_count_visited = _status("coffer_migration_count_visited", MigrationP, c_uint64)
coffer_migration_rename_property = _status(
    "coffer_migration_rename_property", MigrationP, c_char_p, c_char_p, c_char_p
)
coffer_migration_delete_data = _status("coffer_migration_delete_data", MigrationP, c_char_p)
coffer_default_path = _declare("coffer_default_path", c_char_p, [])

# Verification: the report and its getters.
class VerifyReport(Structure):
    pass


VerifyReportP = POINTER(VerifyReport)
VERIFY_NO_PAGE = 2**64 - 1
coffer_verify = _status("coffer_verify", ConfigP, POINTER(VerifyReportP))
coffer_db_verify = _status("coffer_db_verify", DbP, POINTER(VerifyReportP))
coffer_verify_report_count = _declare("coffer_verify_report_count", c_size_t, [VerifyReportP])
coffer_verify_report_omitted = _declare("coffer_verify_report_omitted", c_size_t, [VerifyReportP])
coffer_verify_report_kind = _declare("coffer_verify_report_kind", c_int, [VerifyReportP, c_size_t])
coffer_verify_report_page = _declare("coffer_verify_report_page", c_uint64, [VerifyReportP, c_size_t])
coffer_verify_report_class = _declare("coffer_verify_report_class", c_char_p, [VerifyReportP, c_size_t])
coffer_verify_report_object_key = _declare("coffer_verify_report_object_key", c_uint64, [VerifyReportP, c_size_t])
coffer_verify_report_message = _declare("coffer_verify_report_message", c_char_p, [VerifyReportP, c_size_t])
coffer_verify_report_free = _declare("coffer_verify_report_free", None, [VerifyReportP])
coffer_verify_kind_name = _declare("coffer_verify_kind_name", c_char_p, [c_int])
coffer_config_set_verify_on_open = _status("coffer_config_set_verify_on_open", ConfigP, c_int)

coffer_open = _status("coffer_open", ConfigP, POINTER(DbP))
coffer_close = _declare("coffer_close", None, [DbP])
coffer_db_path = _declare("coffer_db_path", c_char_p, [DbP])
coffer_db_write_copy = _status("coffer_db_write_copy", DbP, c_char_p, c_void_p, c_size_t)
coffer_db_write_copy_v2 = _status("coffer_db_write_copy_v2", DbP, c_char_p, c_void_p, c_size_t, PROGRESS_FN, c_void_p)
coffer_db_active_versions = _status("coffer_db_active_versions", DbP, POINTER(c_uint64))
coffer_db_durability = _status("coffer_db_durability", DbP, POINTER(c_int))
coffer_db_sync = _status("coffer_db_sync", DbP)
coffer_db_stats = _status("coffer_db_stats", DbP, POINTER(coffer_stats))
coffer_db_class_stats = _status("coffer_db_class_stats", DbP, c_uint32, POINTER(coffer_class_stats))
coffer_db_readers = _status("coffer_db_readers", DbP, POINTER(coffer_reader), c_size_t, POINTER(c_size_t))
coffer_db_schema_version = _declare("coffer_db_schema_version", c_uint64, [DbP])
coffer_db_is_encrypted = _declare("coffer_db_is_encrypted", c_int, [DbP])
coffer_db_is_read_only = _declare("coffer_db_is_read_only", c_int, [DbP])
coffer_db_class_count = _declare("coffer_db_class_count", c_size_t, [DbP])
coffer_db_class_schema = _declare(
    "coffer_db_class_schema", POINTER(coffer_class_schema), [DbP, c_uint32]
)
coffer_db_primary_key = _status("coffer_db_primary_key", DbP, c_uint32, POINTER(c_uint32))

coffer_txn_begin = _status("coffer_txn_begin", DbP, c_int, POINTER(TxnP))
coffer_txn_commit = _status("coffer_txn_commit", TxnP)
coffer_txn_abort = _status("coffer_txn_abort", TxnP)
coffer_txn_free = _declare("coffer_txn_free", None, [TxnP])
coffer_txn_is_active = _declare("coffer_txn_is_active", c_int, [TxnP])

coffer_object_create = _status(
    "coffer_object_create", TxnP, c_uint32, POINTER(coffer_field), c_size_t, c_int, POINTER(ObjectP)
)
coffer_object_get = _status("coffer_object_get", TxnP, c_uint32, c_uint64, POINTER(ObjectP))
coffer_object_find = _status(
    "coffer_object_find", TxnP, c_uint32, POINTER(coffer_value), POINTER(ObjectP)
)
coffer_object_release = _declare("coffer_object_release", None, [ObjectP])
coffer_object_key_of = _declare("coffer_object_key_of", c_uint64, [ObjectP])
coffer_object_get_value = _status(
    "coffer_object_get_value", ObjectP, c_uint32, POINTER(coffer_value)
)
coffer_object_get_values = _status(
    "coffer_object_get_values", ObjectP, POINTER(c_uint32), c_size_t, POINTER(coffer_value)
)
coffer_object_set_value = _status(
    "coffer_object_set_value", ObjectP, c_uint32, POINTER(coffer_value)
)
coffer_object_delete = _status("coffer_object_delete", ObjectP)
# The pack calls return their status unchecked: COFFER_ERR_BUFFER_TOO_SMALL
# is the caller's cue to retry with the size needed (see pages.py).
coffer_object_pack = _declare(
    "coffer_object_pack", c_int,
    [ObjectP, POINTER(c_uint32), c_size_t, c_int, c_void_p, c_size_t, POINTER(c_size_t)],
)
coffer_object_pack_by_primary_key = _declare(
    "coffer_object_pack_by_primary_key", c_int,
    [TxnP, c_uint32, POINTER(coffer_value), POINTER(c_uint32), c_size_t, c_int, c_void_p, c_size_t,
     POINTER(c_size_t), POINTER(ObjectP)],
)


class coffer_pack_request(Structure):
    """coffer_pack_request of coffer.h: a class's lookup by primary key,
    set up once; the key is written before each run."""

    _fields_ = [("cls", c_uint32), ("key", coffer_value), ("props", POINTER(c_uint32)), ("count", c_size_t),
                ("flags", c_int), ("buf", c_void_p), ("capacity", c_size_t), ("needed", c_size_t)]


coffer_pack_request_run = _declare("coffer_pack_request_run", c_int, [TxnP, POINTER(coffer_pack_request)])
# The same for the lookup of one object by primary key, which runs once per
# object: called with ctypes objects only (see _declare_unconverted).
coffer_pack_request_run_unconverted = _declare_unconverted("coffer_pack_request_run", c_int)
coffer_objects_create = _status(
    "coffer_objects_create", TxnP, c_uint32, c_void_p, c_size_t, c_size_t, c_int, c_void_p, POINTER(c_size_t),
)
coffer_objects_set_fields = _status(
    "coffer_objects_set_fields", TxnP, c_uint32, POINTER(c_uint64), c_size_t, c_void_p, c_size_t,
    POINTER(c_size_t),
)

coffer_class_count = _status("coffer_class_count", TxnP, c_uint32, POINTER(c_uint64))
coffer_class_clear = _status("coffer_class_clear", TxnP, c_uint32)
coffer_class_iterate = _status("coffer_class_iterate", TxnP, c_uint32, POINTER(IterP))
coffer_iter_next = _declare(
    "coffer_iter_next", c_int, [IterP, POINTER(ObjectP)], _check_allow_done
)
coffer_iter_free = _declare("coffer_iter_free", None, [IterP])

coffer_object_backlinks = _status("coffer_object_backlinks", ObjectP, c_uint32, POINTER(IterP))
coffer_object_backlink_count = _status("coffer_object_backlink_count", ObjectP, c_uint32, POINTER(c_uint64))
coffer_object_backlinks_from = _status(
    "coffer_object_backlinks_from", ObjectP, c_uint32, c_uint32, POINTER(IterP)
)
coffer_object_backlink_count_from = _status(
    "coffer_object_backlink_count_from", ObjectP, c_uint32, c_uint32, POINTER(c_uint64)
)
coffer_object_backlink_count_all = _status("coffer_object_backlink_count_all", ObjectP, POINTER(c_uint64))

coffer_object_get_list = _status("coffer_object_get_list", ObjectP, c_uint32, POINTER(ListP))
coffer_object_get_set = _status("coffer_object_get_set", ObjectP, c_uint32, POINTER(SetP))
coffer_object_get_map = _status("coffer_object_get_map", ObjectP, c_uint32, POINTER(MapP))

coffer_list_count = _status("coffer_list_count", ListP, POINTER(c_uint64))
coffer_list_get = _status("coffer_list_get", ListP, c_uint64, POINTER(coffer_value))
coffer_list_get_list = _status("coffer_list_get_list", ListP, c_uint64, POINTER(ListP))
coffer_list_get_map = _status("coffer_list_get_map", ListP, c_uint64, POINTER(MapP))
coffer_list_set = _status("coffer_list_set", ListP, c_uint64, POINTER(coffer_value))
coffer_list_insert = _status("coffer_list_insert", ListP, c_uint64, POINTER(coffer_value))
coffer_list_append = _status("coffer_list_append", ListP, POINTER(coffer_value))
coffer_list_remove = _status("coffer_list_remove", ListP, c_uint64)
coffer_list_move = _status("coffer_list_move", ListP, c_uint64, c_uint64)
coffer_list_swap = _status("coffer_list_swap", ListP, c_uint64, c_uint64)
coffer_list_clear = _status("coffer_list_clear", ListP)
coffer_list_release = _declare("coffer_list_release", None, [ListP])

coffer_set_count = _status("coffer_set_count", SetP, POINTER(c_uint64))
coffer_set_get = _status("coffer_set_get", SetP, c_uint64, POINTER(coffer_value))
coffer_set_insert = _status("coffer_set_insert", SetP, POINTER(coffer_value), POINTER(c_int))
coffer_set_remove = _status("coffer_set_remove", SetP, POINTER(coffer_value), POINTER(c_int))
coffer_set_contains = _status("coffer_set_contains", SetP, POINTER(coffer_value), POINTER(c_int))
coffer_set_clear = _status("coffer_set_clear", SetP)
coffer_set_union = _status("coffer_set_union", SetP, SetP)
coffer_set_intersect = _status("coffer_set_intersect", SetP, SetP)
coffer_set_subtract = _status("coffer_set_subtract", SetP, SetP)
coffer_set_release = _declare("coffer_set_release", None, [SetP])

coffer_map_count = _status("coffer_map_count", MapP, POINTER(c_uint64))
coffer_map_get = _status("coffer_map_get", MapP, c_char_p, c_size_t, POINTER(coffer_value))
coffer_map_contains = _status("coffer_map_contains", MapP, c_char_p, c_size_t, POINTER(c_int))
coffer_map_set = _status("coffer_map_set", MapP, c_char_p, c_size_t, POINTER(coffer_value))
coffer_map_remove = _status("coffer_map_remove", MapP, c_char_p, c_size_t, POINTER(c_int))
coffer_map_get_entry = _status(
    "coffer_map_get_entry", MapP, c_uint64, POINTER(coffer_bytes), POINTER(coffer_value)
)
coffer_map_get_list = _status("coffer_map_get_list", MapP, c_char_p, c_size_t, POINTER(ListP))
coffer_map_get_map = _status("coffer_map_get_map", MapP, c_char_p, c_size_t, POINTER(MapP))
coffer_map_clear = _status("coffer_map_clear", MapP)
coffer_map_release = _declare("coffer_map_release", None, [MapP])

coffer_query_compile = _status(
    "coffer_query_compile", DbP, c_uint32, c_char_p, c_size_t, POINTER(coffer_value), c_size_t, POINTER(QueryP)
)
coffer_query_rebind = _status("coffer_query_rebind", QueryP, POINTER(coffer_value), c_size_t, POINTER(QueryP))
coffer_query_free = _declare("coffer_query_free", None, [QueryP])
coffer_query_description = _declare("coffer_query_description", c_char_p, [QueryP])
coffer_query_class = _declare("coffer_query_class", c_uint32, [QueryP])
coffer_query_set_timeout = _status("coffer_query_set_timeout", QueryP, c_uint64)
coffer_query_timeout = _declare("coffer_query_timeout", c_uint64, [QueryP])
coffer_interrupt = _status("coffer_interrupt", DbP)
coffer_query_run = _status("coffer_query_run", TxnP, QueryP, POINTER(ResultsP))
coffer_results_all = _status("coffer_results_all", TxnP, c_uint32, POINTER(ResultsP))
coffer_results_from_keys = _status(
    "coffer_results_from_keys", TxnP, c_uint32, POINTER(c_uint64), c_size_t, POINTER(ResultsP)
)
coffer_results_filter = _status("coffer_results_filter", ResultsP, QueryP, POINTER(ResultsP))
coffer_results_rerun = _status("coffer_results_rerun", ResultsP, TxnP, POINTER(ResultsP))
coffer_query_count = _status("coffer_query_count", TxnP, QueryP, POINTER(c_uint64))
# coffer_query_count_rebound(txn, query, args, arg_count, out), run once per
# count of a prepared query with new arguments: called with ctypes objects
# only (see _declare_unconverted), the status returned unchecked.
coffer_query_count_rebound_unconverted = _declare_unconverted("coffer_query_count_rebound", c_int)
coffer_results_count = _status("coffer_results_count", ResultsP, POINTER(c_uint64))
coffer_results_key = _status("coffer_results_key", ResultsP, c_uint64, POINTER(c_uint64))
coffer_results_copy_keys = _status("coffer_results_copy_keys", ResultsP, c_uint64, c_size_t, POINTER(c_uint64))
coffer_results_get = _status("coffer_results_get", ResultsP, c_uint64, POINTER(ObjectP))
coffer_results_aggregate = _status("coffer_results_aggregate", ResultsP, c_uint32, c_int, POINTER(coffer_value))
coffer_results_delete_all = _status("coffer_results_delete_all", ResultsP)
coffer_results_pack = _declare(
    "coffer_results_pack", c_int,
    [ResultsP, c_uint64, c_size_t, POINTER(c_uint32), c_size_t, c_int, c_void_p, c_size_t, POINTER(c_size_t)],
)
coffer_results_set_value = _status("coffer_results_set_value", ResultsP, c_uint32, POINTER(coffer_value))
coffer_results_free = _declare("coffer_results_free", None, [ResultsP])

# Live data: refresh, observers and change sets. The callbacks take their
# context as a plain integer (c_void_p), the id of an observer in
# notifications.py; the change sets are borrowed for the call.
DB_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, TxnP, c_uint64, c_uint64)
COLLECTION_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, TxnP, CollectionChangesP)
OBJECT_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, TxnP, ObjectChangesP)
MAP_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, TxnP, MapChangesP)
# A scheduler: post(scheduler_ctx, work, arg) asks for work(arg) to run later.
WORK_FN = ctypes.CFUNCTYPE(None, c_void_p)
POST_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_void_p)
coffer_db_set_scheduler = _status("coffer_db_set_scheduler", DbP, POST_FN, c_void_p)
coffer_txn_version = _status("coffer_txn_version", TxnP, POINTER(c_uint64))
coffer_txn_set_origin = _status("coffer_txn_set_origin", TxnP, c_int)
coffer_txn_commit_origin = _status("coffer_txn_commit_origin", TxnP, c_uint64, POINTER(c_int))
coffer_db_refresh = _status("coffer_db_refresh", DbP)
coffer_db_set_auto_refresh = _status("coffer_db_set_auto_refresh", DbP, c_int)
coffer_db_auto_refresh = _declare("coffer_db_auto_refresh", c_int, [DbP])
coffer_db_version = _status("coffer_db_version", DbP, POINTER(c_uint64))
coffer_db_observe = _status("coffer_db_observe", DbP, DB_CALLBACK, c_void_p, POINTER(TokenP))
coffer_object_observe = _status(
    "coffer_object_observe", DbP, c_uint32, c_uint64, POINTER(c_char_p), c_size_t, OBJECT_CALLBACK, c_void_p,
    POINTER(TokenP)
)
coffer_query_observe = _status(
    "coffer_query_observe", DbP, QueryP, POINTER(c_char_p), c_size_t, COLLECTION_CALLBACK, c_void_p, POINTER(TokenP)
)
coffer_list_observe = _status(
    "coffer_list_observe", DbP, c_uint32, c_uint64, c_uint32, POINTER(c_char_p), c_size_t, COLLECTION_CALLBACK,
    c_void_p, POINTER(TokenP)
)
coffer_list_query_observe = _status(
    "coffer_list_query_observe", DbP, c_uint32, c_uint64, c_uint32, QueryP, POINTER(c_char_p), c_size_t,
    COLLECTION_CALLBACK, c_void_p, POINTER(TokenP)
)
coffer_list_values_observe = _status(
    "coffer_list_values_observe", DbP, c_uint32, c_uint64, c_uint32, c_int, c_int, COLLECTION_CALLBACK, c_void_p,
    POINTER(TokenP)
)
coffer_set_observe = _status(
    "coffer_set_observe", DbP, c_uint32, c_uint64, c_uint32, POINTER(c_char_p), c_size_t, COLLECTION_CALLBACK,
    c_void_p, POINTER(TokenP)
)
coffer_map_observe = _status(
    "coffer_map_observe", DbP, c_uint32, c_uint64, c_uint32, POINTER(c_char_p), c_size_t, MAP_CALLBACK, c_void_p,
    POINTER(TokenP)
)
coffer_map_changes_count = _declare("coffer_map_changes_count", c_size_t, [MapChangesP, c_int])
coffer_map_changes_key = _status("coffer_map_changes_key", MapChangesP, c_int, c_size_t, POINTER(coffer_bytes))
coffer_map_changes_cleared = _declare("coffer_map_changes_cleared", c_int, [MapChangesP])
coffer_map_changes_root_deleted = _declare("coffer_map_changes_root_deleted", c_int, [MapChangesP])
coffer_token_stop = _declare("coffer_token_stop", None, [TokenP])
coffer_txn_commit_without_notifying = _status(
    "coffer_txn_commit_without_notifying", TxnP, POINTER(TokenP), c_size_t
)
coffer_collection_changes_count = _declare(
    "coffer_collection_changes_count", c_size_t, [CollectionChangesP, c_int]
)
coffer_collection_changes_copy = _declare(
    "coffer_collection_changes_copy", c_size_t, [CollectionChangesP, c_int, POINTER(c_uint64)]
)
coffer_collection_changes_move_count = _declare(
    "coffer_collection_changes_move_count", c_size_t, [CollectionChangesP]
)
coffer_collection_changes_move = _status(
    "coffer_collection_changes_move", CollectionChangesP, c_size_t, POINTER(c_uint64), POINTER(c_uint64)
)
coffer_collection_changes_cleared = _declare("coffer_collection_changes_cleared", c_int, [CollectionChangesP])
coffer_collection_changes_root_deleted = _declare(
    "coffer_collection_changes_root_deleted", c_int, [CollectionChangesP]
)
coffer_object_changes_deleted = _declare("coffer_object_changes_deleted", c_int, [ObjectChangesP])
coffer_object_changes_count = _declare("coffer_object_changes_count", c_size_t, [ObjectChangesP])
coffer_object_changes_property = _status(
    "coffer_object_changes_property", ObjectChangesP, c_size_t, POINTER(c_uint32), POINTER(coffer_value),
    POINTER(coffer_value)
)


def type_name(coffer_type: int) -> str:
    name: bytes = coffer_type_name(coffer_type)
    return name.decode("ascii")
