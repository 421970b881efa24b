/*
 * coffer.h — the public C API of Coffer, an embedded object database.
 *
 * This header is the contract. Every function states its parameters, who owns
 * what it returns, how long a borrowed pointer stays valid, and which status
 * codes it returns. Behaviour documented here does not change within a major
 * version; a changed behaviour gets a new `_v2` function instead.
 *
 * Conventions
 * - Every fallible function returns a `coffer_status`. COFFER_OK is 0. On any
 *   other status a thread-local last error is set whose message names the
 *   class, property, value or file at fault; read it with coffer_last_error().
 * - Handles are opaque. NULL handles and handles of the wrong state give
 *   COFFER_ERR_INVALID_ARGUMENT or COFFER_ERR_MISUSE, never a crash. Calling a
 *   function on a handle that was already freed is undefined, as in C generally;
 *   the library detects it on a best-effort basis only.
 * - Values read from the database are borrowed: see "Lifetime of borrowed
 *   values" before coffer_object_get_value().
 * - The API has no variadic functions and no function-like macros, so that it
 *   can be called from Swift and from Python's ctypes.
 * - Threads: a coffer_db may be used from several threads at once, each with
 *   its own transactions. A transaction, its objects and its iterators are
 *   used by one thread at a time; a write transaction ends on the thread that
 *   began it, while a read transaction may move between threads. Do not close
 *   a database while another thread is inside a call on it.
 * - Files: every commit is durable (coffer_config_set_durability() can
 *   relax that) and a crash never exposes a half-written transaction. Everything Coffer stores (records, schema, header) is
 *   checked before it is used; the storage engine's own B-tree pages are
 *   trusted in normal use, so a file damaged at that level may still stop
 *   the process (after a message naming the file). coffer_verify() checks
 *   every page without trusting any, and coffer_config_set_verify_on_open()
 *   makes opening refuse a damaged file.
 *
 * Copyright the Coffer authors. Licensed under the Apache License, Version 2.0.
 */
#ifndef COFFER_H
#define COFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Export and version                                                        */
/* ------------------------------------------------------------------------ */

#if defined(_WIN32)
#  if defined(COFFER_BUILDING)
#    define COFFER_API __declspec(dllexport)
#  else
#    define COFFER_API
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define COFFER_API __attribute__((visibility("default")))
#else
#  define COFFER_API
#endif

#define COFFER_VERSION_MAJOR 0
#define COFFER_VERSION_MINOR 1
#define COFFER_VERSION_PATCH 0
#define COFFER_VERSION_STRING "0.1.0"
/** MAJOR * 10000 + MINOR * 100 + PATCH, for compile-time comparisons. */
#define COFFER_VERSION_NUMBER 100

/** The library's version as "MAJOR.MINOR.PATCH". Static storage; never free. */
COFFER_API const char *coffer_version(void);
/** The library's version as COFFER_VERSION_NUMBER computes it. */
COFFER_API int coffer_version_number(void);

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                   */
/* ------------------------------------------------------------------------ */

typedef enum coffer_status {
    COFFER_OK = 0,
    /** Not an error: an iterator has no further object. */
    COFFER_DONE = 1,
    /** A NULL handle or pointer, an out-of-range id, a bad size or flag. */
    COFFER_ERR_INVALID_ARGUMENT = 2,
    /** An allocation failed. */
    COFFER_ERR_NO_MEMORY = 3,
    /** A file system call failed; the message carries the path and errno text. */
    COFFER_ERR_IO = 4,
    /** No object, class, property or file by that name, key or value. */
    COFFER_ERR_NOT_FOUND = 5,
    /** The call does not fit the handle's state: the transaction has ended,
     *  the database was closed, a write transaction is ended on another thread,
     *  a second write transaction is begun on the thread that holds one. */
    COFFER_ERR_MISUSE = 6,
    /** A write was attempted in a read transaction. */
    COFFER_ERR_NOT_IN_WRITE = 7,
    /** The database was opened read-only, or the file cannot be written. */
    COFFER_ERR_READ_ONLY = 8,
    /** The schema given is invalid: duplicate or over-long names, a primary
     *  key or index on an unsupported type, and so on. */
    COFFER_ERR_SCHEMA = 9,
    /** The schema given differs from the file's at the same schema version;
     *  the message lists every difference. */
    COFFER_ERR_MIGRATION_REQUIRED = 10,
    /** The schema version given is lower than the file's. */
    COFFER_ERR_SCHEMA_VERSION = 11,
    /** A value of the wrong type for the property, or null for a required one. */
    COFFER_ERR_TYPE = 12,
    /** An object with that primary key already exists in the class. */
    COFFER_ERR_PRIMARY_KEY_EXISTS = 13,
    /** The property cannot be changed once set (primary keys). */
    COFFER_ERR_IMMUTABLE = 14,
    /** One write transaction needed more than the room left in the file's map
     *  (half of it or more: 32 GiB or more by default) while this process kept
     *  other transactions open, so the map could not grow. Nothing of it was
     *  committed; the map grows when the next transaction begins with no other
     *  open in the process: retry then. Ordinary writes never meet it: the
     *  map grows before it fills (docs/FORMAT.md, "The map and its growth"). */
    COFFER_ERR_MAP_FULL = 15,
    /** The file reached the configured maximum file size. */
    COFFER_ERR_FILE_TOO_LARGE = 16,
    /** The file is not a Coffer database. */
    COFFER_ERR_NOT_A_DATABASE = 17,
    /** The file's format cannot be read by this library: a newer format, or
     *  format 2 opened read-only (format 2 is rewritten in place by the first
     *  read-write open; see docs/FORMAT.md). */
    COFFER_ERR_FORMAT_VERSION = 18,
    /** The file is truncated or its structure is damaged. */
    COFFER_ERR_CORRUPTED = 19,
    /** A sealed value failed authentication: it was modified, or moved inside
     *  the file. It is never returned. */
    COFFER_ERR_INTEGRITY = 20,
    /** The file is encrypted and no key was given. */
    COFFER_ERR_KEY_REQUIRED = 21,
    /** The key given does not open the file. */
    COFFER_ERR_WRONG_KEY = 22,
    /** A key was given for a file that is not encrypted. */
    COFFER_ERR_NOT_ENCRYPTED = 23,
    /** A limit was reached: too many classes or readers, a value too large. */
    COFFER_ERR_LIMIT = 24,
    /** The file is held in a way this open cannot share: it is open in this
     *  process through a read-only mapping (the file itself could not be
     *  written when it was first opened) and is now wanted for writing. A
     *  read-only handle on a writable file does not block read-write ones. */
    COFFER_ERR_BUSY = 25,
    /** An unexpected failure of the storage engine; the message has details. */
    COFFER_ERR_INTERNAL = 26,
    /** A query is malformed (the message gives the position and what was
     *  expected), names an unknown class or property, compares incompatible
     *  types, or has missing or mistyped arguments; the message names the
     *  culprit. */
    COFFER_ERR_QUERY = 27,
    /** A running query was stopped before it ended: by coffer_interrupt() on
     *  its database handle, or because it ran past the timeout set with
     *  coffer_query_set_timeout(). The message says which. Nothing is
     *  changed; the query can be run again. */
    COFFER_ERR_INTERRUPTED = 28,
    /** A wait ran past its timeout (coffer_sync_wait_for_upload() and
     *  coffer_sync_wait_for_download()); nothing was lost, the work goes on. */
    COFFER_ERR_TIMEOUT = 29,
    /** A caller-owned buffer is too small for what the call would write
     *  into it (coffer_object_pack(), coffer_results_pack()). Nothing is
     *  written past its end; the size needed is given back and named in the
     *  message. */
    COFFER_ERR_BUFFER_TOO_SMALL = 30,
    /** A progress callback (coffer_config_set_progress()) asked to stop:
     *  the open was abandoned and the file left as it was. The message
     *  names the step that was under way. */
    COFFER_ERR_CANCELLED = 31
} coffer_status;

/** A static English description of a status code. Never NULL; never free. */
COFFER_API const char *coffer_strerror(coffer_status status);

/** The message of the last error set on the calling thread, or "" if none.
 *  The string is owned by the library and stays valid until the next call
 *  into the library on this thread. */
COFFER_API const char *coffer_last_error(void);

/** The status of the last error set on the calling thread (COFFER_OK if none). */
COFFER_API coffer_status coffer_last_status(void);

/** Clears the calling thread's last error. */
COFFER_API void coffer_clear_error(void);

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

/** Property and value types. The numbers are stable and stored in files. */
typedef enum coffer_type {
    COFFER_TYPE_NULL = 0,
    COFFER_TYPE_BOOL = 1,
    COFFER_TYPE_INT = 2,        /**< int64_t */
    COFFER_TYPE_FLOAT = 3,      /**< float */
    COFFER_TYPE_DOUBLE = 4,     /**< double */
    COFFER_TYPE_STRING = 5,     /**< UTF-8, not containing NUL */
    COFFER_TYPE_BINARY = 6,     /**< bytes */
    COFFER_TYPE_DATE = 7,       /**< seconds and nanoseconds since 1970 UTC */
    COFFER_TYPE_OBJECT_ID = 8,  /**< 12 bytes */
    COFFER_TYPE_UUID = 9,       /**< 16 bytes */
    COFFER_TYPE_DECIMAL128 = 10, /**< IEEE 754-2008 decimal128, BID encoding */
    /** A link to an object: a property type (the target class is the
     *  property's object_class) and a value type (coffer_value.u.link). */
    COFFER_TYPE_LINK = 11,
    /** A property type: any scalar, a link to an object of any class, or a
     *  nested list or map of mixed values. Values read from it carry their
     *  own type. */
    COFFER_TYPE_MIXED = 12,
    /** A property type: the read-only backlinks of an object (see
     *  coffer_object_backlinks()). */
    COFFER_TYPE_LINKING_OBJECTS = 13,
    /** A value type: a list. Given to the library, `u.list` holds the items
     *  (for a list or set property, or a nested list in a mixed value); read
     *  from it, `u.list.count` is the element count and `u.list.items` NULL
     *  (open the list with coffer_object_get_list() or coffer_list_get_list()). */
    COFFER_TYPE_LIST = 14,
    /** A value type: a map from strings, as COFFER_TYPE_LIST with `u.map`. */
    COFFER_TYPE_MAP = 15,
    /** A value type read from a set property: `u.list.count` is its size. */
    COFFER_TYPE_SET = 16,
    /** A value type given to the library only: an object handle
     *  (`u.object`), wherever a link may be stored. It must belong to the
     *  same transaction. */
    COFFER_TYPE_OBJECT = 17,
    /** A value type given to the library only: a nested object description
     *  (`u.fields`) that creates an object of the link's target class (and,
     *  for a class with a primary key, updates the existing one under the
     *  update policy of the call), or a new embedded object. */
    COFFER_TYPE_FIELDS = 18
    /* Reserved: 19..31. */
} coffer_type;

/** A point in time. `nanoseconds` is in (-1e9, 1e9) and has the sign of
 *  `seconds` (or either sign when seconds is 0), as in Realm. */
typedef struct coffer_timestamp {
    int64_t seconds;
    int32_t nanoseconds;
} coffer_timestamp;

typedef struct coffer_object_id {
    uint8_t bytes[12];
} coffer_object_id;

typedef struct coffer_uuid {
    uint8_t bytes[16];
} coffer_uuid;

/** IEEE 754-2008 decimal128 in binary integer decimal (BID) encoding:
 *  `w[0]` holds the low 64 bits, `w[1]` the high 64 bits (sign, combination
 *  field and the top of the coefficient). */
typedef struct coffer_decimal128 {
    uint64_t w[2];
} coffer_decimal128;

/** Bytes borrowed from the caller or from the database. For strings `data`
 *  points at UTF-8 text of `size` bytes; strings read from the database are
 *  also NUL-terminated at data[size]. */
typedef struct coffer_bytes {
    const void *data;
    size_t size;
} coffer_bytes;

/** A link: the target's class (an id of the open handle) and object key. */
typedef struct coffer_link {
    uint32_t class_id;
    uint64_t key;
} coffer_link;

struct coffer_value;
struct coffer_field;
struct coffer_map_entry;
struct coffer_object;

/** A tagged value: `type` says which member of the union is set.
 *  COFFER_TYPE_NULL sets none. The list, map, fields and object members
 *  borrow the caller's memory for the duration of the call only. */
typedef struct coffer_value {
    coffer_type type;
    union {
        bool boolean;
        int64_t integer;
        float float_value;
        double double_value;
        coffer_bytes string;
        coffer_bytes binary;
        coffer_timestamp date;
        coffer_object_id object_id;
        coffer_uuid uuid;
        coffer_decimal128 decimal128;
        coffer_link link;
        struct {
            const struct coffer_value *items;
            size_t count;
        } list;
        struct {
            const struct coffer_map_entry *entries;
            size_t count;
        } map;
        struct {
            const struct coffer_field *fields;
            size_t count;
        } fields;
        const struct coffer_object *object;
    } u;
} coffer_value;

/** One entry of a map value: a key (UTF-8, see coffer_map_set() for the
 *  rules) and its value. */
typedef struct coffer_map_entry {
    coffer_bytes key;
    coffer_value value;
} coffer_map_entry;

/** Constructors, for callers that cannot write C compound literals (Swift,
 *  ctypes). They copy nothing: a string or binary value borrows `data`. */
COFFER_API coffer_value coffer_value_null(void);
COFFER_API coffer_value coffer_value_bool(bool v);
COFFER_API coffer_value coffer_value_int(int64_t v);
COFFER_API coffer_value coffer_value_float(float v);
COFFER_API coffer_value coffer_value_double(double v);
/** `text` must be valid UTF-8 of `size` bytes without NUL; pass size
 *  SIZE_MAX to take strlen(text). NULL text with size 0 or SIZE_MAX is the
 *  empty string; storing NULL text with any other size is rejected. */
COFFER_API coffer_value coffer_value_string(const char *text, size_t size);
COFFER_API coffer_value coffer_value_binary(const void *data, size_t size);
COFFER_API coffer_value coffer_value_date(int64_t seconds, int32_t nanoseconds);
COFFER_API coffer_value coffer_value_object_id(const uint8_t bytes[12]);
COFFER_API coffer_value coffer_value_uuid(const uint8_t bytes[16]);
COFFER_API coffer_value coffer_value_decimal128(uint64_t low, uint64_t high);
/** A link to the object with key `key` of class `class_id`. */
COFFER_API coffer_value coffer_value_link(uint32_t class_id, uint64_t key);
/** A link to the object `obj` (checked to belong to the same transaction). */
COFFER_API coffer_value coffer_value_object(const struct coffer_object *obj);
/** A list (or set) of `count` values; `items` may be NULL when count is 0. */
COFFER_API coffer_value coffer_value_list(const coffer_value *items, size_t count);
/** A map of `count` entries. */
COFFER_API coffer_value coffer_value_map(const coffer_map_entry *entries, size_t count);
/** A nested object description (see COFFER_TYPE_FIELDS). */
COFFER_API coffer_value coffer_value_fields(const struct coffer_field *fields, size_t count);

/** 1 if the two values are equal, else 0: the same type and the same
 *  contents (links: the same class and key; list, map, set, object and
 *  fields values are never equal). Floats and doubles compare with ==, except that NaN equals NaN
 *  (so -0.0 equals 0.0); decimals compare by value (1.0 equals 1.00, -0
 *  equals 0, NaN equals NaN); strings and binaries by size and bytes. */
COFFER_API int coffer_value_equal(const coffer_value *a, const coffer_value *b);

/** The type's name as the schema uses it ("int", "string", "objectId", ...).
 *  Static storage. Returns "unknown" for numbers outside the enum. */
COFFER_API const char *coffer_type_name(coffer_type type);

/** Writes a fresh ObjectId (4-byte big-endian seconds, 5 random bytes per
 *  process, 3-byte counter) to `*out`. Errors: COFFER_ERR_INVALID_ARGUMENT
 *  (out is NULL), COFFER_ERR_INTERNAL (no source of randomness). */
COFFER_API coffer_status coffer_object_id_generate(coffer_object_id *out);

/** Parses 24 hexadecimal digits into `*out`. COFFER_ERR_INVALID_ARGUMENT on
 *  any other input. */
COFFER_API coffer_status coffer_object_id_from_string(const char *hex, coffer_object_id *out);

/** Writes 24 lowercase hex digits and a NUL into `buf`, which must hold
 *  COFFER_OBJECT_ID_STRING_SIZE (25) bytes. */
#define COFFER_OBJECT_ID_STRING_SIZE 25
COFFER_API void coffer_object_id_to_string(const coffer_object_id *oid, char *buf);

/** Parses a decimal number ("1.25", "-3E-7", "NaN", "Inf") into decimal128,
 *  keeping its precision ("1.0" has coefficient 10, exponent -1), as BSON
 *  does. COFFER_ERR_INVALID_ARGUMENT, naming the text, if it is not a number,
 *  has more than 34 significant digits, or its exponent is out of range. */
COFFER_API coffer_status coffer_decimal128_from_string(const char *text, coffer_decimal128 *out);

/** Writes the canonical text of `d` (the BSON Decimal128 string form, which
 *  keeps trailing zeros: "1.0", "1.25", "-3E-7", "NaN", "-Infinity") into
 *  `buf`, which holds at least COFFER_DECIMAL128_STRING_SIZE bytes. A NULL
 *  `d` writes "". */
#define COFFER_DECIMAL128_STRING_SIZE 48
COFFER_API void coffer_decimal128_to_string(const coffer_decimal128 *d, char *buf);

/* ------------------------------------------------------------------------ */
/* Schema                                                                    */
/* ------------------------------------------------------------------------ */

/** Longest class name, in UTF-8 bytes. */
#define COFFER_MAX_CLASS_NAME 57
/** Longest property name, in UTF-8 bytes. */
#define COFFER_MAX_PROPERTY_NAME 63
/** Most classes in one file. */
#define COFFER_MAX_CLASSES 1000
/** Most properties in one class. */
#define COFFER_MAX_PROPERTIES 1000
/** Largest single string or binary value, in bytes (16 MiB). */
#define COFFER_MAX_VALUE_SIZE (16u * 1024u * 1024u)

/** The same limits as functions, for bindings that cannot read macros. */
COFFER_API size_t coffer_max_class_name(void);
COFFER_API size_t coffer_max_property_name(void);
COFFER_API size_t coffer_encryption_key_size(void);

/** Property flags, or-ed into coffer_property_schema.flags. */
enum {
    COFFER_PROPERTY_OPTIONAL = 1u << 0,    /**< may hold null */
    COFFER_PROPERTY_PRIMARY_KEY = 1u << 1, /**< unique, immutable, indexed */
    COFFER_PROPERTY_INDEXED = 1u << 2      /**< keeps a secondary index */
};

/** Class flags, or-ed into coffer_class_schema.flags.
 *  An embedded class has no primary key and its objects exist only inside
 *  one parent: they are created through a link, list or map property of
 *  the parent (a COFFER_TYPE_FIELDS value), replaced or removed with the
 *  value that holds them, and deleted with the parent. */
enum { COFFER_CLASS_EMBEDDED = 1u << 0 };

/** Collection kinds, for coffer_property_schema.collection. */
enum {
    COFFER_COLLECTION_NONE = 0,
    /** An ordered list of the property's type. */
    COFFER_COLLECTION_LIST = 1,
    /** A set (no duplicates, unspecified but stable order). Not of embedded
     *  objects. */
    COFFER_COLLECTION_SET = 2,
    /** A map from string keys to the property's type. */
    COFFER_COLLECTION_MAP = 3
};

/** Most levels of collections nested in mixed values. */
#define COFFER_MAX_NESTING 100

/** One property. Declare arrays of these statically; the library copies what
 *  it needs at coffer_config_set_schema(). Zero the fields you do not use. */
typedef struct coffer_property_schema {
    /** Name, 1..COFFER_MAX_PROPERTY_NAME bytes of UTF-8. */
    const char *name;
    /** Element type. */
    coffer_type type;
    /** COFFER_PROPERTY_* flags. */
    uint32_t flags;
    /** COFFER_COLLECTION_*: the property holds a list, set or map of
     *  `type` values. COFFER_PROPERTY_OPTIONAL then says whether elements may
     *  be null (lists and sets of links may not; map values of links always
     *  may). */
    uint32_t collection;
    /** For COFFER_TYPE_LINK: the target class. For
     *  COFFER_TYPE_LINKING_OBJECTS: the origin class. Otherwise NULL. */
    const char *object_class;
    /** For COFFER_TYPE_LINKING_OBJECTS: the origin property of
     *  `object_class`, a link or a list or set of links to this class.
     *  Otherwise NULL. */
    const char *link_origin_property;
    /** Reserved; NULL. */
    const void *reserved[2];
} coffer_property_schema;

/** One class: a name and its properties, in the order that gives each
 *  property its id (0, 1, 2, ...). */
typedef struct coffer_class_schema {
    /** Name, 1..COFFER_MAX_CLASS_NAME bytes of UTF-8. */
    const char *name;
    const coffer_property_schema *properties;
    size_t property_count;
    /** COFFER_CLASS_* flags. */
    uint32_t flags;
    /** Reserved; NULL. */
    const void *reserved[2];
} coffer_class_schema;

/** Checks a schema without opening anything. COFFER_OK, or
 *  COFFER_ERR_SCHEMA with a message naming the first fault: an empty or
 *  over-long name, a duplicate class or property, more than one primary key,
 *  a primary key of a type other than int, string, objectId or uuid, an index
 *  on a type other than bool, int, string, date, objectId or uuid (and never
 *  on a collection), a reserved field that is not zero; a link without a
 *  target class or to a class not in the schema; a set of embedded objects,
 *  a link to an embedded class from a mixed value; an embedded class with a
 *  primary key; linking objects whose origin is not a link, list or set of
 *  links to the class; object_class or link_origin_property on other types. */
COFFER_API coffer_status coffer_schema_validate(const coffer_class_schema *classes, size_t class_count);

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

typedef struct coffer_config coffer_config;

/** Creates a configuration with the defaults: the default path (see
 *  coffer_default_path()), no encryption, read-write, schema version 0, no
 *  schema (the file's stored schema is used as it is), no maximum file size.
 *  The caller owns `*out` and frees it with coffer_config_free().
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (out is NULL), COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_config_new(coffer_config **out);

/** Frees a configuration, wiping any key it holds. NULL is a no-op. A
 *  database opened from it does not depend on it. */
COFFER_API void coffer_config_free(coffer_config *config);

/** Sets the file path (copied). Clears any in-memory identifier. NULL
 *  restores the default path. The lock file is the path plus "-lock". */
COFFER_API coffer_status coffer_config_set_path(coffer_config *config, const char *path);

/** The path this configuration opens: the path set, or the default path, or
 *  NULL for an in-memory configuration. Owned by `config`; valid until the
 *  next setter call on it or until it is freed. */
COFFER_API const char *coffer_config_path(const coffer_config *config);

/** Makes the configuration in-memory under `identifier` (copied, non-empty)
 *  and clears the path. Every database opened in this process with the same
 *  identifier sees the same data; the data is discarded when the last of
 *  them closes; no file is left behind. NULL returns to the default path. */
COFFER_API coffer_status coffer_config_set_in_memory_identifier(coffer_config *config, const char *identifier);

/** Opens read-only (non-zero) or read-write (0). A read-only open fails with
 *  COFFER_ERR_NOT_FOUND if the file does not exist and every write gives
 *  COFFER_ERR_READ_ONLY. */
COFFER_API coffer_status coffer_config_set_read_only(coffer_config *config, int read_only);

/** A seed file (path copied) that is copied to the configured path when the
 *  database is opened and the path does not exist yet. NULL clears it. The
 *  copy is verified (coffer_verify()) before it takes the path: a damaged
 *  seed gives COFFER_ERR_CORRUPTED naming the first finding, and nothing is
 *  left at the path. */
COFFER_API coffer_status coffer_config_set_seed_path(coffer_config *config, const char *seed_path);

/** Sets the encryption key: exactly 64 bytes (COFFER_ENCRYPTION_KEY_SIZE),
 *  copied into locked memory that is wiped when the configuration is freed.
 *  NULL with size 0 removes the key. Any other size gives
 *  COFFER_ERR_INVALID_ARGUMENT naming the size received. */
#define COFFER_ENCRYPTION_KEY_SIZE 64
COFFER_API coffer_status coffer_config_set_encryption_key(coffer_config *config, const void *key, size_t size);

/** Sets the schema (validated and deep-copied; the arrays may be freed after
 *  the call) and its version. COFFER_ERR_SCHEMA if it is invalid, in which
 *  case the configuration keeps its previous schema. `classes` NULL with
 *  count 0 clears the schema: the file's stored schema is then used. */
COFFER_API coffer_status coffer_config_set_schema(coffer_config *config, const coffer_class_schema *classes, size_t class_count, uint64_t schema_version);

/** Opens only the named classes of the file (names copied). The others stay
 *  in the file untouched and are not visible through this handle. With a
 *  schema set, every name must be one of its classes. count 0 clears it.
 *  The subset must hold the target class of every link of its classes and
 *  every class that can link into it (through a link or a mixed property),
 *  so that deleting an object reaches every link to it: coffer_open() gives
 *  COFFER_ERR_SCHEMA naming the missing class otherwise. */
COFFER_API coffer_status coffer_config_set_class_subset(coffer_config *config, const char *const *class_names, size_t count);

/** Caps the file size in bytes (0 = no cap beyond the address space). A
 *  write that would grow the file past it fails with
 *  COFFER_ERR_FILE_TOO_LARGE and is not committed. Below it the file grows
 *  as needed: the map is grown before it fills, so writers never see
 *  COFFER_ERR_MAP_FULL for a file's size. */
COFFER_API coffer_status coffer_config_set_max_file_size(coffer_config *config, uint64_t max_bytes);

/** Sets the process-wide default path used by configurations that set no
 *  path (copied; NULL restores "default.coffer" in the current directory).
 *  Affects configurations created afterwards and those with no path set. */
COFFER_API coffer_status coffer_set_default_path(const char *path);

/** The process-wide default path. The string is owned by the library and
 *  stays valid for the life of the process: every path set is kept, so a
 *  string read here is not freed by a later coffer_set_default_path() in
 *  another thread (which returns a new one from then on). */
COFFER_API const char *coffer_default_path(void);

/* ------------------------------------------------------------------------ */
/* Opening and closing                                                       */
/* ------------------------------------------------------------------------ */

typedef struct coffer_db coffer_db;

/** Class and property ids: positions in the open database's schema. */
typedef uint32_t coffer_class_id;
typedef uint32_t coffer_property_id;

/** Opens (and creates, unless read-only) the database `config` describes.
 *  Opening a file that is already open in this process shares its storage.
 *  A file of an older format is upgraded in place by a read-write open, in
 *  a write transaction of its own (docs/FORMAT.md, "Upgrading"): a file of
 *  format 4 (one record per object) becomes format 5 (objects in clusters),
 *  unless the configuration asks for format 4
 *  (coffer_config_set_storage_format()) or another handle of this process
 *  has the file open; a read-only open reads it as it is. A failed upgrade
 *  leaves the file as it was. The caller owns `*out` and closes it with
 *  coffer_close().
 *
 *  An open that fails removes the files it created (an empty data file, a
 *  `-lock` or `-note` beside a file that is not a database), never files
 *  another process has open nor a file holding committed data.
 *
 *  Threads: opens of different files (and in-memory identifiers) run at
 *  the same time; one that takes long (a seed copy, a compaction, a
 *  migration, a progress callback that waits) holds up no other. Opens of
 *  one file in the process run one after another: a second open waits for
 *  the first to finish, then opens the file as the first left it, so a
 *  migration, a compaction or a seed copy runs once. If the first failed,
 *  nothing of it was committed and the second tries on its own (running
 *  its own migration callback, and failing on its own terms). A file is
 *  known by its path with symbolic links resolved. A migration or progress
 *  callback may open other files; two threads whose callbacks each open the
 *  file the other thread is opening wait for each other forever.
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT; COFFER_ERR_NOT_FOUND (read-only and
 *  the file does not exist, or the seed file does not exist); COFFER_ERR_IO
 *  (also a full disk, naming "No space left on device");
 *  COFFER_ERR_NOT_A_DATABASE; COFFER_ERR_FORMAT_VERSION (a newer format, or
 *  format 2 opened read-only); COFFER_ERR_CORRUPTED (also when upgrading
 *  finds a damaged index entry or record, for a file with a Coffer header but no
 *  stored schema, and for a header whose encryption flag disagrees with its
 *  key check, in every mode; the file is left as it was);
 *  COFFER_ERR_KEY_REQUIRED, COFFER_ERR_WRONG_KEY, COFFER_ERR_NOT_ENCRYPTED;
 *  COFFER_ERR_SCHEMA_VERSION (version lower than the file's);
 *  COFFER_ERR_MIGRATION_REQUIRED (schema differs at the same version, or
 *  differs in a way that needs a migration at a higher one); COFFER_ERR_READ_ONLY
 *  (read-only and the schema given differs from the file's, so it would
 *  have to be written); COFFER_ERR_BUSY;
 *  COFFER_ERR_SCHEMA (a class subset or a schema that leaves out a class
 *  able to link into it, see coffer_migration_delete_data());
 *  COFFER_ERR_CANCELLED (the progress callback, coffer_config_set_progress(),
 *  asked to stop; the file is as it was). */
COFFER_API coffer_status coffer_open(const coffer_config *config, coffer_db **out);

/** Closes a database handle. Transactions still open on it are aborted and
 *  become unusable (their calls give COFFER_ERR_MISUSE) but stay allocated
 *  until coffer_txn_free(). The storage is released when its last handle in
 *  the process closes; an in-memory store is discarded then. NULL is a no-op.
 *
 *  Handles do not cross fork(), as LMDB environments do not: in a child,
 *  open the file again (coffer_open() there gets storage of its own, never
 *  the parent's). A handle inherited from the parent gives COFFER_ERR_MISUSE
 *  when it begins a transaction, and coffer_close() of it only marks it
 *  closed: it releases nothing, so the parent's readers and locks stay
 *  intact. */
COFFER_API void coffer_close(coffer_db *db);

/** The path of the open file, or NULL for an in-memory database. Owned by
 *  `db`, valid until it is closed. */
COFFER_API const char *coffer_db_path(const coffer_db *db);

/** The schema version stored in the file. */
COFFER_API uint64_t coffer_db_schema_version(const coffer_db *db);

/** 1 if the database is encrypted, 0 if not. */
COFFER_API int coffer_db_is_encrypted(const coffer_db *db);

/** 1 if the handle is read-only. */
COFFER_API int coffer_db_is_read_only(const coffer_db *db);

/** Number of classes visible through this handle. */
COFFER_API size_t coffer_db_class_count(const coffer_db *db);

/** Looks up a class by name. COFFER_ERR_NOT_FOUND names the class. */
COFFER_API coffer_status coffer_db_find_class(const coffer_db *db, const char *name, coffer_class_id *out);

/** The schema of class `cls` as the handle sees it, with its properties in
 *  property-id order. Owned by `db`, valid until it is closed. NULL if `cls`
 *  is out of range. */
COFFER_API const coffer_class_schema *coffer_db_class_schema(const coffer_db *db, coffer_class_id cls);

/** Looks up a property of class `cls` by name. COFFER_ERR_NOT_FOUND names
 *  the class and the property. */
COFFER_API coffer_status coffer_db_find_property(const coffer_db *db, coffer_class_id cls, const char *name, coffer_property_id *out);

/** The id of the primary-key property of `cls` in `*out`, or
 *  COFFER_ERR_NOT_FOUND if the class has none. */
COFFER_API coffer_status coffer_db_primary_key(const coffer_db *db, coffer_class_id cls, coffer_property_id *out);

/* ------------------------------------------------------------------------ */
/* Migrations                                                                */
/* ------------------------------------------------------------------------ */

typedef struct coffer_txn coffer_txn;
typedef struct coffer_object coffer_object;

/** The state of one running migration, given to the migration callback.
 *  It and everything it hands out live until the callback returns. */
typedef struct coffer_migration coffer_migration;

/** A migration callback. It runs once, when coffer_open() opens a file
 *  whose stored schema version is lower than the configured one, inside the
 *  write transaction that applies the new schema: the file changes only if
 *  the callback returns COFFER_OK and the transaction then commits. Any
 *  other status aborts the open with that status (the message of the last
 *  error if it has that status, or one naming the callback), and the file is
 *  left exactly as it was. `old_version` is the file's schema version,
 *  `new_version` the configured one. */
typedef coffer_status (*coffer_migration_fn)(coffer_migration *migration, uint64_t old_version, uint64_t new_version,
                                             void *ctx);

/** Sets the migration callback (NULL removes it) and its context pointer,
 *  which the library passes through untouched. Without a callback a higher
 *  schema version applies the new schema on its own, as before: added
 *  properties get defaults, removed ones are dropped.
 *
 *  Before the callback runs, the new schema is in place: new classes and
 *  properties exist with default values, indexes are built. Until it
 *  returns, primary keys are not checked for uniqueness and the contents of
 *  removed or retyped link, collection and mixed properties are kept; after
 *  it returns, every primary key built or renamed by the migration is
 *  checked (COFFER_ERR_MIGRATION_REQUIRED names a duplicate value) and the
 *  removed contents are released. During the callback primary keys may be
 *  changed with coffer_object_set_value() (COFFER_ERR_IMMUTABLE otherwise);
 *  creating an object still needs a key no other object has. */
COFFER_API coffer_status coffer_config_set_migration(coffer_config *config, coffer_migration_fn fn, void *ctx);

/** The database being opened, with the new schema: look up class and
 *  property ids with coffer_db_find_class() and its siblings. Owned by the
 *  migration; it cannot begin transactions (COFFER_ERR_MISUSE) and
 *  coffer_close() ignores it. It becomes the handle coffer_open() returns. */
COFFER_API coffer_db *coffer_migration_db(coffer_migration *migration);

/** The write transaction of the migration, with the new schema: create,
 *  update and delete objects through it. Owned by the migration: commit,
 *  abort and free give COFFER_ERR_MISUSE. */
COFFER_API coffer_txn *coffer_migration_txn(coffer_migration *migration);

/** A read-only view of the file as it was before the migration, with the
 *  old schema: every stored class, including those the new schema drops,
 *  with their old properties, including those removed or retyped. Owned by
 *  the migration; as coffer_migration_db(). */
COFFER_API coffer_db *coffer_migration_old_db(coffer_migration *migration);

/** A read transaction on coffer_migration_old_db(): a snapshot of the file
 *  before the migration, unchanged by the migration's writes. Objects read
 *  through it give old values with old property ids. Owned by the
 *  migration. */
COFFER_API coffer_txn *coffer_migration_old_txn(coffer_migration *migration);

/** Called by coffer_migration_enumerate() once per object of the class as
 *  it was before the migration. `old_object` is the object read with the
 *  old schema (in coffer_migration_old_txn()); `new_object` the same object
 *  with the new schema (in coffer_migration_txn()), or NULL if the new
 *  schema does not have the class or the object was deleted by the
 *  migration. Both handles are valid until the call returns. A status other
 *  than COFFER_OK stops the enumeration and is returned by it. */
typedef coffer_status (*coffer_migration_enumerate_fn)(coffer_migration *migration, coffer_object *old_object,
                                                       coffer_object *new_object, void *ctx);

/** Calls `fn` for every object of class `class_name` that existed before
 *  the migration, in key order. Objects created by the migration are not
 *  visited. COFFER_ERR_NOT_FOUND if neither the old nor the new schema has
 *  the class; a class only the new schema has visits nothing. */
COFFER_API coffer_status coffer_migration_enumerate(coffer_migration *migration, const char *class_name,
                                                    coffer_migration_enumerate_fn fn, void *ctx);

/** Flags of coffer_migration_enumerate_v2(). */
typedef enum coffer_migration_enumerate_flags {
    /** The visits are not counted in the migration's progress
     *  (COFFER_PROGRESS_MIGRATION): the caller counts each object when it
     *  has done its work on it, with coffer_migration_count_visited(). For
     *  callers that collect the objects first and process them after the
     *  enumeration returns, whose progress would otherwise reach the end
     *  before the work began. */
    COFFER_MIGRATION_COUNT_LATER = 1
} coffer_migration_enumerate_flags;

/** As coffer_migration_enumerate(), with `flags` (0, or
 *  COFFER_MIGRATION_COUNT_LATER). COFFER_ERR_INVALID_ARGUMENT names any
 *  other flag. */
COFFER_API coffer_status coffer_migration_enumerate_v2(coffer_migration *migration, const char *class_name,
                                                       coffer_migration_enumerate_fn fn, void *ctx, unsigned flags);

/** Counts `count` more objects of the file before the migration as done,
 *  for the progress of the migration (coffer_config_set_progress(),
 *  COFFER_PROGRESS_MIGRATION), after an enumeration with
 *  COFFER_MIGRATION_COUNT_LATER. Returns COFFER_ERR_CANCELLED if the
 *  progress callback cancels (stop and return it from the migration
 *  callback); COFFER_ERR_INVALID_ARGUMENT if the migration has ended.
 *  Counts past the number of objects the file had (a class enumerated
 *  twice) are not an error: the progress stays below its total until the
 *  migration callback returns. */
COFFER_API coffer_status coffer_migration_count_visited(coffer_migration *migration, uint64_t count);

/** Renames property `from` of class `class_name` (in the old schema) to
 *  `to` (in the new schema), keeping its values, links, collections and
 *  index: the new property takes over the old one's storage. `from` must
 *  not be in the new schema; both must be of the same type, collection kind
 *  and target class, and an optional property cannot become required
 *  (COFFER_ERR_SCHEMA naming both). Call it before the migration writes any
 *  object (COFFER_ERR_MISUSE otherwise), so that no value is written under
 *  the new name first. Renaming again to the same name is a no-op.
 *  Errors: COFFER_ERR_NOT_FOUND naming the class or property missing. */
COFFER_API coffer_status coffer_migration_rename_property(coffer_migration *migration, const char *class_name, const char *from,
                                                          const char *to);

/** Deletes every object of class `class_name`, with the cascades of
 *  coffer_object_delete(). If the new schema no longer has the class, it is
 *  also removed from the file's schema, so that a later schema may add a
 *  class by that name afresh. COFFER_ERR_NOT_FOUND if neither schema has it.
 *
 *  Removing a model class: a class the new schema leaves out is normally
 *  kept in the file, untouched. One that can link to the classes the new
 *  schema keeps (through a link or a mixed property) cannot stay unseen,
 *  since deleting an object must reach every link to it: after the callback
 *  returns (or, without a callback, once the new schema is applied) it is
 *  dropped from the file if it has no objects (deleted here, or empty all
 *  along); if it still has objects, coffer_open() fails with
 *  COFFER_ERR_SCHEMA naming the class, and the file is left as it was.
 *  Likewise a class cannot leave the file while a class staying in it has a
 *  property that names it (COFFER_ERR_SCHEMA naming both): delete the data
 *  of both. A class subset (coffer_config_set_class_subset()) and an open
 *  at the same schema version are not migrations and are checked before
 *  anything runs. */
COFFER_API coffer_status coffer_migration_delete_data(coffer_migration *migration, const char *class_name);

/** Deletes the file (with its lock file) and creates it afresh with the
 *  configured schema when opening it would otherwise need or run a
 *  migration: the file's schema version differs from the configured one
 *  (lower or higher; a migration callback is then not called), or the
 *  schema differs from the file's at the same version. Adding classes alone
 *  needs no migration and deletes nothing. Only a configuration with a
 *  schema can need a migration. Never for any other failure: a wrong or
 *  missing key, a damaged or foreign file keep their own error and the
 *  file. It cannot be combined with coffer_config_set_read_only()
 *  (coffer_open() gives COFFER_ERR_INVALID_ARGUMENT). If the file is open
 *  elsewhere in this process (or, in memory, by another handle),
 *  coffer_open() gives COFFER_ERR_BUSY and deletes nothing. Another process
 *  that has the file open keeps reading the deleted file: close it there
 *  first. Non-zero enables it; 0 (the default) disables it. */
COFFER_API coffer_status coffer_config_set_delete_if_migration_needed(coffer_config *config, int delete_if_needed);

/* ------------------------------------------------------------------------ */
/* Progress of long opens                                                    */
/* ------------------------------------------------------------------------ */

/** The steps of coffer_open() that can take long, in the order they run.
 *  The numbers are stable. */
typedef enum coffer_progress_phase {
    /** Copying the seed file (coffer_config_set_seed_path()) to the path;
     *  units are bytes of the seed file. */
    COFFER_PROGRESS_SEED_COPY = 1,
    /** Measuring the file for the compact-on-launch callback
     *  (coffer_config_set_should_compact_on_launch()) and asking it: one
     *  unit, reported as 0 of 1 before and 1 of 1 after the decision. */
    COFFER_PROGRESS_SHOULD_COMPACT = 2,
    /** Writing the compacted copy of the file; units are bytes, `total`
     *  being the bytes of the pages in use (the size of the copy). */
    COFFER_PROGRESS_COMPACTION = 3,
    /** Running the migration callback (coffer_config_set_migration());
     *  units are objects of the file before the migration, `done` counting
     *  those coffer_migration_enumerate() has visited. */
    COFFER_PROGRESS_MIGRATION = 4,
    /** Writing a copy with coffer_db_write_copy_v2(): bytes for a plain
     *  copy of a plain, unsynced file (`total` being the bytes of the pages
     *  up to the last one in use, so the copy may end below it), else
     *  entries of the file copied one by one. */
    COFFER_PROGRESS_COPY = 5
} coffer_progress_phase;

/** A progress callback. `done` of `total` units of `phase` are complete
 *  (see coffer_progress_phase for the units). Each phase that runs is
 *  reported first with `done` 0 and last with `done` == `total`; in between
 *  `done` only grows and is below `total`, and calls come at most about
 *  once per percent of `total` (never once per object or page). A phase
 *  with nothing to do reports 0 of 0. `total` may be 0, so compute a
 *  fraction as `total ? (double)done / total : 1.0`.
 *
 *  Return 0 to go on, or non-zero to cancel: coffer_open() then gives
 *  COFFER_ERR_CANCELLED, and the file is as it was before the open (a
 *  half-copied seed or compacted copy is removed, the migration's write
 *  transaction is aborted). A migration callback that goes on after
 *  coffer_migration_enumerate() returned COFFER_ERR_CANCELLED is still
 *  abandoned.
 *
 *  Threading: called on the thread that called coffer_open(), between
 *  steps of the open; it must not open, close or write to the file being
 *  opened. During COFFER_PROGRESS_MIGRATION it is called from inside the
 *  migration callback's coffer_migration_enumerate(). */
typedef int (*coffer_progress_fn)(coffer_progress_phase phase, uint64_t done, uint64_t total, void *ctx);

/** Sets the progress callback of coffer_open() and its context pointer
 *  (borrowed: it must stay valid while the configuration opens
 *  databases). NULL removes the callback and forgets `ctx`. Phases that do
 *  not run in an open (no seed to copy, no migration, nothing to compact)
 *  are not reported; an in-memory database has only
 *  COFFER_PROGRESS_MIGRATION. Errors: COFFER_ERR_INVALID_ARGUMENT (NULL
 *  config). */
COFFER_API coffer_status coffer_config_set_progress(coffer_config *config, coffer_progress_fn fn, void *ctx);

/* ------------------------------------------------------------------------ */
/* Copying and compacting                                                    */
/* ------------------------------------------------------------------------ */

/** Writes a compacted copy of the database's current committed state (what
 *  a read transaction begun now sees) to a new file at `path`, which must
 *  not exist (COFFER_ERR_IO naming it otherwise; nothing is overwritten).
 *  `key` (`key_size` bytes, exactly 64, or NULL with 0) is the copy's
 *  encryption key, which need not be the database's: NULL writes a plain
 *  copy of an encrypted database, a key an encrypted copy of a plain one,
 *  another key re-keys. The copy keeps every object key, collection and
 *  backlink; it opens with the key given and has a fresh file id (sealed
 *  values of one file never open in the other). The copy appears at `path`
 *  only when complete: a failure leaves no file there. Works on in-memory
 *  databases too (the copy is a file). Uncommitted writes of any open
 *  transaction are not in the copy. The copy's versions go on from the
 *  database's (coffer_txn_version() of a read transaction of the copy is
 *  the version the database had): versions never go back. A copy of a
 *  synced file is a bundle (docs/SYNC.md, "Bundled files"): it keeps the
 *  sync progress (the last server version integrated, the subscriptions)
 *  but no client id, so that each file made from it (opened through
 *  coffer_config_set_seed_path() with a sync configuration, or written to)
 *  is a new sync client that downloads only what the service changed since
 *  the copy. A synced file with local commits the service has not yet
 *  acknowledged is not copied (COFFER_ERR_MISUSE naming how many): wait
 *  with coffer_sync_wait_for_upload() first.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL db or path, a key of another
 *  size), COFFER_ERR_MISUSE (closed; a synced file with commits not uploaded),
 *  COFFER_ERR_IO, COFFER_ERR_NO_MEMORY,
 *  COFFER_ERR_INTEGRITY or COFFER_ERR_CORRUPTED (the source is damaged). */
COFFER_API coffer_status coffer_db_write_copy(coffer_db *db, const char *path, const void *key, size_t key_size);

/** coffer_db_write_copy() telling `progress` (NULL: nothing is told, as
 *  coffer_db_write_copy()) how far the copy is, as COFFER_PROGRESS_COPY,
 *  on the calling thread, with `ctx` (borrowed for the call). A non-zero
 *  return cancels the copy: COFFER_ERR_CANCELLED, and nothing is left at
 *  `path` nor beside it. The database is not changed either way. Errors:
 *  those of coffer_db_write_copy() and COFFER_ERR_CANCELLED. */
COFFER_API coffer_status coffer_db_write_copy_v2(coffer_db *db, const char *path, const void *key, size_t key_size,
                                                 coffer_progress_fn progress, void *ctx);

/** Decides whether to compact a file when it is first opened in this
 *  process: `total_bytes` is the file's size, `used_bytes` the bytes of the
 *  pages holding data (the rest is free space kept for reuse). Return
 *  non-zero to compact. */
typedef int (*coffer_should_compact_fn)(uint64_t total_bytes, uint64_t used_bytes, void *ctx);

/** Sets the compact-on-launch callback (NULL removes it). coffer_open()
 *  calls it when the file is not yet open in this process, before anything
 *  else reads it; if it returns non-zero and no other process has the file
 *  open, the file is replaced by a compacted copy of itself (same contents,
 *  keys and encryption, free pages dropped). The copy is written beside the
 *  file, synced, and renamed over it, so a crash at any point leaves the
 *  old or the new file, both complete. If another process has the file
 *  open, nothing is compacted and the open goes on. Not for in-memory
 *  databases (the callback is not called) and not with
 *  coffer_config_set_read_only() (coffer_open() gives
 *  COFFER_ERR_INVALID_ARGUMENT). */
COFFER_API coffer_status coffer_config_set_should_compact_on_launch(coffer_config *config, coffer_should_compact_fn fn, void *ctx);

/* ------------------------------------------------------------------------ */
/* Verification                                                              */
/* ------------------------------------------------------------------------ */

/** What a finding of coffer_verify() is about. The numbers are stable. */
typedef enum coffer_verify_kind {
    COFFER_VERIFY_NONE = 0,
    /** The file as a whole: too short for the pages in use, unreadable. */
    COFFER_VERIFY_FILE = 1,
    /** One of the two meta pages (page 0 or 1) of the storage engine. */
    COFFER_VERIFY_META = 2,
    /** A page header: page number, page type, free-space bounds, depth. */
    COFFER_VERIFY_PAGE = 3,
    /** A node on a page: its offset, key or data size, flags, child page. */
    COFFER_VERIFY_NODE = 4,
    /** Keys out of order on a page or across pages of one tree. */
    COFFER_VERIFY_KEY_ORDER = 5,
    /** The pages of a value stored outside its leaf page. */
    COFFER_VERIFY_OVERFLOW = 6,
    /** A page reached twice (from two trees, or from a tree and the free
     *  list). */
    COFFER_VERIFY_PAGE_SHARED = 7,
    /** The storage engine's list of free pages. */
    COFFER_VERIFY_FREE_LIST = 8,
    /** A tree's recorded depth or page and entry counts differ from its
     *  pages, or pages belong to nothing. */
    COFFER_VERIFY_TREE = 9,
    /** The Coffer header or the stored schema. */
    COFFER_VERIFY_HEADER = 10,
    /** A stored object does not decode, or (encrypted) fails authentication. */
    COFFER_VERIFY_RECORD = 11,
    /** An index entry is missing, extra, or names the wrong value. */
    COFFER_VERIFY_INDEX = 12,
    /** Two objects share a primary key, or a lookup by it misses. */
    COFFER_VERIFY_PRIMARY_KEY = 13,
    /** A link names an object that does not exist. */
    COFFER_VERIFY_LINK = 14,
    /** A backlink count differs from the links actually stored. */
    COFFER_VERIFY_BACKLINK = 15,
    /** A list, set or map: header, chunks, elements, element count. */
    COFFER_VERIFY_COLLECTION = 16,
    /** An object-key or collection-id counter is behind the keys in use. */
    COFFER_VERIFY_COUNTER = 17,
    /** An entry of the change log does not decode. */
    COFFER_VERIFY_CHANGE_LOG = 18
} coffer_verify_kind;

/** The page number of a finding that is not tied to one page. */
#define COFFER_VERIFY_NO_PAGE UINT64_MAX

/** The findings of one coffer_verify() run. */
typedef struct coffer_verify_report coffer_verify_report;

/** Checks the database file `config` describes (its path or in-memory
 *  identifier, and its encryption key; other settings are ignored) and
 *  gives what is wrong with it in `*out`, which the caller frees with
 *  coffer_verify_report_free(). An empty report means the file is sound.
 *
 *  First the storage engine's structure is read page by page with a reader
 *  of its own that checks every offset before following it, without
 *  handing any page to the engine: both meta pages (the newest valid one is
 *  walked, as the engine would, and it must sit on the page its
 *  transaction id names, which the engine's readers read), every page
 *  header, node bounds and flags, key order, overflow pages, pages reached
 *  twice, the free list, every sub-database (and sorted-duplicate
 *  sub-pages), the trees' depths and counts, and pages that belong to
 *  nothing. Only if that finds nothing is the file opened read-only through
 *  the normal path with the schema stored in it, which never needs a change
 *  (a missing, undecodable or inconsistent stored schema, or a class whose
 *  sub-databases are missing, is a finding of kind COFFER_VERIFY_HEADER),
 *  and every object is decoded (authenticated, when encrypted) property by
 *  property, with its collections; indexes and primary keys, links and
 *  backlink counts, the key and collection-id counters and the change log
 *  are checked against the data. A damaged file is never a crash: it gives
 *  findings.
 *
 *  The file may be open in this process or others: the check reads one
 *  committed version, which a read transaction keeps in place meanwhile
 *  (when the file's lock file cannot be created, as in a read-only folder,
 *  the newest version is read without that guard). As opening does, this
 *  makes the lock file beside a file whose meta pages are sound. In-memory
 *  databases are verified while open in this process. Verification reads
 *  the whole file: its cost grows with the file's size.
 *
 *  Errors (no report): COFFER_ERR_INVALID_ARGUMENT (NULL config or out);
 *  COFFER_ERR_NOT_FOUND (no such file or in-memory database);
 *  COFFER_ERR_IO (the file cannot be read, or is a directory);
 *  COFFER_ERR_READ_ONLY (the pages are sound but no lock file can be made
 *  beside the file, so its contents cannot be read);
 *  COFFER_ERR_FORMAT_VERSION (a format-2 file, which only a read-write open
 *  upgrades, or a newer format); COFFER_ERR_KEY_REQUIRED,
 *  COFFER_ERR_WRONG_KEY, COFFER_ERR_NOT_ENCRYPTED (the key does not fit
 *  the file, so its contents cannot be checked); COFFER_ERR_NO_MEMORY.
 *  Damage of any kind, including a file that is not a database at all, is
 *  reported as findings with COFFER_OK. */
COFFER_API coffer_status coffer_verify(const coffer_config *config, coffer_verify_report **out);

/** As coffer_verify(), for the file (or in-memory store) of the open handle
 *  `db`, whose key it uses: no configuration or key is needed. The contents
 *  checked are the classes the handle sees (all of them, unless it was
 *  opened with a class subset). May be called while the handle has
 *  transactions open; the check uses a read transaction of its own.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT, COFFER_ERR_MISUSE (closed, or lent
 *  to a migration callback), COFFER_ERR_IO, COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_db_verify(coffer_db *db, coffer_verify_report **out);

/** The number of findings kept in the report (at most 1000). 0 for NULL. */
COFFER_API size_t coffer_verify_report_count(const coffer_verify_report *report);

/** How many findings were found beyond those kept (a badly damaged file). */
COFFER_API size_t coffer_verify_report_omitted(const coffer_verify_report *report);

/** The kind of finding `index` (COFFER_VERIFY_NONE when out of range). */
COFFER_API coffer_verify_kind coffer_verify_report_kind(const coffer_verify_report *report, size_t index);

/** The page number finding `index` is about, or COFFER_VERIFY_NO_PAGE. For
 *  a damaged object the page is its leaf page when it can be located. */
COFFER_API uint64_t coffer_verify_report_page(const coffer_verify_report *report, size_t index);

/** The class finding `index` is about, or NULL. Owned by the report. */
COFFER_API const char *coffer_verify_report_class(const coffer_verify_report *report, size_t index);

/** The object key finding `index` is about, or 0 when none. */
COFFER_API uint64_t coffer_verify_report_object_key(const coffer_verify_report *report, size_t index);

/** What is wrong, in English, naming the sub-database, page, class,
 *  property or object. Owned by the report; NULL when out of range. */
COFFER_API const char *coffer_verify_report_message(const coffer_verify_report *report, size_t index);

/** Frees a report. NULL is a no-op. */
COFFER_API void coffer_verify_report_free(coffer_verify_report *report);

/** A static English name of a finding kind ("meta page", "record", ...). */
COFFER_API const char *coffer_verify_kind_name(coffer_verify_kind kind);

/** Makes coffer_open() verify the file first (non-zero) or not (0, the
 *  default), as coffer_verify() does: a damaged file is refused with
 *  COFFER_ERR_CORRUPTED, whose message names the first finding and how many
 *  there are. For files from outside (downloads, imports); it reads the
 *  whole file, so it costs time in proportion to its size. A seed file
 *  (coffer_config_set_seed_path()) is always verified when it is copied,
 *  whatever this setting, and a damaged one is not copied. */
COFFER_API coffer_status coffer_config_set_verify_on_open(coffer_config *config, int verify);

/* ------------------------------------------------------------------------ */
/* Active versions                                                           */
/* ------------------------------------------------------------------------ */

/** Limits the number of versions of the file kept alive at once (0, the
 *  default, means no limit). A version stays alive while a read transaction
 *  of any process reads it, and every commit makes a new one; old versions
 *  that are read keep their pages from being reused, so the file grows.
 *  With a limit set on the handle, coffer_txn_begin() of a write
 *  transaction fails with COFFER_ERR_LIMIT, naming the limit and the count,
 *  when its commit would bring the number of live versions (those read by
 *  open read transactions, plus the new one) above the limit. End old read
 *  transactions and retry. */
COFFER_API coffer_status coffer_config_set_max_active_versions(coffer_config *config, uint64_t max_versions);

/** The number of versions of the file alive now: the distinct versions
 *  read by open read transactions of every process, plus the newest one if
 *  none reads it. In `*out`. */
COFFER_API coffer_status coffer_db_active_versions(coffer_db *db, uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Durability                                                                */

/** How much a returned commit survives, as SQLite's `synchronous` and
 *  LMDB's MDB_NOMETASYNC / MDB_NOSYNC. Whatever the level, a crash of the
 *  application (the process killed, even with SIGKILL) loses no commit
 *  that returned: the data is in the operating system's cache. The levels
 *  differ in a crash of the system (kernel panic, power loss). */
typedef enum coffer_durability {
    /** The default: a commit that returned survives a system crash. Every
     *  commit writes its pages and flushes them to the disk (fdatasync),
     *  then writes and flushes the page that makes it current. */
    COFFER_DURABILITY_FULL = 0,
    /** The data pages are flushed at every commit; the page that makes a
     *  commit current is flushed with the next commit (or coffer_db_sync()).
     *  A system crash may lose the last commit(s) but never leaves the file
     *  damaged: it opens at an earlier, complete commit. */
    COFFER_DURABILITY_NORMAL = 1,
    /** Nothing is flushed by a commit; the system writes the pages back
     *  when it chooses, or coffer_db_sync() flushes them. A system crash can
     *  lose recent commits and, on file systems that reorder writes, leave
     *  the file DAMAGED (coffer_verify() then reports it). Use it only for
     *  data that can be rebuilt. */
    COFFER_DURABILITY_NONE = 2
} coffer_durability;

/** Sets the durability of commits made through the handles opened with
 *  `config` (default COFFER_DURABILITY_FULL). The level belongs to the
 *  file's storage environment, which the handles of one process share: the
 *  first handle that can write fixes it, and coffer_open() of another
 *  handle of the same file in the process asking for a different level
 *  fails with COFFER_ERR_BUSY naming both levels. Read-only handles and
 *  in-memory databases (which are never flushed) ignore it.
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL config, or a value that is not
 *  a coffer_durability, named in the message). */
COFFER_API coffer_status coffer_config_set_durability(coffer_config *config, coffer_durability durability);

/** The durability the commits of `db` have, in `*out`: the level set at
 *  coffer_config_set_durability() for a file, COFFER_DURABILITY_NONE for an
 *  in-memory database; a read-only handle reports its file's level
 *  (COFFER_DURABILITY_FULL if no handle of the process can write).
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL db or out); COFFER_ERR_MISUSE
 *  (closed). */
COFFER_API coffer_status coffer_db_durability(coffer_db *db, coffer_durability *out);

/** Flushes every commit of the file made so far to the disk, whatever the
 *  durability: once it returns COFFER_OK, they survive a system crash.
 *  Nothing to do for a read-only handle or an in-memory database.
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL db); COFFER_ERR_MISUSE
 *  (closed); COFFER_ERR_IO (the flush failed, with the system's reason). */
COFFER_API coffer_status coffer_db_sync(coffer_db *db);

/* ------------------------------------------------------------------------ */
/* File statistics                                                           */
/* ------------------------------------------------------------------------ */

/** What a file is made of, as coffer_db_stats() reads it in one read
 *  transaction. Bytes of a part are the bytes of the pages it fills. */
typedef struct coffer_stats {
    /** Size of the file on disk (for an in-memory database, of its store). */
    uint64_t file_size;
    /** Bytes per page. */
    uint64_t page_size;
    /** Pages up to the highest one in use; pages_used * page_size is at most
     *  file_size (the rest of the file is allocated but never used yet). */
    uint64_t pages_used;
    /** Of pages_used, the free pages kept for reuse by later commits
     *  (compacting drops them). */
    uint64_t pages_free;
    /** The size of the file's memory map (address space, not disk). */
    uint64_t map_size;
    /** The newest committed version (as coffer_txn_version()). */
    uint64_t version;
    /** Entries of the change log kept for readers, and their bytes. */
    uint64_t changelog_entries;
    uint64_t changelog_bytes;
    /** Bytes of lists, sets, maps and backlinks of every class. */
    uint64_t collection_bytes;
    /** Bytes of the metadata: schema, counters and the change log. */
    uint64_t metadata_bytes;
    /** Reader slots of the file: the most there can be, and the most used
     *  at once by all processes since the lock file was made (a high-water
     *  mark; coffer_db_readers() lists the slots in use now). */
    uint32_t max_readers;
    uint32_t readers;
} coffer_stats;

/** Fills `*out` with the statistics of `db`'s file at its newest version.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (db or out NULL); COFFER_ERR_MISUSE
 *  (closed); COFFER_ERR_LIMIT (no reader slot free);
 *  COFFER_ERR_CORRUPTED (the free list or change log cannot be read). */
COFFER_API coffer_status coffer_db_stats(coffer_db *db, coffer_stats *out);

/** The objects of one class and the bytes they and their indexes fill. */
typedef struct coffer_class_stats {
    /** Number of objects (as coffer_class_count()). */
    uint64_t objects;
    /** Bytes of the pages holding the objects' records. */
    uint64_t object_bytes;
    /** Entries of the class's indexes (primary key and secondary indexes
     *  together: one per indexed property of each object), and their bytes. */
    uint64_t index_entries;
    uint64_t index_bytes;
} coffer_class_stats;

/** Fills `*out` for class `cls` at the newest version. Embedded objects are
 *  counted in their own class. Errors: COFFER_ERR_INVALID_ARGUMENT (NULL
 *  pointers, a class id out of range, naming it); COFFER_ERR_MISUSE. */
COFFER_API coffer_status coffer_db_class_stats(coffer_db *db, coffer_class_id cls, coffer_class_stats *out);

/** One reader slot of the file: the process and thread that hold it and
 *  the version its read transaction reads (0 when it has none open). */
typedef struct coffer_reader {
    int64_t pid;
    uint64_t thread;
    uint64_t version;
} coffer_reader;

/** Lists the reader slots in use by every process that has the file open:
 *  writes up to `capacity` of them to `out` and their total number to
 *  `*count` (call with capacity 0 and out NULL to size the array). Open
 *  read transactions pin their version: its pages, and the change log
 *  entries after it, are kept until they end.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (db or count NULL, out NULL with a
 *  capacity); COFFER_ERR_MISUSE (closed); COFFER_ERR_INTERNAL. */
COFFER_API coffer_status coffer_db_readers(coffer_db *db, coffer_reader *out, size_t capacity, size_t *count);

/* ------------------------------------------------------------------------ */
/* Transactions                                                              */
/* ------------------------------------------------------------------------ */

typedef struct coffer_txn coffer_txn;

enum {
    COFFER_TXN_READ = 0,
    COFFER_TXN_WRITE = 1
};

/** Begins a transaction. A read transaction is a snapshot: it does not see
 *  commits made after it began. Only one write transaction exists per file
 *  across all processes; this call waits until it can have it. A write
 *  transaction must be committed or aborted on the thread that began it.
 *  The caller owns `*out` and frees it with coffer_txn_free().
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT; COFFER_ERR_MISUSE (db closed, or
 *  this thread already holds a write transaction on the file);
 *  COFFER_ERR_READ_ONLY (write on a read-only handle); COFFER_ERR_LIMIT
 *  (too many readers); COFFER_ERR_BUSY (another process grew the file beyond
 *  this process's map while transactions of this process stayed open: end
 *  them and retry); COFFER_ERR_INTERNAL. */
COFFER_API coffer_status coffer_txn_begin(coffer_db *db, int mode, coffer_txn **out);

/** Commits and ends the transaction; the handle stays allocated until
 *  coffer_txn_free(). Committing a read transaction just ends it. Once it
 *  returns COFFER_OK, the write is durable (at the handle's
 *  coffer_durability: survives a system crash at COFFER_DURABILITY_FULL,
 *  the default; an application crash at every level).
 *
 *  Errors: COFFER_ERR_MISUSE (already ended, database closed, or another
 *  thread than the one that began the write); COFFER_ERR_MAP_FULL or
 *  COFFER_ERR_FILE_TOO_LARGE (nothing was committed); COFFER_ERR_LIMIT (a
 *  file that syncs: the commit's sync changeset would exceed the 64 MiB of a
 *  sync frame, docs/SYNC.md; commit it in smaller transactions);
 *  COFFER_ERR_IO (also a full disk, naming "No space left on device"). On any
 *  error of a write transaction nothing of it is committed and it has ended. */
COFFER_API coffer_status coffer_txn_commit(coffer_txn *txn);

/** Discards the transaction's changes and ends it. Aborting an ended
 *  transaction gives COFFER_ERR_MISUSE. */
COFFER_API coffer_status coffer_txn_abort(coffer_txn *txn);

/** Aborts the transaction if it is still active, and frees the handle and
 *  every object handle and iterator of it. NULL is a no-op. */
COFFER_API void coffer_txn_free(coffer_txn *txn);

/** 1 if the transaction is a write transaction that has not ended. */
COFFER_API int coffer_txn_is_write(const coffer_txn *txn);

/** 1 if the transaction has not ended. */
COFFER_API int coffer_txn_is_active(const coffer_txn *txn);

/** Where the changes of a commit came from, as the change log records it. */
typedef enum coffer_origin {
    COFFER_ORIGIN_LOCAL = 0,  /**< made by this program (the default) */
    COFFER_ORIGIN_REMOTE = 1  /**< applied from elsewhere, e.g. by sync */
} coffer_origin;

/** The version of the file the transaction sees: for a read transaction the
 *  version of its snapshot, for a write transaction the version its commit
 *  will make. Every commit that writes anything makes the next version, in
 *  every process; versions never go back. In `*out`.
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (not a transaction, out NULL);
 *  COFFER_ERR_MISUSE (the transaction has ended). */
COFFER_API coffer_status coffer_txn_version(const coffer_txn *txn, uint64_t *out);

/** Marks the commit of write transaction `txn` with `origin` (a
 *  coffer_origin), which the change log keeps with what it changed; commits
 *  are COFFER_ORIGIN_LOCAL unless marked.
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (not a transaction, unknown origin);
 *  COFFER_ERR_NOT_IN_WRITE (a read transaction); COFFER_ERR_MISUSE (the
 *  transaction has ended). */
COFFER_API coffer_status coffer_txn_set_origin(coffer_txn *txn, int origin);

/** The origin of the commit that made `version`, read from the change log in
 *  the snapshot of `txn`, in `*origin`.
 *
 *  Errors: COFFER_ERR_NOT_FOUND when the log has no entry for `version`:
 *  that commit changed no object (a schema change), or no reader needed its
 *  entry any more and a later commit trimmed it (docs/FORMAT.md, "Change
 *  log"); COFFER_ERR_CORRUPTED or COFFER_ERR_INTEGRITY for a damaged entry;
 *  COFFER_ERR_INVALID_ARGUMENT; COFFER_ERR_MISUSE (the transaction ended). */
COFFER_API coffer_status coffer_txn_commit_origin(coffer_txn *txn, uint64_t version, int *origin);

/* ------------------------------------------------------------------------ */
/* Objects                                                                   */
/* ------------------------------------------------------------------------ */

/** A view of one object inside one transaction. It belongs to the
 *  transaction: it is freed by coffer_txn_free() and unusable once the
 *  transaction ends. coffer_object_release() gives it back earlier, which
 *  long loops should do. */
typedef struct coffer_object coffer_object;

/** Object keys: unique within a class, assigned in increasing order and
 *  never reused. */
typedef uint64_t coffer_object_key;

/** One property value for creating or updating an object. */
typedef struct coffer_field {
    coffer_property_id property;
    coffer_value value;
} coffer_field;

/** Update policies for coffer_object_create(). */
enum {
    /** A duplicate primary key is an error. */
    COFFER_UPDATE_ERROR = 0,
    /** An existing object with the primary key gets every listed field. */
    COFFER_UPDATE_ALL = 1,
    /** An existing object gets only the listed fields whose value differs. */
    COFFER_UPDATE_MODIFIED = 2
};

/** Creates an object of class `cls` in write transaction `txn`. `fields`
 *  lists `count` property values in any order; properties not listed get
 *  their default (null if optional, else false, 0, "", empty bytes, the
 *  epoch, the all-zero ObjectId and UUID, or the decimal 0E+0, whose BID
 *  encoding is high 0x3040000000000000, low 0). A class with a primary key
 *  needs it listed unless the key is optional (then it is null). With
 *  COFFER_UPDATE_ALL or COFFER_UPDATE_MODIFIED an existing object with the
 *  same primary key is updated instead. If `out` is not NULL it receives a
 *  handle to the object (owned by the transaction).
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (bad id, a property listed twice);
 *  COFFER_ERR_NOT_IN_WRITE; COFFER_ERR_READ_ONLY; COFFER_ERR_MISUSE;
 *  COFFER_ERR_TYPE (names the class, property and the type received);
 *  COFFER_ERR_PRIMARY_KEY_EXISTS (names the class and the value);
 *  COFFER_ERR_LIMIT (a value larger than COFFER_MAX_VALUE_SIZE);
 *  COFFER_ERR_MAP_FULL, COFFER_ERR_FILE_TOO_LARGE (the transaction can only
 *  be aborted). On error nothing of this call is written.
 *
 *  Links and collections: a link property takes a COFFER_TYPE_LINK or
 *  COFFER_TYPE_OBJECT value of the target class, null, or a
 *  COFFER_TYPE_FIELDS description of a new object (created, or upserted by
 *  primary key under `update_policy`; embedded objects are always new). A
 *  list or set property takes a COFFER_TYPE_LIST value, a map property a
 *  COFFER_TYPE_MAP value, whose elements follow the same rules. A mixed
 *  property takes any scalar, a link, or a COFFER_TYPE_LIST or
 *  COFFER_TYPE_MAP of mixed values nested up to COFFER_MAX_NESTING levels.
 *  Objects of an embedded class cannot be created by this call
 *  (COFFER_ERR_INVALID_ARGUMENT). Further errors: COFFER_ERR_TYPE (a link
 *  to the wrong class, an embedded object where a link to an existing
 *  object is expected), COFFER_ERR_NOT_FOUND (a link to an object that does
 *  not exist), COFFER_ERR_MISUSE (an object of another transaction or
 *  database), COFFER_ERR_LIMIT (nesting deeper than COFFER_MAX_NESTING),
 *  COFFER_ERR_INVALID_ARGUMENT (a bad map key). Every message names the
 *  class and property. Values are checked before anything is written; a
 *  primary-key conflict found only while nested objects are being written
 *  (two nested descriptions with one key under COFFER_UPDATE_ERROR) fails
 *  the transaction, which can then only be aborted. */
COFFER_API coffer_status coffer_object_create(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t count, int update_policy, coffer_object **out);

/** Finds the object with key `key` of class `cls`. COFFER_ERR_NOT_FOUND if
 *  there is none. `*out` is owned by the transaction. */
COFFER_API coffer_status coffer_object_get(coffer_txn *txn, coffer_class_id cls, coffer_object_key key, coffer_object **out);

/** Finds the object of class `cls` whose primary key equals `*pk` (through
 *  the primary-key index). COFFER_ERR_NOT_FOUND if there is none or the class
 *  has no primary key (the message says which); COFFER_ERR_TYPE if `pk` is
 *  not of the key's type. `*out` is owned by the transaction. */
COFFER_API coffer_status coffer_object_find(coffer_txn *txn, coffer_class_id cls, const coffer_value *pk, coffer_object **out);

/** Gives an object handle back to its transaction before the transaction
 *  ends. Values borrowed from it become invalid. NULL is a no-op. Handles
 *  owned by an iterator must not be released. */
COFFER_API void coffer_object_release(coffer_object *obj);

/** The object's key. */
COFFER_API coffer_object_key coffer_object_key_of(const coffer_object *obj);

/** The object's class. */
COFFER_API coffer_class_id coffer_object_class(const coffer_object *obj);

/** Lifetime of borrowed values.
 *  A string or binary value read from an object points into the database
 *  (or, for an encrypted file, into a buffer of the object handle). It stays
 *  valid until the first of: the end of the transaction, the next write in
 *  the transaction, the release of the object handle, or the next step of
 *  the iterator that owns the handle. Copy it to keep it longer.
 *
 *  coffer_object_get_value() reads property `prop` into `*out`. A link
 *  reads as COFFER_TYPE_LINK or null; a list, set or map property (or a
 *  mixed property holding a nested collection) as COFFER_TYPE_LIST,
 *  COFFER_TYPE_SET or COFFER_TYPE_MAP with its element count in
 *  `u.list.count` / `u.map.count` (open it with coffer_object_get_list()
 *  and its siblings); a linking-objects property as COFFER_TYPE_LIST with
 *  the backlink count. A link in a mixed value to a class this handle does
 *  not see has class_id UINT32_MAX.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (bad property id); COFFER_ERR_MISUSE
 *  (transaction ended); COFFER_ERR_NOT_FOUND (the object was deleted);
 *  COFFER_ERR_CORRUPTED or COFFER_ERR_INTEGRITY (the stored record is
 *  damaged; nothing is returned). */
COFFER_API coffer_status coffer_object_get_value(coffer_object *obj, coffer_property_id prop, coffer_value *out);

/** Reads `count` properties of the object in one call: property `props[i]`
 *  into `out[i]`, each exactly as coffer_object_get_value() reads it, with
 *  the same lifetime for borrowed strings and binaries. For bindings whose
 *  cost is per call (ctypes): a whole object costs one crossing instead of
 *  one per property. A property id may appear more than once. All or
 *  nothing: every id is checked before anything is read, and on any error
 *  every `out[i]` is null. `count` 0 reads nothing (props and out may then
 *  be NULL).
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL or released handle, NULL props
 *  or out with count > 0, a bad property id, naming its position and the
 *  class); COFFER_ERR_MISUSE (transaction ended); COFFER_ERR_NOT_FOUND (the
 *  object was deleted); COFFER_ERR_CORRUPTED or COFFER_ERR_INTEGRITY (the
 *  stored record is damaged). */
COFFER_API coffer_status coffer_object_get_values(coffer_object *obj, const coffer_property_id *props, size_t count,
                                                  coffer_value *out);

/** Sets property `prop` of the object, keeping indexes in step.
 *  Errors: as coffer_object_create(); COFFER_ERR_IMMUTABLE for the primary
 *  key (naming class and property); COFFER_ERR_NOT_FOUND if the object was
 *  deleted. On error the object is unchanged. */
COFFER_API coffer_status coffer_object_set_value(coffer_object *obj, coffer_property_id prop, const coffer_value *value);

/** Sets several properties in one record write. All or nothing: on error
 *  the object is unchanged. Setting the primary key to its current value is
 *  allowed; to another value gives COFFER_ERR_IMMUTABLE. */
COFFER_API coffer_status coffer_object_set_fields(coffer_object *obj, const coffer_field *fields, size_t count);

/** Deletes the object and its index entries. Links to it become null, it
 *  is removed from every list and set that holds it, map values that point
 *  to it become null, and its embedded objects (and theirs) are deleted
 *  with it. The handle stays usable only for coffer_object_is_valid() and
 *  coffer_object_release().
 *  Errors: COFFER_ERR_NOT_IN_WRITE, COFFER_ERR_READ_ONLY, COFFER_ERR_MISUSE,
 *  COFFER_ERR_NOT_FOUND (already deleted). */
COFFER_API coffer_status coffer_object_delete(coffer_object *obj);

/** 1 if the object still exists in the handle's transaction, else 0. */
COFFER_API int coffer_object_is_valid(coffer_object *obj);

/* ------------------------------------------------------------------------ */
/* Classes: count, iterate, index lookup, clear                              */
/* ------------------------------------------------------------------------ */

/** Number of objects of class `cls` in `*out`, in constant time. */
COFFER_API coffer_status coffer_class_count(coffer_txn *txn, coffer_class_id cls, uint64_t *out);

/** Deletes every object of class `cls` and its index entries. */
COFFER_API coffer_status coffer_class_clear(coffer_txn *txn, coffer_class_id cls);

/** An iterator over objects. It belongs to its transaction (freed by
 *  coffer_txn_free()) and may be freed earlier with coffer_iter_free(). */
typedef struct coffer_iter coffer_iter;

/** Iterates every object of class `cls` in key order (creation order). */
COFFER_API coffer_status coffer_class_iterate(coffer_txn *txn, coffer_class_id cls, coffer_iter **out);

/** Iterates the objects of `cls` whose indexed (or primary-key) property
 *  `prop` equals `*value`, in key order. COFFER_ERR_INVALID_ARGUMENT if
 *  `prop` has no index (the message names it); COFFER_ERR_TYPE if the value
 *  does not fit the property. */
COFFER_API coffer_status coffer_index_find(coffer_txn *txn, coffer_class_id cls, coffer_property_id prop, const coffer_value *value, coffer_iter **out);

/** Moves to the next object: COFFER_OK with `*obj` set (owned by the
 *  iterator, valid until the next call or coffer_iter_free()), COFFER_DONE
 *  after the last, or an error. Objects created or deleted in the same write
 *  transaction during iteration may or may not be seen; none is seen twice. */
COFFER_API coffer_status coffer_iter_next(coffer_iter *iter, coffer_object **obj);

/** Frees an iterator before its transaction ends. NULL is a no-op. */
COFFER_API void coffer_iter_free(coffer_iter *iter);

/* ------------------------------------------------------------------------ */
/* Backlinks                                                                 */
/* ------------------------------------------------------------------------ */

/** Iterates the objects that link to `obj` through property `prop` of
 *  their class, where `prop` is a COFFER_TYPE_LINKING_OBJECTS property of
 *  obj's class. An origin object that links to `obj` n times (a list that
 *  holds it twice) is returned n times, in order of origin key.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (not a linking-objects property,
 *  naming it); COFFER_ERR_NOT_FOUND (obj was deleted). */
COFFER_API coffer_status coffer_object_backlinks(coffer_object *obj, coffer_property_id prop, coffer_iter **out);

/** The number of links to `obj` through linking-objects property `prop`. */
COFFER_API coffer_status coffer_object_backlink_count(coffer_object *obj, coffer_property_id prop, uint64_t *out);

/** As coffer_object_backlinks(), for any link-holding property
 *  `origin_prop` of class `origin_cls` (a link, a list, set or map of links,
 *  or a mixed property, whose nested links count too), declared or not as
 *  linking objects. Errors: COFFER_ERR_INVALID_ARGUMENT if the property
 *  cannot hold links. */
COFFER_API coffer_status coffer_object_backlinks_from(coffer_object *obj, coffer_class_id origin_cls, coffer_property_id origin_prop,
                                                      coffer_iter **out);

/** The number of links to `obj` through `origin_cls`.`origin_prop`. */
COFFER_API coffer_status coffer_object_backlink_count_from(coffer_object *obj, coffer_class_id origin_cls,
                                                           coffer_property_id origin_prop, uint64_t *out);

/** The number of links to `obj` from every property of every class,
 *  including classes this handle does not see. */
COFFER_API coffer_status coffer_object_backlink_count_all(coffer_object *obj, uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Lists, sets and maps                                                      */
/* ------------------------------------------------------------------------ */

/** Handles on one collection inside one transaction: a list, set or map
 *  property of an object, or a list or map nested in a mixed value. Like
 *  object handles they belong to the transaction (freed by
 *  coffer_txn_free(), unusable once it ends) and can be given back earlier
 *  with the matching _release function. A handle on a property (a list,
 *  set or map property, or the collection a mixed property holds) follows
 *  the property: once the property is assigned a new collection the handle
 *  reads that one. A handle on a collection nested inside another one
 *  belongs to that collection alone. A handle whose object was deleted,
 *  whose property no longer holds a collection of its kind, or whose nested
 *  collection was replaced or removed gives COFFER_ERR_NOT_FOUND.
 *
 *  Element values follow the rules of coffer_object_create(): the
 *  property's type (or any mixed value), links as COFFER_TYPE_LINK or
 *  COFFER_TYPE_OBJECT, embedded objects and new linked objects as
 *  COFFER_TYPE_FIELDS. Writes need a write transaction
 *  (COFFER_ERR_NOT_IN_WRITE) and give COFFER_ERR_TYPE, naming the class and
 *  property, for a value of the wrong type or class. Values read are
 *  borrowed as in coffer_object_get_value(), until the next call on the
 *  same handle or the next write in the transaction. Indexes out of range
 *  give COFFER_ERR_INVALID_ARGUMENT naming the index and the size.
 *
 *  Collections stay fast when they are long: a list is stored in chunks,
 *  so reading, appending, inserting and removing one element touch one
 *  chunk and a small directory. */
typedef struct coffer_list coffer_list;
typedef struct coffer_set coffer_set;
typedef struct coffer_map coffer_map;

/** Opens list property `prop` of `obj`, or the list nested in mixed
 *  property `prop`. COFFER_ERR_TYPE if the property is not a list (or the
 *  mixed value is not a list), naming it. `*out` is owned by the
 *  transaction. */
COFFER_API coffer_status coffer_object_get_list(coffer_object *obj, coffer_property_id prop, coffer_list **out);
/** Opens set property `prop` of `obj`. */
COFFER_API coffer_status coffer_object_get_set(coffer_object *obj, coffer_property_id prop, coffer_set **out);
/** Opens map property `prop` of `obj`, or the map nested in mixed `prop`. */
COFFER_API coffer_status coffer_object_get_map(coffer_object *obj, coffer_property_id prop, coffer_map **out);

/** Number of elements. */
COFFER_API coffer_status coffer_list_count(coffer_list *list, uint64_t *out);
/** Reads element `index`. A nested collection reads as COFFER_TYPE_LIST or
 *  COFFER_TYPE_MAP with its count. */
COFFER_API coffer_status coffer_list_get(coffer_list *list, uint64_t index, coffer_value *out);
/** Opens the list or map nested at `index` of a list of mixed values
 *  (COFFER_ERR_TYPE if the element is not one). */
COFFER_API coffer_status coffer_list_get_list(coffer_list *list, uint64_t index, coffer_list **out);
COFFER_API coffer_status coffer_list_get_map(coffer_list *list, uint64_t index, coffer_map **out);
/** Replaces element `index`. A replaced embedded object is deleted; a
 *  replaced nested collection is deleted with everything in it. */
COFFER_API coffer_status coffer_list_set(coffer_list *list, uint64_t index, const coffer_value *value);
/** Inserts before `index` (0..count; count appends). */
COFFER_API coffer_status coffer_list_insert(coffer_list *list, uint64_t index, const coffer_value *value);
/** Appends at the end. */
COFFER_API coffer_status coffer_list_append(coffer_list *list, const coffer_value *value);
/** Removes element `index` (an embedded object or nested collection is
 *  deleted). */
COFFER_API coffer_status coffer_list_remove(coffer_list *list, uint64_t index);
/** Moves the element at `from` so that it ends up at index `to`. */
COFFER_API coffer_status coffer_list_move(coffer_list *list, uint64_t from, uint64_t to);
/** Swaps the elements at `a` and `b`. */
COFFER_API coffer_status coffer_list_swap(coffer_list *list, uint64_t a, uint64_t b);
/** Removes every element. */
COFFER_API coffer_status coffer_list_clear(coffer_list *list);
/** 1 if the list can still be used in its transaction. */
COFFER_API int coffer_list_is_valid(coffer_list *list);
/** Gives the handle back to its transaction. NULL is a no-op. */
COFFER_API void coffer_list_release(coffer_list *list);

/** Number of elements. */
COFFER_API coffer_status coffer_set_count(coffer_set *set, uint64_t *out);
/** Reads the element at position `index` of the set's stable, unspecified
 *  order. Reading positions in sequence costs one step each. */
COFFER_API coffer_status coffer_set_get(coffer_set *set, uint64_t index, coffer_value *out);
/** Adds `value`; `*inserted` (may be NULL) is 1 if it was not there yet.
 *  Equal values follow coffer_value_equal(). */
COFFER_API coffer_status coffer_set_insert(coffer_set *set, const coffer_value *value, int *inserted);
/** Removes `value`; `*removed` (may be NULL) is 1 if it was there. */
COFFER_API coffer_status coffer_set_remove(coffer_set *set, const coffer_value *value, int *removed);
/** `*found` is 1 if the set holds `value`. A value of another type is
 *  COFFER_ERR_TYPE. */
COFFER_API coffer_status coffer_set_contains(coffer_set *set, const coffer_value *value, int *found);
/** Removes every element. */
COFFER_API coffer_status coffer_set_clear(coffer_set *set);
/** Adds every element of `other` (a set of the same element type in the
 *  same transaction; it may be `set` itself). */
COFFER_API coffer_status coffer_set_union(coffer_set *set, coffer_set *other);
/** Keeps only the elements that `other` holds too. */
COFFER_API coffer_status coffer_set_intersect(coffer_set *set, coffer_set *other);
/** Removes every element that `other` holds. */
COFFER_API coffer_status coffer_set_subtract(coffer_set *set, coffer_set *other);
COFFER_API int coffer_set_is_valid(coffer_set *set);
COFFER_API void coffer_set_release(coffer_set *set);

/** Number of entries. */
COFFER_API coffer_status coffer_map_count(coffer_map *map, uint64_t *out);
/** Reads the value under `key` (`size` bytes, SIZE_MAX for strlen);
 *  COFFER_ERR_NOT_FOUND, naming the key, if there is none. */
COFFER_API coffer_status coffer_map_get(coffer_map *map, const char *key, size_t size, coffer_value *out);
/** `*found` is 1 if the map has `key`. */
COFFER_API coffer_status coffer_map_contains(coffer_map *map, const char *key, size_t size, int *found);
/** Sets `key` to `value`, adding the key or replacing its value. Keys are
 *  non-empty UTF-8 without NUL, may not contain '.' and may not start with
 *  '$' (COFFER_ERR_INVALID_ARGUMENT naming the key). */
COFFER_API coffer_status coffer_map_set(coffer_map *map, const char *key, size_t size, const coffer_value *value);
/** Removes `key`; `*removed` (may be NULL) is 1 if it was there. */
COFFER_API coffer_status coffer_map_remove(coffer_map *map, const char *key, size_t size, int *removed);
/** Reads the entry at position `index`: its key (borrowed like a string
 *  value; may be NULL) and value (may be NULL). A plain file keeps entries
 *  in the byte order of their UTF-8 keys; an encrypted file stores keys as
 *  keyed hashes, so its order is unspecified but stable. Reading positions
 *  in sequence costs one step each. */
COFFER_API coffer_status coffer_map_get_entry(coffer_map *map, uint64_t index, coffer_bytes *key, coffer_value *value);
/** Opens the list or map nested under `key` in a map of mixed values. */
COFFER_API coffer_status coffer_map_get_list(coffer_map *map, const char *key, size_t size, coffer_list **out);
COFFER_API coffer_status coffer_map_get_map(coffer_map *map, const char *key, size_t size, coffer_map **out);
/** Removes every entry. */
COFFER_API coffer_status coffer_map_clear(coffer_map *map);
COFFER_API int coffer_map_is_valid(coffer_map *map);
COFFER_API void coffer_map_release(coffer_map *map);

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

/** A query is a string in the Realm Query Language (docs/QUERY.md), e.g.
 *  "age >= $0 AND owner.name BEGINSWITH[c] 'j' SORT(age DESC) LIMIT(10)",
 *  compiled once for one class of an open database: parsed, its key paths
 *  resolved against the schema, its types checked and its arguments bound.
 *  A compiled query is immutable and may be run by several threads at once,
 *  in any transaction of its database.
 *
 *  Running it in a transaction gives a coffer_results: the matching
 *  objects, in the order of the query's SORT (else in the order objects were
 *  created), computed once on that transaction's snapshot. Results stay as
 *  computed even if the transaction writes afterwards (objects deleted since
 *  are skipped or reported as not found); coffer_results_rerun() recomputes
 *  them in another transaction, e.g. a newer snapshot.
 *
 *  The planner answers `==` and `IN` on a primary key or indexed property
 *  from its index (and, in files that are not encrypted, ranges on indexed
 *  ints, dates and bools and BEGINSWITH on indexed strings); in an AND it
 *  uses the index that yields the fewest objects, and checks the rest on
 *  those objects only. Other queries read every object of the class. */
typedef struct coffer_query coffer_query;
typedef struct coffer_results coffer_results;

/** Compiles query `text` (`len` bytes, SIZE_MAX for strlen) for class `cls`
 *  with `arg_count` arguments $0, $1, ... in `args` (copied; a
 *  COFFER_TYPE_LIST argument stands for its items, for IN; links are given
 *  as COFFER_TYPE_LINK or COFFER_TYPE_OBJECT). The caller frees `*out` with
 *  coffer_query_free().
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL pointers, bad class id);
 *  COFFER_ERR_MISUSE (db closed); COFFER_ERR_QUERY, whose message gives, for
 *  a syntax error, the 1-based character offset and what was expected
 *  ("query: at offset 9: expected a value, found end of query"), and
 *  otherwise names the culprit: an unknown class or property, a comparison
 *  of incompatible types ("cannot compare 'intCol' (int) with a string"),
 *  an operator on a type it does not apply to, a missing or mistyped
 *  argument; COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_query_compile(coffer_db *db, coffer_class_id cls, const char *text, size_t len,
                                              const coffer_value *args, size_t arg_count, coffer_query **out);

/** Compiles `query` again with other arguments, without parsing its text
 *  again: the prepared-statement way to run one query with many values.
 *  `args` and `arg_count` are as for coffer_query_compile() and checked the
 *  same way; `query` is unchanged and may be freed before or after `*out`.
 *  Its database must not have been closed: a query does not keep its
 *  database open. The caller frees `*out` with coffer_query_free().
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL pointers, not a query);
 *  COFFER_ERR_MISUSE (db closed); COFFER_ERR_QUERY (a missing or mistyped
 *  argument, named); COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_query_rebind(const coffer_query *query, const coffer_value *args, size_t arg_count,
                                             coffer_query **out);

/** Frees a query. Results computed from it stay usable. NULL is a no-op. */
COFFER_API void coffer_query_free(coffer_query *query);

/** The query in canonical form: compiling this text gives the same query.
 *  Owned by the query; NULL for an invalid handle. */
COFFER_API const char *coffer_query_description(const coffer_query *query);

/** The class the query was compiled for; UINT32_MAX for an invalid handle. */
COFFER_API coffer_class_id coffer_query_class(const coffer_query *query);

/** Writes how `query` would find its matches in `txn` into buf[0 .. size),
 *  as a NUL-terminated sentence: "index of 'Class.property' (equality)",
 *  "(range)" or "(prefix)" when an index answers a conjunct (", then a
 *  filter" when the other conjuncts are checked on the objects it yields),
 *  "scan of 'Class'" when every object is read, "all objects of 'Class'"
 *  for TRUEPREDICATE. SORT, DISTINCT and LIMIT are not described. Encrypted
 *  files of format 6 answer BEGINSWITH and ranges from their sealed index
 *  trees, as plain files do (docs/ENCRYPTION.md).
 *  txn    an active transaction of the query's database; the choice may
 *         count index entries in it
 *  buf    receives the text; owned by the caller (64 bytes plus the class
 *         and property names are enough)
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL or invalid handles, buf NULL,
 *  size 0 or too small: buf then holds ""), COFFER_ERR_MISUSE (the
 *  transaction ended, or belongs to another database), those of reading the
 *  index. */
COFFER_API coffer_status coffer_query_explain(coffer_txn *txn, const coffer_query *query, char *buf, size_t size);

/** Bounds how long each run of `query` may take: a run (coffer_query_run(),
 *  coffer_results_filter() with it, coffer_results_rerun() of results it
 *  made, the deferred count or keys of such results, and the runs an
 *  observer of it makes) that is still going `milliseconds` after it began
 *  stops with COFFER_ERR_INTERRUPTED, whose message names the timeout.
 *  0 (the default) means no limit. The run checks the time as it reads
 *  objects and visits SUBQUERY elements (every 64 checks), so it stops
 *  shortly after the deadline, not exactly on it. The setting may be
 *  changed while other threads run the query; runs that begin afterwards
 *  use the new value. coffer_query_rebind() copies it.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (not a query). */
COFFER_API coffer_status coffer_query_set_timeout(coffer_query *query, uint64_t milliseconds);

/** The timeout set with coffer_query_set_timeout(), in milliseconds; 0 for
 *  none or for an invalid handle. */
COFFER_API uint64_t coffer_query_timeout(const coffer_query *query);

/** Stops every query running on `db` when it is called, as sqlite3_interrupt()
 *  does: each returns COFFER_ERR_INTERRUPTED ("query: interrupted by
 *  coffer_interrupt()") at its next check (once per object it reads, once
 *  per SUBQUERY element it visits). Callable from any thread, including
 *  while another thread is inside a call on `db`; the handle must not be
 *  closed meanwhile. Queries that begin after the call run normally, so an
 *  interrupt with no query running has no effect. What it stops are runs of
 *  queries: coffer_query_run(), coffer_results_filter(),
 *  coffer_results_rerun(), deferred counts and keys of results, and the
 *  runs observers make (whose observers then report the error). Nothing is
 *  written by a query, so nothing is undone; the transaction stays usable.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL or not a database). */
COFFER_API coffer_status coffer_interrupt(coffer_db *db);

/** Runs `query` in `txn` (read or write). The caller frees `*out` with
 *  coffer_results_free(), before or after the transaction ends; after it
 *  ends, every other call on the results gives COFFER_ERR_MISUSE.
 *  The results are the state of the transaction at this call. In a read
 *  transaction (whose snapshot never moves), a query an index answers alone
 *  (one `==`, range or BEGINSWITH on an indexed property, without SORT,
 *  DISTINCT or LIMIT) is only prepared here: coffer_results_count() reads
 *  the count from the index and the first call that needs the objects'
 *  keys computes them, so an unreadable index is then reported by that call.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT; COFFER_ERR_MISUSE (transaction
 *  ended, or of another database than the query); COFFER_ERR_CORRUPTED or
 *  COFFER_ERR_INTEGRITY (a stored object is damaged); COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_query_run(coffer_txn *txn, const coffer_query *query, coffer_results **out);

/** Stores in `*out` the number of objects `query` matches in `txn` (read or
 *  write): coffer_query_run() and coffer_results_count() in one call, with
 *  no results for the caller to free. An index answers the count alone
 *  where coffer_query_run() says it can (no object is read); otherwise the
 *  query runs as it would for coffer_query_run(). With SORT, DISTINCT and
 *  LIMIT, the count is that of the results they give. `*out` is 0 on error.
 *  Errors: those of coffer_query_run() (COFFER_ERR_INVALID_ARGUMENT for a
 *  NULL or invalid txn or query, COFFER_ERR_MISUSE for an ended
 *  transaction or another database's query, COFFER_ERR_INTERRUPTED for a
 *  timeout or coffer_interrupt()); COFFER_ERR_INVALID_ARGUMENT (NULL out). */
COFFER_API coffer_status coffer_query_count(coffer_txn *txn, const coffer_query *query, uint64_t *out);

/** Stores in `*out` the number of objects `query` matches in `txn` when it
 *  is bound to `args` instead of its own arguments: coffer_query_rebind(),
 *  coffer_query_count() and coffer_query_free() in one call, for a binding
 *  that runs one prepared query with many values and pays per call.
 *
 *  txn        a read or write transaction of the query's database.
 *  query      a compiled query; unchanged (its own arguments stay bound),
 *             and its timeout (coffer_query_set_timeout()) bounds the run.
 *  args, arg_count
 *             the values of $0, $1, ...: as for coffer_query_compile(),
 *             checked the same way, and copied; `args` may be NULL when
 *             arg_count is 0.
 *  out        not NULL: receives the count, as coffer_query_count() gives
 *             it (from the index alone where it can), and 0 on any error.
 *
 *  Nothing is left for the caller to free. The query keeps one rebound
 *  copy of itself, freed with it: a later call whose arguments have the
 *  types the copy was bound with (each a plain value, not a list, null,
 *  object or link, nor the key of obj()) writes them into that copy in
 *  place, with no parse, bind, plan or allocation; any other call rebinds
 *  afresh, as coffer_query_rebind() does, and keeps that binding for the
 *  next. Strings and binaries are borrowed from `args` for the call only.
 *  Safe from several threads at once on one query: a call that finds the
 *  copy in use by another rebinds afresh.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL txn or out, `query` not a
 *  query, args NULL with arg_count > 0); COFFER_ERR_QUERY (a missing or
 *  mistyped argument, named, as coffer_query_rebind() names it);
 *  COFFER_ERR_MISUSE (the query's database closed, the transaction ended,
 *  or a transaction of another database); COFFER_ERR_INTERRUPTED (the
 *  query's timeout or coffer_interrupt()); COFFER_ERR_NO_MEMORY; those of
 *  coffer_query_count(). */
COFFER_API coffer_status coffer_query_count_rebound(coffer_txn *txn, const coffer_query *query,
                                                    const coffer_value *args, size_t arg_count, uint64_t *out);

/** Every object of class `cls`, in the order they were created, as a result
 *  that can be filtered, counted and aggregated like any other. */
COFFER_API coffer_status coffer_results_all(coffer_txn *txn, coffer_class_id cls, coffer_results **out);

/** The objects of class `cls` with the `count` keys in `keys` (copied), in
 *  that order, as results: filtering them runs queries over those objects
 *  only, and coffer_results_rerun() filters the same keys again (keys of
 *  objects deleted since are dropped). For collections and backlinks a
 *  caller has read. */
COFFER_API coffer_status coffer_results_from_keys(coffer_txn *txn, coffer_class_id cls, const coffer_object_key *keys,
                                                  size_t count, coffer_results **out);

/** Applies `query` (of the same class: COFFER_ERR_INVALID_ARGUMENT
 *  otherwise) to the objects of `results`, in their order: its predicate
 *  keeps some, then its SORT, DISTINCT and LIMIT apply. `*out` is new
 *  results in the same transaction; `results` is unchanged. */
COFFER_API coffer_status coffer_results_filter(coffer_results *results, const coffer_query *query,
                                               coffer_results **out);

/** Recomputes `results` (all of its queries, in order) in `txn`, which may
 *  be a newer transaction of the same database; `results` itself may belong
 *  to an ended one. `*out` is new results in `txn`. */
COFFER_API coffer_status coffer_results_rerun(const coffer_results *results, coffer_txn *txn, coffer_results **out);

/** The number of objects. */
COFFER_API coffer_status coffer_results_count(coffer_results *results, uint64_t *out);

/** The key of the object at position `index` (COFFER_ERR_INVALID_ARGUMENT
 *  naming the index and the count when out of range). */
COFFER_API coffer_status coffer_results_key(coffer_results *results, uint64_t index, coffer_object_key *out);

/** Copies the keys of positions start .. start+count-1 to `out` (one call
 *  instead of one per object, for bindings). COFFER_ERR_INVALID_ARGUMENT if
 *  the range does not fit. */
COFFER_API coffer_status coffer_results_copy_keys(coffer_results *results, uint64_t start, size_t count,
                                                  coffer_object_key *out);

/** Opens the object at position `index`, as coffer_object_get() does (the
 *  caller releases it). COFFER_ERR_NOT_FOUND if it was deleted after the
 *  results were computed. */
COFFER_API coffer_status coffer_results_get(coffer_results *results, uint64_t index, coffer_object **out);

/** Aggregates for coffer_results_aggregate(). */
enum {
    COFFER_AGGREGATE_MIN = 0,
    COFFER_AGGREGATE_MAX = 1,
    COFFER_AGGREGATE_SUM = 2,
    COFFER_AGGREGATE_AVG = 3
};

/** The minimum, maximum, sum or average of property `prop` over the
 *  objects, ignoring nulls (and, for a mixed property, values that are not
 *  numbers). Minimum and maximum apply to numbers and dates and give a value
 *  of the property's type; the sum of ints is an int, of floats and doubles
 *  a double, of decimals a decimal (added as doubles); the average is a
 *  double (a decimal for decimals). With no values: the sum is 0 and the
 *  others are null. Errors: COFFER_ERR_INVALID_ARGUMENT (bad id or
 *  aggregate); COFFER_ERR_TYPE naming the property if it does not hold
 *  numbers (or dates, for minimum and maximum). */
COFFER_API coffer_status coffer_results_aggregate(coffer_results *results, coffer_property_id prop, int aggregate,
                                                  coffer_value *out);

/** Deletes every object of the results, with what deleting each implies
 *  (coffer_object_delete()). Needs a write transaction
 *  (COFFER_ERR_NOT_IN_WRITE). The results keep their keys; their objects
 *  read as deleted. */
COFFER_API coffer_status coffer_results_delete_all(coffer_results *results);

/** Frees results. NULL is a no-op. */
COFFER_API void coffer_results_free(coffer_results *results);

/* ------------------------------------------------------------------------ */
/* Batch reads and writes                                                    */
/* ------------------------------------------------------------------------ */

/* For bindings whose cost is per call (ctypes, Swift's bridging): many
 * values per crossing. Reads fill one caller-owned buffer in the packed
 * layout below; writes take many objects or one value for many objects.
 *
 * The packed layout is a public format of this header, independent of the
 * file format: a change of how objects are stored never changes it. All
 * integers are in the byte order of the machine, and the buffer should be
 * 8-byte aligned (malloc'ed memory is):
 *
 *   offset 0    coffer_pack_header (32 bytes)
 *   offset 32   row_count rows of header.row_size bytes each, in order:
 *                 coffer_pack_row (16 bytes: the object key, row flags)
 *                 value_count coffer_pack_value (24 bytes each), the i-th
 *                 value being property props[i] of the call
 *   then        the bytes of copied strings and binaries, each followed by
 *               one NUL byte, up to header.size
 *
 * A value (coffer_pack_value) is a type tag, a 4-byte `extra` and a 16-byte
 * payload, read as coffer_object_get_value() reads the property:
 *
 *   COFFER_TYPE_NULL        nothing (null, or a link to nothing)
 *   COFFER_TYPE_BOOL        u.boolean: 0 or 1
 *   COFFER_TYPE_INT         u.integer
 *   COFFER_TYPE_FLOAT       u.float_value (the first 4 bytes)
 *   COFFER_TYPE_DOUBLE      u.double_value
 *   COFFER_TYPE_STRING,
 *   COFFER_TYPE_BINARY      u.bytes: `size` bytes at `ref`, see below
 *   COFFER_TYPE_DATE        u.integer: seconds; extra: nanoseconds (int32_t)
 *   COFFER_TYPE_OBJECT_ID   u.raw: 12 bytes (then 4 zero bytes)
 *   COFFER_TYPE_UUID        u.raw: 16 bytes
 *   COFFER_TYPE_DECIMAL128  u.words: low 64 bits, high 64 bits (BID)
 *   COFFER_TYPE_LINK        u.integer: the target's key; extra: its class id
 *                           (UINT32_MAX for a class this handle does not see)
 *   COFFER_TYPE_LIST, _SET,
 *   COFFER_TYPE_MAP         u.integer: the element count (a linking-objects
 *                           property: the backlink count, as a list); open
 *                           the collection with coffer_object_get_list()...
 *
 * Unused payload bytes are zero. Strings and binaries are either copied or
 * borrowed, as header.flags says:
 *   - copied (COFFER_PACK_COPY): `ref` is the offset of the bytes from the
 *     start of the buffer; a NUL byte follows them. They stay valid as long
 *     as the buffer does.
 *   - borrowed (COFFER_PACK_BORROW in header.flags): `ref` is the address
 *     of the bytes in the database's memory map (strings are NUL-terminated
 *     there too), valid until the read transaction ends, whatever else it
 *     reads, and unaffected by commits of other transactions, which the
 *     read transaction does not see. Borrowing is done only where that
 *     guarantee holds: a read transaction on a file that is not encrypted.
 *     Asked for elsewhere (a write transaction, whose records move as it
 *     writes; an encrypted file, whose values are opened into memory of the
 *     call), values are copied and header.flags says so: a caller reads
 *     header.flags, never the flags it passed.
 *
 * A row whose object no longer exists (deleted in the same write
 * transaction after the results were computed) has COFFER_PACK_ROW_DELETED
 * in its flags, its key, and null values. */

/** The value of coffer_pack_header.magic ("CFPK" in little-endian bytes). */
#define COFFER_PACK_MAGIC 0x4B504643u
/** The version of the packed layout described above. */
#define COFFER_PACK_VERSION 1u

/** Flags of the pack calls and of coffer_pack_header.flags. */
enum {
    /** Strings and binaries are copied into the buffer. */
    COFFER_PACK_COPY = 0,
    /** Strings and binaries are addresses into the database (see above). */
    COFFER_PACK_BORROW = 1
};

/** Flags of coffer_pack_row.flags. */
enum {
    /** The object of this row was deleted; its values are null. */
    COFFER_PACK_ROW_DELETED = 1
};

typedef struct coffer_pack_header {
    uint32_t magic;       /**< COFFER_PACK_MAGIC */
    uint16_t version;     /**< COFFER_PACK_VERSION */
    uint16_t flags;       /**< COFFER_PACK_BORROW if strings are borrowed, else 0 */
    uint32_t row_count;   /**< rows (objects) in the buffer */
    uint32_t value_count; /**< values per row */
    uint64_t row_size;    /**< bytes per row: 16 + 24 * value_count */
    uint64_t size;        /**< bytes used, from the header to the last copied byte */
} coffer_pack_header;

typedef struct coffer_pack_row {
    uint64_t key;   /**< the object's key */
    uint32_t flags; /**< COFFER_PACK_ROW_DELETED or 0 */
    uint32_t reserved;
} coffer_pack_row;

typedef struct coffer_pack_value {
    uint32_t type;  /**< a coffer_type */
    uint32_t extra; /**< date: nanoseconds (as int32_t); link: class id; else 0 */
    union {
        uint64_t boolean;
        int64_t integer;
        float float_value;
        double double_value;
        struct {
            uint64_t ref;  /**< copied: offset in the buffer; borrowed: address */
            uint64_t size; /**< in bytes, without the NUL that follows */
        } bytes;
        uint8_t raw[16];
        uint64_t words[2];
    } u;
} coffer_pack_value;

/** Reads properties `props[0..count-1]` of `obj` into `buf` (`capacity`
 *  bytes) in the packed layout above, as one row. `flags` is
 *  COFFER_PACK_COPY or COFFER_PACK_BORROW. `*needed` (not NULL) receives
 *  the bytes the packed object takes (header.size), also when the buffer
 *  is too small, and 0 on any other error. Property ids may repeat; count 0
 *  packs the key alone (props may then be NULL).
 *  Errors: COFFER_ERR_BUFFER_TOO_SMALL (the message names both sizes; the
 *  buffer's contents are then unspecified, and nothing is written at or
 *  past buf + capacity); COFFER_ERR_INVALID_ARGUMENT (NULL or released
 *  handle, NULL buf with capacity > 0, NULL props with count > 0, NULL
 *  needed, an unknown flag, a bad property id, naming its position);
 *  COFFER_ERR_MISUSE (transaction ended); COFFER_ERR_NOT_FOUND (the object
 *  was deleted); COFFER_ERR_CORRUPTED or COFFER_ERR_INTEGRITY (the stored
 *  record is damaged). */
COFFER_API coffer_status coffer_object_pack(coffer_object *obj, const coffer_property_id *props, size_t count, int flags,
                                            void *buf, size_t capacity, size_t *needed);

/** Finds the object of class `cls` whose primary key equals `*pk` and reads
 *  properties `props[0..count-1]` of it into `buf` (`capacity` bytes) in
 *  the packed layout above, as one row: coffer_object_find() and
 *  coffer_object_pack() in one call, with no object handle for the caller
 *  to release unless it asks for one.
 *
 *  txn       a read or write transaction; the row is its state (a read
 *            transaction's snapshot, whatever was committed since).
 *  cls       the class, which must have a primary key.
 *  pk        the key to find, of the primary key's type (or
 *            COFFER_TYPE_NULL for an optional one); borrowed for the call.
 *  props, count, flags, buf, capacity
 *            as for coffer_object_pack(); props may be NULL with count 0
 *            (the key alone).
 *  needed    not NULL: receives the bytes the packed object takes, also
 *            when the buffer is too small, and 0 on any other error.
 *  out       NULL, or where the object's handle is stored when the call
 *            returns COFFER_OK (the caller then releases it with
 *            coffer_object_release()); `*out` is NULL on any error.
 *
 *  Strings and binaries borrowed (COFFER_PACK_BORROW) belong to the
 *  transaction, not to a handle, as for coffer_object_pack().
 *  Errors: COFFER_ERR_NOT_FOUND (no object has that primary key, which the
 *  message gives; or the class has no primary key): nothing is written to
 *  `buf`; COFFER_ERR_TYPE (`pk` is not of the primary key's type: the
 *  message names the property, its type and the type given);
 *  COFFER_ERR_BUFFER_TOO_SMALL (the message names both sizes, `*needed`
 *  is the size; nothing is written at or past buf + capacity);
 *  COFFER_ERR_INVALID_ARGUMENT (NULL txn, pk or needed, a bad class id, and
 *  the argument errors of coffer_object_pack()); COFFER_ERR_MISUSE
 *  (transaction ended); COFFER_ERR_CORRUPTED or COFFER_ERR_INTEGRITY (a
 *  damaged record or primary-key index). */
COFFER_API coffer_status coffer_object_pack_by_primary_key(coffer_txn *txn, coffer_class_id cls,
                                                           const coffer_value *pk, const coffer_property_id *props,
                                                           size_t count, int flags, void *buf, size_t capacity,
                                                           size_t *needed, coffer_object **out);

/** What coffer_pack_request_run() reads: the arguments of
 *  coffer_object_pack_by_primary_key() that stay the same from lookup to
 *  lookup of one class, set once by the caller, and the key, written before
 *  each lookup. For a binding whose cost is per argument converted: a
 *  lookup passes the transaction and one pointer.
 *
 *  cls       the class, which must have a primary key.
 *  key       the primary key to find, as `pk` of
 *            coffer_object_pack_by_primary_key(); strings and binaries it
 *            points to are borrowed for the call.
 *  props, count, flags, buf, capacity
 *            as for coffer_object_pack_by_primary_key(); the caller owns
 *            `props` and `buf` and keeps them while the request is used.
 *  needed    written by each run: the bytes the packed object takes (also
 *            when `buf` is too small), 0 on any other error. */
typedef struct coffer_pack_request {
    coffer_class_id cls;
    coffer_value key;
    const coffer_property_id *props;
    size_t count;
    int flags;
    void *buf;
    size_t capacity;
    size_t needed;
} coffer_pack_request;

/** Finds the object of class `request->cls` whose primary key equals
 *  `request->key` and packs its properties `request->props` into
 *  `request->buf`: coffer_object_pack_by_primary_key() with the arguments
 *  of `request`, `&request->needed` as `needed` and no object handle.
 *
 *  txn       a read or write transaction; the row is its state.
 *  request   not NULL; read, and `needed` written. The library keeps no
 *            pointer to it after the call.
 *
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL request, and those of
 *  coffer_object_pack_by_primary_key() for its fields), and every error
 *  of coffer_object_pack_by_primary_key() (COFFER_ERR_NOT_FOUND with
 *  nothing written to `buf`, COFFER_ERR_TYPE, COFFER_ERR_BUFFER_TOO_SMALL
 *  with `needed` set, COFFER_ERR_MISUSE, COFFER_ERR_CORRUPTED,
 *  COFFER_ERR_INTEGRITY), its messages naming this function. */
COFFER_API coffer_status coffer_pack_request_run(coffer_txn *txn, coffer_pack_request *request);

/** Reads the objects at positions start .. start+row_count-1 of `results`
 *  into `buf`, one row each in order, as coffer_object_pack() reads one:
 *  a page of results in one call. Arguments, `*needed` and errors are as
 *  for coffer_object_pack(), and COFFER_ERR_INVALID_ARGUMENT if the range
 *  does not fit in the results (naming it and the count). In a read
 *  transaction every row is the transaction's snapshot, whatever was
 *  committed since; an object deleted in the same write transaction after
 *  the results were computed gives a COFFER_PACK_ROW_DELETED row. The rows
 *  either all fit or the call fails with the size of all of them. */
COFFER_API coffer_status coffer_results_pack(coffer_results *results, uint64_t start, size_t row_count,
                                             const coffer_property_id *props, size_t count, int flags, void *buf,
                                             size_t capacity, size_t *needed);

/** Creates `object_count` objects of class `cls` in write transaction
 *  `txn`, each as coffer_object_create() with `update_policy` creates one:
 *  object i takes the `fields_per_object` fields at
 *  fields[i * fields_per_object]. If `keys` is not NULL, keys[i] receives
 *  the key of object i (created, or updated under the policy). `*done` (not
 *  NULL) receives the number of objects written.
 *  On error the call stops at the object that failed: the objects before it
 *  stay written in the transaction (abort it to undo them), that one is
 *  not written (as coffer_object_create()), `*done` is its position and
 *  the message names it ("object 7 of 100: ..."). Errors: those of
 *  coffer_object_create(); COFFER_ERR_INVALID_ARGUMENT (NULL fields with a
 *  count, NULL done). */
COFFER_API coffer_status coffer_objects_create(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields,
                                               size_t fields_per_object, size_t object_count, int update_policy,
                                               coffer_object_key *keys, size_t *done);

/** Sets fields of `object_count` objects of class `cls`: object keys[i]
 *  gets the `fields_per_object` fields at fields[i * fields_per_object],
 *  as coffer_object_set_fields() sets them. `*done` (not NULL) receives the
 *  number of objects written. On error the call stops as
 *  coffer_objects_create() does, naming the object's position and key.
 *  Errors: those of coffer_object_set_fields(); COFFER_ERR_NOT_FOUND (no
 *  object with a key, named); COFFER_ERR_INVALID_ARGUMENT (NULL keys or
 *  fields with a count, NULL done). */
COFFER_API coffer_status coffer_objects_set_fields(coffer_txn *txn, coffer_class_id cls, const coffer_object_key *keys,
                                                   size_t object_count, const coffer_field *fields,
                                                   size_t fields_per_object, size_t *done);

/** Sets property `prop` to `*value` in every object of `results` (in a
 *  write transaction), as coffer_object_set_value() sets it: an update of
 *  one property over a result set in one call. Objects deleted since the
 *  results were computed are skipped. The property id and the primary key
 *  are checked first, the value with the first object written, so a bad
 *  id, the primary key, a wrong type or a read-only property writes
 *  nothing (with no objects, the value is not checked); a failure after
 *  that (a full map) leaves the objects before it written (abort to undo).
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL value, bad property id);
 *  COFFER_ERR_IMMUTABLE (the primary key, a linking-objects property);
 *  COFFER_ERR_NOT_IN_WRITE, COFFER_ERR_READ_ONLY, COFFER_ERR_MISUSE; those
 *  of coffer_object_set_value(). */
COFFER_API coffer_status coffer_results_set_value(coffer_results *results, coffer_property_id prop,
                                                  const coffer_value *value);

/* ------------------------------------------------------------------------ */
/* Live data: refresh, observers and change sets                             */
/* ------------------------------------------------------------------------ */

/* A database handle sees the file at one version at a time, for its
 * observers: it moves to the newest version when it refreshes. With
 * auto-refresh (the default) that happens by itself soon after any commit of
 * any process (the commit wakes a sleeping notifier: no polling); without
 * it, only coffer_db_refresh() moves the handle.
 *
 * Observers watch the whole database, one object, the results of a query
 * (with its SORT, DISTINCT and LIMIT), a list property (also seen through a
 * query, or sorted), a set property or a map property. Their callbacks
 * run, once per refresh that changed what they watch, on the handle's
 * notifier thread (owned by the library), or inside coffer_db_refresh() on
 * the thread that calls it, or through a scheduler the program supplies
 * (coffer_db_set_scheduler()), or, with refresh on commit
 * (coffer_db_set_refresh_on_commit()), inside a commit made through the
 * handle. The first callback of a collection or
 * object observer reports the initial state (changes NULL). A callback gets
 * a read transaction at the new version, valid only during the call: it may
 * read anything through it, and must not free, commit or keep it. Change
 * sets follow Realm's (and realm-core's): indices of deletions and
 * modifications in the old collection, of insertions (and modifications
 * again) in the new one; lists also report moves, results report a
 * reordering as a deletion plus an insertion. An empty change set is never
 * delivered. docs/LIVE.md describes the semantics and the threads. */

typedef struct coffer_token coffer_token;
typedef struct coffer_collection_changes coffer_collection_changes;
typedef struct coffer_object_changes coffer_object_changes;

/** A function the library asks to run later on the program's own thread or
 *  loop (coffer_db_set_scheduler()). */
typedef void (*coffer_work_fn)(void *arg);
/** Posts `work(arg)` to run soon, exactly once, on the program's loop. */
typedef void (*coffer_post_fn)(void *scheduler_ctx, coffer_work_fn work, void *arg);

/** Called after a refresh moved the handle from `old_version` to
 *  `new_version` (versions as coffer_txn_version()). */
typedef void (*coffer_db_callback)(void *ctx, coffer_txn *txn, uint64_t old_version, uint64_t new_version);
/** Called with the changes of an observed collection; `changes` is NULL for
 *  the first call, which reports the initial state: the state at the newest
 *  version when the observer was registered (`txn` is at that version), a
 *  commit made after registering being told as a change after it. */
typedef void (*coffer_collection_callback)(void *ctx, coffer_txn *txn, const coffer_collection_changes *changes);
/** Called with the changes of an observed object; `changes` is NULL for the
 *  first call, made at the version of registration as for
 *  coffer_collection_callback. */
typedef void (*coffer_object_callback)(void *ctx, coffer_txn *txn, const coffer_object_changes *changes);

/** Moves `db` to the newest version of its file and runs, on the calling
 *  thread, the callbacks of every observer whose data changed (and the
 *  first callbacks still due). Callbacks run before it returns; a callback
 *  may stop tokens (its own too) but must not refresh or close the handle.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT; COFFER_ERR_MISUSE (closed, or called
 *  from inside a callback of the same handle); what reading a change fails
 *  with (COFFER_ERR_CORRUPTED, COFFER_ERR_INTEGRITY, COFFER_ERR_NO_MEMORY). */
COFFER_API coffer_status coffer_db_refresh(coffer_db *db);

/** Turns auto-refresh of `db` on (nonzero, the default) or off. */
COFFER_API coffer_status coffer_db_set_auto_refresh(coffer_db *db, int on);

/** 1 if `db` refreshes by itself, 0 if not or not a database. */
COFFER_API int coffer_db_auto_refresh(const coffer_db *db);

/** Turns refresh on commit of `db` on (nonzero) or off (0, the default).
 *  With it on, a write transaction of `db` that committed refreshes `db` on
 *  the committing thread before coffer_txn_commit() returns: the callbacks
 *  its commit calls for run there at once, instead of on the notifier
 *  thread once it woke. This applies while auto-refresh is on and no
 *  scheduler is set, and only to commits made through `db` (those of other
 *  handles and processes still wake the notifier). A refresh of `db`
 *  running on another thread at the time is waited for first; a commit
 *  made from one of `db`'s callbacks is left to the notifier. The commit
 *  then takes the time of computing the change sets, and callbacks run
 *  inside coffer_txn_commit(): they must not wait for anything the
 *  committing thread holds, nor for a commit through `db` on another
 *  thread. Ordering and contents of the callbacks are the same either way. A failure to compute changes does not
 *  fail the commit (the next refresh meets it).
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (not a database); COFFER_ERR_MISUSE
 *  (closed); COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_db_set_refresh_on_commit(coffer_db *db, int on);

/** 1 if commits through `db` refresh it on the committing thread
 *  (coffer_db_set_refresh_on_commit()), 0 if not or not a database. */
COFFER_API int coffer_db_refresh_on_commit(const coffer_db *db);

/** The version `db` last refreshed to (its observers' version), in `*out`;
 *  0 before its first refresh. */
COFFER_API coffer_status coffer_db_version(coffer_db *db, uint64_t *out);

/** Delivers the callbacks of `db` through `post`: when a commit is seen,
 *  `post(scheduler_ctx, work, arg)` is called (on the library's notifier
 *  thread) and the program's loop later runs `work(arg)`, which refreshes
 *  and calls the callbacks there. At most one such work item is pending per
 *  handle. `post` NULL goes back to the notifier thread. Work posted before
 *  the handle closed does nothing when it runs. */
COFFER_API coffer_status coffer_db_set_scheduler(coffer_db *db, coffer_post_fn post, void *scheduler_ctx);

/** Observes every refresh of `db` that moved it to a newer version. The
 *  caller owns `*token` (coffer_token_stop()). */
COFFER_API coffer_status coffer_db_observe(coffer_db *db, coffer_db_callback callback, void *ctx, coffer_token **token);

/** Observes object `key` of class `cls`: the callback names the changed
 *  properties with their old and new values, or says the object was
 *  deleted (its last call). `key_paths` (`count` dotted paths from the class,
 *  e.g. "name" or "owner.name"; NULL/0 for every own property) restricts
 *  which changes count; a change reached through a path is reported as the
 *  path's first property.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (bad class id, NULL callback or
 *  token); COFFER_ERR_NOT_FOUND (no such object now); COFFER_ERR_QUERY
 *  naming an unknown key path; COFFER_ERR_MISUSE (closed). */
COFFER_API coffer_status coffer_object_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                               const char *const *key_paths, size_t count,
                                               coffer_object_callback callback, void *ctx, coffer_token **token);

/** Observes the results of `query` (kept by the observer; the caller may
 *  free it). Without `key_paths`, a change to a property of a result object
 *  or of an object it links to (up to three links away) is a modification;
 *  `key_paths` restricts that to the given dotted paths from the query's
 *  class, and an empty array (`count` 0, `key_paths` not NULL) to no
 *  property at all (only insertions, deletions and moves count).
 *  Errors as coffer_object_observe(), but no COFFER_ERR_NOT_FOUND. */
COFFER_API coffer_status coffer_query_observe(coffer_db *db, const coffer_query *query, const char *const *key_paths,
                                              size_t count, coffer_collection_callback callback, void *ctx,
                                              coffer_token **token);

/** Observes list property `prop` of object `key` of class `cls`: its
 *  insertions, deletions, moves, and elements replaced or (for lists of
 *  objects) changed, filtered by `key_paths` from the element class as for
 *  coffer_query_observe(). When the object is deleted the last call reports
 *  every element deleted and coffer_collection_changes_root_deleted().
 *  Errors as coffer_object_observe(); COFFER_ERR_TYPE when `prop` is not a
 *  list. */
COFFER_API coffer_status coffer_list_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                             coffer_property_id prop, const char *const *key_paths, size_t count,
                                             coffer_collection_callback callback, void *ctx, coffer_token **token);

/** Observes list property `prop` of object `key` of class `cls` seen
 *  through `query` (compiled for the list's element class; kept by the
 *  observer, the caller may free it): the list's elements, in the list's
 *  order, that match its predicate, then its SORT, DISTINCT and LIMIT, as
 *  realm-core's `list.filter(...)`/`list.sorted(...)` results. An object the
 *  list holds twice is two rows. The change set is that of results with an
 *  order of their own: a row that changes places (the list was reordered,
 *  or a sort key changed) is a deletion plus an insertion, never a move.
 *  Key paths are from the element class, as for coffer_list_observe(); when
 *  the object is deleted the last call reports every row deleted and
 *  coffer_collection_changes_root_deleted().
 *  Errors as coffer_list_observe(); COFFER_ERR_TYPE when `prop` is not a
 *  list of objects; COFFER_ERR_INVALID_ARGUMENT when `query` is NULL or of
 *  another class than the list's elements. */
COFFER_API coffer_status coffer_list_query_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                                   coffer_property_id prop, const coffer_query *query,
                                                   const char *const *key_paths, size_t count,
                                                   coffer_collection_callback callback, void *ctx,
                                                   coffer_token **token);

/** Orders of a list of values seen sorted (coffer_list_values_observe()). */
typedef enum coffer_sort_order {
    COFFER_SORT_NONE = 0,       /**< the list's own order */
    COFFER_SORT_ASCENDING = 1,  /**< smallest first (the order of a query's SORT) */
    COFFER_SORT_DESCENDING = 2  /**< largest first */
} coffer_sort_order;

/** Observes list-of-values property `prop` of object `key` of class `cls`
 *  seen distinct and/or sorted, as realm-core's `list.distinct()` and
 *  `list.sorted(ascending:)`: with `distinct` nonzero equal values appear
 *  once (the first, in list order), then `order` (a coffer_sort_order; the
 *  sort is stable) orders them. A row is a position of the list: an element
 *  replaced in place is modified, and reported as a deletion plus an
 *  insertion when that moves it in the sorted order. Otherwise as
 *  coffer_list_query_observe().
 *  Errors as coffer_list_observe(); COFFER_ERR_TYPE when `prop` is not a
 *  list of values; COFFER_ERR_INVALID_ARGUMENT for an unknown `order`. */
COFFER_API coffer_status coffer_list_values_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                                    coffer_property_id prop, int order, int distinct,
                                                    coffer_collection_callback callback, void *ctx,
                                                    coffer_token **token);

/** The positions of the elements of `list` seen distinct and/or sorted, in
 *  the order of that view, exactly as coffer_list_values_observe() with the
 *  same `order` and `distinct` numbers its rows: with `distinct` nonzero the
 *  first of equal values (in list order) only, then ordered by `order` (a
 *  coffer_sort_order; stable, values of mixed kinds by kind then value, as a
 *  query's SORT). The positions go to `positions`, which has room for
 *  `capacity` of them (coffer_list_count() is always enough), and their
 *  number to `*count`. Reads the list in its transaction; `list` stays the
 *  caller's.
 *  Errors: COFFER_ERR_INVALID_ARGUMENT (NULL `list` or `count`, NULL
 *  `positions` with a nonzero `capacity`, an unknown `order`, or more
 *  positions than `capacity`); the errors of coffer_list_get(). */
COFFER_API coffer_status coffer_list_values_view(coffer_list *list, int order, int distinct, uint64_t *positions,
                                                 size_t capacity, size_t *count);

/** Observes set property `prop` of object `key` of class `cls`: elements
 *  inserted and deleted, and (for sets of objects) elements whose objects
 *  changed, as a collection change set whose indices are positions in the
 *  set's order (coffer_set_get()), old ones for deletions and
 *  modifications, new ones for insertions and modifications_new. Sets
 *  report no moves; coffer_collection_changes_cleared() tells a clear that
 *  left the set empty. Key paths (from the element class, for sets of
 *  objects) filter as for coffer_list_observe(); when the object is deleted
 *  the last call reports every element deleted and
 *  coffer_collection_changes_root_deleted().
 *  Errors as coffer_object_observe(); COFFER_ERR_TYPE when `prop` is not a
 *  set; COFFER_ERR_QUERY for key paths on a set of values. */
COFFER_API coffer_status coffer_set_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                            coffer_property_id prop, const char *const *key_paths, size_t count,
                                            coffer_collection_callback callback, void *ctx, coffer_token **token);

typedef struct coffer_map_changes coffer_map_changes;
/** Called with the changes of an observed map; `changes` is NULL for the
 *  first call, which reports the initial state. */
typedef void (*coffer_map_callback)(void *ctx, coffer_txn *txn, const coffer_map_changes *changes);

/** Observes map property `prop` of object `key` of class `cls`. Changes
 *  are given as keys, as Realm's dictionary changes: keys deleted (they were
 *  in the old map), inserted (new in the map) and modified (kept, with
 *  another value, or for maps of objects a linked object that changed, as
 *  filtered by `key_paths` from the value class). A change inside a list or
 *  map nested in a value is not a modification of its key. When the object
 *  is deleted the last call reports every key deleted and
 *  coffer_map_changes_root_deleted().
 *  Errors as coffer_object_observe(); COFFER_ERR_TYPE when `prop` is not a
 *  map; COFFER_ERR_QUERY for key paths on a map of values. */
COFFER_API coffer_status coffer_map_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                            coffer_property_id prop, const char *const *key_paths, size_t count,
                                            coffer_map_callback callback, void *ctx, coffer_token **token);

/** The number of keys of `kind` (COFFER_CHANGE_DELETIONS,
 *  COFFER_CHANGE_INSERTIONS or COFFER_CHANGE_MODIFICATIONS) in `changes`;
 *  0 for another kind or NULL. Deleted keys are in the old map's order,
 *  the others in the new map's. */
COFFER_API size_t coffer_map_changes_count(const coffer_map_changes *changes, int kind);

/** Key `i` of `kind`, borrowed for the duration of the callback.
 *  COFFER_ERR_INVALID_ARGUMENT for a NULL argument, another kind, or `i`
 *  out of range. */
COFFER_API coffer_status coffer_map_changes_key(const coffer_map_changes *changes, int kind, size_t i,
                                                coffer_bytes *key);

/** 1 if the map was cleared (and left empty), else 0. */
COFFER_API int coffer_map_changes_cleared(const coffer_map_changes *changes);

/** 1 if the object owning the observed map was deleted, else 0. */
COFFER_API int coffer_map_changes_root_deleted(const coffer_map_changes *changes);

/** Stops an observer and frees its token. Once it returns, the callback
 *  runs no more, from any thread: if it is running on another thread, this
 *  waits for it to return. It may be called from inside the callback itself
 *  (that call still finishes). Closing the handle ends its observers (no
 *  callback runs once coffer_close() returns), but their tokens stay valid
 *  until stopped, which frees them. NULL is a no-op. */
COFFER_API void coffer_token_stop(coffer_token *token);

/** Commits `txn` as coffer_txn_commit() does, but the observers of the
 *  `count` tokens (of the same handle) are not told of this commit's
 *  changes: their next change set starts after it (Realm's
 *  `commitWrite(withoutNotifying:)`). */
COFFER_API coffer_status coffer_txn_commit_without_notifying(coffer_txn *txn, coffer_token *const *tokens, size_t count);

/** Kinds of indices of a collection change set. */
typedef enum coffer_change_kind {
    COFFER_CHANGE_DELETIONS = 0,         /**< in the old collection */
    COFFER_CHANGE_INSERTIONS = 1,        /**< in the new collection */
    COFFER_CHANGE_MODIFICATIONS = 2,     /**< kept and changed, old indices */
    COFFER_CHANGE_MODIFICATIONS_NEW = 3  /**< the same rows, new indices */
} coffer_change_kind;

/** The number of indices of `kind` in `changes`. */
COFFER_API size_t coffer_collection_changes_count(const coffer_collection_changes *changes, int kind);

/** Copies the indices of `kind`, ascending, to `out` (room for
 *  coffer_collection_changes_count() of them); returns how many. */
COFFER_API size_t coffer_collection_changes_copy(const coffer_collection_changes *changes, int kind, uint64_t *out);

/** For an observer of query results (coffer_query_observe()): sets
 *  `*keys` to the object keys of the results at the callback's version, in
 *  their order, and `*count` to their number, and returns 1; the keys are
 *  borrowed from the observer, valid until the callback returns. They are
 *  the rows the change set's new indices count, so a callback can read the
 *  results without running the query again. Returns 0, with `*keys` NULL
 *  and `*count` 0, for the changes of another kind of observer or NULL
 *  `changes`. `keys` and `count` may be NULL. */
COFFER_API int coffer_collection_changes_result_keys(const coffer_collection_changes *changes, const uint64_t **keys,
                                                     size_t *count);

/** The number of moves (lists only; each also among the deletions and the
 *  insertions). */
COFFER_API size_t coffer_collection_changes_move_count(const coffer_collection_changes *changes);

/** Move `i`: from an old index `*from` to a new index `*to`.
 *  COFFER_ERR_INVALID_ARGUMENT when `i` is out of range. */
COFFER_API coffer_status coffer_collection_changes_move(const coffer_collection_changes *changes, size_t i,
                                                       uint64_t *from, uint64_t *to);

/** 1 if the list was cleared (and not added to after), else 0. */
COFFER_API int coffer_collection_changes_cleared(const coffer_collection_changes *changes);

/** 1 if the object owning the observed list (or set) was deleted, else 0. */
COFFER_API int coffer_collection_changes_root_deleted(const coffer_collection_changes *changes);

/** 1 if the observed object was deleted (then no property is listed). */
COFFER_API int coffer_object_changes_deleted(const coffer_object_changes *changes);

/** The number of changed properties. */
COFFER_API size_t coffer_object_changes_count(const coffer_object_changes *changes);

/** Changed property `i` (in schema order): its id, and its value before and
 *  after the change, borrowed from the old and the new snapshot for the
 *  duration of the callback (`old_value` or `new_value` may be NULL).
 *  COFFER_ERR_INVALID_ARGUMENT when `i` is out of range. */
COFFER_API coffer_status coffer_object_changes_property(const coffer_object_changes *changes, size_t i,
                                                       coffer_property_id *prop, coffer_value *old_value,
                                                       coffer_value *new_value);

/* ------------------------------------------------------------------------ */
/* Sync (docs/SYNC.md)                                                       */
/* ------------------------------------------------------------------------ */

/** A clock source: milliseconds since 1970 UTC. */
typedef uint64_t (*coffer_clock_fn)(void *ctx);

/** Experimental, for tests: makes every sync clock of the process read
 *  `fn(ctx)` instead of the system clock (the wall-clock part of the hybrid
 *  logical clock of docs/SYNC.md), so that a test can simulate a client
 *  offline for a week. `fn` must be safe to call from any thread until it is
 *  replaced; NULL restores the system clock. Clocks never go back: a source
 *  that does keeps each file's clock counting up from its last value. */
COFFER_API void coffer_sync_set_clock_source(coffer_clock_fn fn, void *ctx);

/** A sync transport: how a synced database exchanges frames with the
 *  service (docs/SYNC.md, "Wire protocol": one binary WebSocket message per
 *  frame). The core has one for `ws://` URLs, used unless
 *  coffer_config_set_sync_transport() gives another; Swift and Python supply
 *  their own (for `wss://`, proxies, or tests). Every callback runs on the
 *  database's sync thread, one at a time, and returns COFFER_OK or an error
 *  status (COFFER_ERR_IO for a failed connection): any error closes the
 *  connection and the session reconnects with backoff. */
typedef struct coffer_sync_transport {
    /** Passed to every callback. */
    void *ctx;
    /** Connects to `url` (the configured URL, NUL-terminated) and stores an
     *  opaque connection in `*connection`. */
    coffer_status (*open)(void *ctx, const char *url, void **connection);
    /** Sends one frame of `size` bytes (borrowed for the call). */
    coffer_status (*send)(void *ctx, void *connection, const uint8_t *frame, size_t size);
    /** Waits at most `timeout_ms` milliseconds for one frame: COFFER_OK with
     *  `*frame` and `*size` set (memory of the transport, valid until the next
     *  receive or close on the connection), COFFER_ERR_TIMEOUT when none came
     *  in time, another status when the connection failed or closed. */
    coffer_status (*receive)(void *ctx, void *connection, int timeout_ms, const uint8_t **frame, size_t *size);
    /** Closes the connection and frees what it holds; called once per opened
     *  connection. */
    void (*close)(void *ctx, void *connection);
} coffer_sync_transport;

/** For transports: records `message` (copied, truncated to the size of
 *  coffer_last_error()'s buffer) as the calling thread's last error and
 *  returns `status`, so that a callback can end with
 *  `return coffer_sync_transport_fail(COFFER_ERR_IO, "certificate ...");`
 *  and the session's error (coffer_sync_error()) says why the connection
 *  failed. A failing callback that sets no message gets a generic one.
 *  NULL `message` records "". */
COFFER_API coffer_status coffer_sync_transport_fail(coffer_status status, const char *message);

/** Makes every handle opened with `config` sync with the service at `url`
 *  (`ws://HOST:PORT/sync/v1`) as a client of `partition` (docs/SYNC.md). The
 *  first synced open of a file gives it a client id and records the objects
 *  it holds for upload; every top-level class needs a primary key
 *  (coffer_open() then fails with COFFER_ERR_SCHEMA naming the class), and a
 *  file syncs one partition for good (another gives
 *  COFFER_ERR_INVALID_ARGUMENT naming both). The handle starts a sync thread
 *  that connects, uploads local commits in order, integrates downloads in
 *  write transactions marked COFFER_ORIGIN_REMOTE, and reconnects with
 *  backoff when the connection drops; writes never wait for the network.
 *  coffer_close() stops the thread. NULL `url` turns sync off for the
 *  config. Errors: COFFER_ERR_INVALID_ARGUMENT (NULL config, empty
 *  partition, a URL that is neither ws:// nor wss://), COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_config_set_sync(coffer_config *config, const char *url, const char *partition);

/** Uses `transport` (copied; its ctx must stay valid while handles opened
 *  with the config are open) instead of the built-in `ws://` transport.
 *  NULL restores the built-in one. The built-in transport is a small RFC 6455
 *  client over a TCP socket, without TLS: `wss://` URLs need a transport of
 *  their own, and coffer_open() of a `wss://` configuration without one fails
 *  with COFFER_ERR_INVALID_ARGUMENT naming the URL. A transport should keep
 *  the built-in one's limits: messages up to 64 MiB (larger ones fail the
 *  connection with COFFER_ERR_IO), a connect and upgrade that give up after
 *  10 s, and a close handshake on close. */
COFFER_API coffer_status coffer_config_set_sync_transport(coffer_config *config, const coffer_sync_transport *transport);

/** The longest access token a sync session sends, in bytes, its NUL
 *  included: the size of the buffer a coffer_sync_token_fn fills. */
#define COFFER_SYNC_TOKEN_MAX 8192

/** Sends `token` (copied) in every HELLO of handles opened with `config`:
 *  the access token of a service that authenticates its clients
 *  (docs/SYNC.md, "Users and authentication"). A service in development
 *  mode ignores it; NULL or "" sends none. A token that cannot be refreshed
 *  stops the session when it expires (COFFER_SYNC_FAILED, with
 *  coffer_sync_error() naming TOKEN_EXPIRED): use
 *  coffer_config_set_sync_token_callback() for sessions that outlive their
 *  token. Errors: COFFER_ERR_INVALID_ARGUMENT (NULL config, a token of
 *  COFFER_SYNC_TOKEN_MAX bytes or more), COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_config_set_sync_token(coffer_config *config, const char *token);

/** Supplies the access token for a HELLO; runs on the database's sync
 *  thread before every connection. `refresh` is 0 for the token in hand, 1
 *  when the service refused the last one as expired (ERROR TOKEN_EXPIRED):
 *  the callback then gets a fresh one (from its refresh token) before
 *  returning. It writes the token, NUL-terminated, into `buf` of `size`
 *  (COFFER_SYNC_TOKEN_MAX) bytes, and returns COFFER_OK; COFFER_ERR_IO when
 *  no token can be had now (the session retries with backoff); any other
 *  status stops the session (COFFER_SYNC_FAILED) until
 *  coffer_sync_resume(). */
typedef coffer_status (*coffer_sync_token_fn)(void *ctx, int refresh, char *buf, size_t size);

/** Asks `fn(ctx, ...)` for the HELLO token before every connection of
 *  handles opened with `config`, instead of a fixed token: with it a session
 *  refreshes an expired token by itself and reconnects at once. `ctx` must
 *  stay valid while such handles are open. It takes precedence over
 *  coffer_config_set_sync_token(); NULL `fn` removes it. Errors:
 *  COFFER_ERR_INVALID_ARGUMENT (NULL config). */
COFFER_API coffer_status coffer_config_set_sync_token_callback(coffer_config *config, coffer_sync_token_fn fn,
                                                               void *ctx);

/** The codes of the sync service's ERROR frames (docs/SYNC.md, "Errors"). */
typedef enum coffer_sync_error_code {
    COFFER_SYNC_ERROR_PROTOCOL = 1,        /**< a frame that does not decode; fatal */
    COFFER_SYNC_ERROR_VERSION = 2,         /**< an unsupported protocol version; fatal */
    COFFER_SYNC_ERROR_AUTH = 3,            /**< the token was refused; fatal */
    COFFER_SYNC_ERROR_SCHEMA_MISMATCH = 4, /**< a breaking schema difference; fatal */
    COFFER_SYNC_ERROR_BAD_CHANGESET = 5,   /**< an upload that does not apply to the schema; fatal */
    COFFER_SYNC_ERROR_OVERLOADED = 6,      /**< the service shed the session; it reconnects */
    COFFER_SYNC_ERROR_INTERNAL = 7,        /**< the service failed; it reconnects */
    COFFER_SYNC_ERROR_CLIENT_RESET = 8,    /**< the file is behind its client's record; it syncs as a new client */
    COFFER_SYNC_ERROR_TOKEN_EXPIRED = 9,   /**< the access token expired */
    /** A write the service's permission rules refuse: it was not integrated,
     *  and the service's state of the object comes back in a download,
     *  reverting it in this file. Not fatal: the session goes on. */
    COFFER_SYNC_ERROR_COMPENSATING_WRITE = 10,
    /** (Flexible sync) the service refused a subscription set: the message
     *  names the subscription, its query and the part it cannot evaluate.
     *  Not fatal: the set is in COFFER_SUBSCRIPTION_ERROR and the service
     *  goes on with the set before it. */
    COFFER_SYNC_ERROR_SUBSCRIPTION = 11
} coffer_sync_error_code;

/** One ERROR frame of the sync service, as a coffer_sync_error_fn sees it.
 *  Every pointer is borrowed for the call only: copy what must outlive it. */
typedef struct coffer_sync_error_event {
    /** A coffer_sync_error_code (a newer service may send codes this header
     *  does not name). */
    uint64_t code;
    /** The code's name ("COMPENSATING_WRITE"; "unknown" for a code this
     *  library does not know). */
    const char *code_name;
    /** The service's message (UTF-8, NUL-terminated). */
    const char *message;
    /** 1 when the service closes the session with it, else 0. */
    int fatal;
    /** For COFFER_SYNC_ERROR_COMPENSATING_WRITE, the class of the refused
     *  object; NULL for other codes. */
    const char *class_name;
    /** For COFFER_SYNC_ERROR_COMPENSATING_WRITE, the refused object's
     *  primary key (an int, string, objectId or uuid value; a string
     *  borrows the frame's bytes); NULL for other codes. */
    const coffer_value *primary_key;
} coffer_sync_error_event;

/** Told of every ERROR frame the sync service sends (docs/SYNC.md,
 *  "Errors"), fatal or not, before the session acts on it. It runs on the
 *  database's sync thread, which waits for it: it must return soon and must
 *  not close the database nor wait for sync (coffer_sync_wait_for_upload()
 *  and coffer_sync_wait_for_download() would wait for themselves); it may
 *  read the database and start write transactions of its own. */
typedef void (*coffer_sync_error_fn)(void *ctx, const coffer_sync_error_event *event);

/** Calls `fn(ctx, event)` for every ERROR frame the service sends to handles
 *  opened with `config`; with it an app learns of compensating writes (a
 *  write the service's permission rules refused, which the session reverts)
 *  and of errors that stop the session. `ctx` must stay valid while such
 *  handles are open. NULL `fn` removes it. Errors:
 *  COFFER_ERR_INVALID_ARGUMENT (NULL config). */
COFFER_API coffer_status coffer_config_set_sync_error_callback(coffer_config *config, coffer_sync_error_fn fn,
                                                               void *ctx);

/** What a session does when the service answers ERROR CLIENT_RESET: the
 *  file is behind what the service still has of its history (it was
 *  offline, or its bundle was copied, longer ago than the service's maximum
 *  offline time) or behind what its client id acknowledged (restored from a
 *  backup). The numbers are stable (docs/SYNC.md, "Client reset"). */
typedef enum coffer_client_reset_mode {
    /** The default: the file becomes a new client that downloads the
     *  partition's whole history again; its objects and its commits not yet
     *  uploaded stay and are uploaded under the new client id, merged with
     *  the service's state by the ordinary rules. */
    COFFER_CLIENT_RESET_RECOVER_UNSYNCED = 0,
    /** The file's synced objects and the commits not yet uploaded are
     *  deleted (one commit, which observers see as deletions); the file
     *  becomes a new client and downloads the service's state afresh. */
    COFFER_CLIENT_RESET_DISCARD_UNSYNCED = 1,
    /** Nothing is changed: the session stops (COFFER_SYNC_FAILED, the error
     *  callback is told) and the app resolves it, for example by copying
     *  what it needs and deleting the file. */
    COFFER_CLIENT_RESET_MANUAL = 2
} coffer_client_reset_mode;

/** Told around a client reset by the recover and discard modes:
 *  `after` 0 on the sync thread before the file is changed (`db` still holds
 *  the state before the reset: the callback may read it, copy objects out
 *  of it in a read transaction, or record what it needs), `after` 1 once the
 *  first download after the reset is integrated (`db` holds the fresh state;
 *  the callback may read it and write to it). The same thread rules as
 *  coffer_sync_error_fn: it must not close the database nor wait for sync. */
typedef void (*coffer_client_reset_fn)(void *ctx, coffer_db *db, int after);

/** Sets how handles opened with `config` handle a client reset (`mode`, a
 *  coffer_client_reset_mode) and the callback told before and after one
 *  (NULL: none; `ctx` must stay valid while such handles are open; the
 *  manual mode calls no callback, the error callback is told as for every
 *  ERROR). Errors: COFFER_ERR_INVALID_ARGUMENT (NULL config, an unknown
 *  mode, naming it). */
COFFER_API coffer_status coffer_config_set_sync_client_reset(coffer_config *config, coffer_client_reset_mode mode,
                                                             coffer_client_reset_fn fn, void *ctx);

/** Sync session states (coffer_sync_state()). */
typedef enum coffer_sync_state_kind {
    COFFER_SYNC_OFF = 0,          /**< the handle does not sync */
    COFFER_SYNC_DISCONNECTED = 1, /**< waiting to connect again (backoff) */
    COFFER_SYNC_CONNECTING = 2,   /**< connecting, or waiting for WELCOME */
    COFFER_SYNC_CONNECTED = 3,    /**< uploading and downloading */
    COFFER_SYNC_PAUSED = 4,       /**< coffer_sync_pause(): no connection */
    COFFER_SYNC_FAILED = 5        /**< the service refused the session for good (coffer_sync_error()) */
} coffer_sync_state_kind;

/** The handle's session state, a COFFER_SYNC_* value. It is
 *  COFFER_SYNC_PAUSED as soon as coffer_sync_pause() returns, and stays so
 *  until coffer_sync_resume(). */
COFFER_API int coffer_sync_state(coffer_db *db);

/** Told of a change of a sync session's state (coffer_sync_state()): from
 *  `old_state` to `new_state`, both COFFER_SYNC_* values and never equal.
 *  The session state (running, COFFER_SYNC_PAUSED, COFFER_SYNC_FAILED) and
 *  the connection state (COFFER_SYNC_DISCONNECTED, COFFER_SYNC_CONNECTING,
 *  COFFER_SYNC_CONNECTED) are the one value, so one callback tells both.
 *
 *  Threads: it runs on the database's sync thread, or on a thread calling
 *  coffer_sync_pause() or coffer_sync_resume() (the change such a call makes
 *  has been told when it returns), or on the thread calling coffer_close(),
 *  which tells the last change, to COFFER_SYNC_OFF. Calls never overlap and
 *  come in the order of the changes: when one thread is in the callback,
 *  another that has a change to tell waits for it to return, and whichever
 *  tells next tells every change waiting; a change made from inside the
 *  callback is told by the same thread after the callback returns. Up to 16
 *  changes wait their turn; beyond that the newest replaces the last one
 *  waiting, so the last call always ends at the current state. The first state, COFFER_SYNC_CONNECTING when
 *  coffer_open() returns, is not told: read it with coffer_sync_state().
 *
 *  The callback may call coffer_sync_state(), coffer_sync_error(),
 *  coffer_sync_pause() and coffer_sync_resume() (the change that makes is
 *  told after the current call returns), and read the file in its own read
 *  transactions. It may not close the handle, wait for sync
 *  (coffer_sync_wait_for_upload(), coffer_sync_wait_for_download()), begin a
 *  write transaction, wait for a lock that a thread calling
 *  coffer_sync_pause(), coffer_sync_resume() or coffer_close() may hold, or
 *  block for long: the session makes no progress while it runs. */
typedef void (*coffer_sync_state_fn)(void *ctx, int old_state, int new_state);

/** Calls `fn(ctx, old, new)` on every change of the sync state of handles
 *  opened with `config` (coffer_sync_state_fn says on which thread and what
 *  it may do). `ctx` must stay valid until such handles are closed; NULL
 *  `fn` removes the callback. Errors: COFFER_ERR_INVALID_ARGUMENT (NULL
 *  config). */
COFFER_API coffer_status coffer_config_set_sync_state_callback(coffer_config *config, coffer_sync_state_fn fn,
                                                               void *ctx);

/** Copies the session's last error (the service's ERROR frame or a failed
 *  connection, "" when none) into `buf` of `size` bytes, NUL-terminated and
 *  truncated to fit. COFFER_ERR_MISUSE when the handle does not sync. */
COFFER_API coffer_status coffer_sync_error(coffer_db *db, char *buf, size_t size);

/** Waits until the service has acknowledged every local commit made before
 *  the call (COFFER_OK at once when none waits), at most `timeout_ms`
 *  milliseconds: COFFER_ERR_TIMEOUT then (the upload goes on), or
 *  COFFER_ERR_MISUSE when the handle does not sync, or the session failed
 *  for good (the message says why). */
COFFER_API coffer_status coffer_sync_wait_for_upload(coffer_db *db, uint64_t timeout_ms);

/** Waits until the session is connected, has caught up with the service
 *  (an empty DOWNLOAD, or one that reaches the latest server version it
 *  names) and has integrated every frame that had arrived when the call was
 *  made, at most `timeout_ms` milliseconds. Errors as
 *  coffer_sync_wait_for_upload(). */
COFFER_API coffer_status coffer_sync_wait_for_download(coffer_db *db, uint64_t timeout_ms);

/** Closes the session's connection and keeps it closed until
 *  coffer_sync_resume(); local writes go on and are uploaded after. It
 *  returns at once: the session thread closes the connection after the
 *  frame it is handling, if any, so a download that had arrived may still
 *  be integrated; coffer_sync_state() gives COFFER_SYNC_PAUSED as soon as
 *  this returns, and nothing more is integrated until coffer_sync_resume().
 *  A pause followed at once by a resume still closes the connection and
 *  connects again. */
COFFER_API coffer_status coffer_sync_pause(coffer_db *db);

/** Connects again after coffer_sync_pause() (at once, without backoff), or
 *  tries again after the service refused the session (COFFER_SYNC_FAILED).
 *  The state stays COFFER_SYNC_PAUSED until the session thread starts
 *  connecting (COFFER_SYNC_CONNECTING); a refused session is
 *  COFFER_SYNC_DISCONNECTED when this returns. */
COFFER_API coffer_status coffer_sync_resume(coffer_db *db);

/* ------------------------------------------------------------------------ */
/* Sync progress and opening                                                 */
/* ------------------------------------------------------------------------ */

/** The two directions of sync progress (coffer_sync_progress_get()). */
typedef enum coffer_sync_direction {
    COFFER_SYNC_UPLOAD = 0,  /**< local commits to the service */
    COFFER_SYNC_DOWNLOAD = 1 /**< the service's changesets to this file */
} coffer_sync_direction;

/** Reads how far one direction of a sync session has come, in changeset
 *  bytes counted since the handle was opened: `*transferred` the bytes the
 *  service acknowledged (upload) or this file integrated (download),
 *  `*transferable` those plus the bytes known to be left. Uploads know what
 *  is left from the outbox; downloads from the service (protocol 4 tells it
 *  before each DOWNLOAD frame; a flexible-sync session learns it only as
 *  frames arrive). A direction is complete when both are equal; a caught-up
 *  download makes them equal. Either pointer may be NULL. Errors:
 *  COFFER_ERR_INVALID_ARGUMENT for a NULL or closed handle or a direction
 *  that is neither COFFER_SYNC_UPLOAD nor COFFER_SYNC_DOWNLOAD,
 *  COFFER_ERR_MISUSE when the handle does not sync. */
COFFER_API coffer_status coffer_sync_progress_get(coffer_db *db, int direction, uint64_t *transferred,
                                                  uint64_t *transferable);

/** Told of each change of a direction's progress (coffer_sync_progress_get()
 *  gives the same two counts). It runs on the session's own thread, one
 *  call at a time, and so as coffer_sync_state_fn: it may read the progress
 *  and the state but may not close the handle, wait for sync, or block for
 *  long. */
typedef void (*coffer_sync_progress_fn)(void *ctx, int direction, uint64_t transferred, uint64_t transferable);

/** Calls `fn(ctx, direction, transferred, transferable)` on every change of
 *  the sync progress of handles opened with `config`, from the first
 *  connection on (so during a coffer_open() that downloads before it
 *  returns, see coffer_config_set_sync_download_before_open()). `fn` NULL
 *  removes it. Errors: COFFER_ERR_INVALID_ARGUMENT for a NULL config. */
COFFER_API coffer_status coffer_config_set_sync_progress_callback(coffer_config *config, coffer_sync_progress_fn fn,
                                                                  void *ctx);

/** When coffer_open() of a synced handle waits for the service's state
 *  (Realm's downloadBeforeOpen). */
typedef enum coffer_sync_open_download {
    COFFER_SYNC_DOWNLOAD_NEVER = 0, /**< return at once (the default) */
    COFFER_SYNC_DOWNLOAD_ONCE = 1,  /**< wait when the file had never synced before this open */
    COFFER_SYNC_DOWNLOAD_ALWAYS = 2 /**< wait at every open */
} coffer_sync_open_download;

/** Makes coffer_open() with `config` (which also needs coffer_config_set_sync())
 *  wait, as `mode` says, until the session is connected and has integrated
 *  everything the service had (coffer_sync_wait_for_download()), at most
 *  `timeout_ms` milliseconds (0: no limit). When the wait fails, coffer_open()
 *  closes the handle and returns the wait's error: COFFER_ERR_TIMEOUT when the
 *  service was not reached or did not finish in time (the file keeps what was
 *  integrated), COFFER_ERR_MISUSE when the service refused the session for
 *  good (the message says why). Errors: COFFER_ERR_INVALID_ARGUMENT for a
 *  NULL config or a mode that is none of coffer_sync_open_download. */
COFFER_API coffer_status coffer_config_set_sync_download_before_open(coffer_config *config, int mode,
                                                                     uint64_t timeout_ms);

/* ------------------------------------------------------------------------ */
/* Flexible sync: query subscriptions                                        */
/* ------------------------------------------------------------------------ */

/** Makes the handles opened with `config` (which also needs
 *  coffer_config_set_sync()) flexible-sync clients (docs/SYNC.md, "Flexible
 *  sync"), as Realm's flexible sync: instead of every object of the
 *  partition, a client downloads the objects that match one of its
 *  subscriptions (named queries per class, coffer_subscriptions_update())
 *  and that the service's read rules let it read; the `partition` of
 *  coffer_config_set_sync() names the data set its subscriptions query.
 *  Writes to objects outside every subscription are refused by the service
 *  with a compensating write. `flexible` 0 makes them partition-based again
 *  (the default). Errors: COFFER_ERR_INVALID_ARGUMENT for a NULL config. */
COFFER_API coffer_status coffer_config_set_sync_flexible(coffer_config *config, int flexible);

/** A subscription set: a numbered version of a file's subscriptions, either
 *  a snapshot of the latest (coffer_subscriptions_latest()) or an update
 *  being made (coffer_subscriptions_update()). Free with
 *  coffer_subscription_set_free(); it may be used on any one thread at a
 *  time, and outlives nothing: free it before closing its handle. */
typedef struct coffer_subscription_set coffer_subscription_set;

/** The state of a subscription set, as Realm's. */
typedef enum coffer_subscription_state {
    /** Committed, not yet acknowledged by the service. */
    COFFER_SUBSCRIPTION_PENDING = 0,
    /** Sent to the service; the objects it brings are arriving. */
    COFFER_SUBSCRIPTION_BOOTSTRAPPING = 1,
    /** The file holds exactly the objects the set (and the read rules) give. */
    COFFER_SUBSCRIPTION_COMPLETE = 2,
    /** The service refused the set; coffer_subscription_set_error() says why
     *  (the query and the part at fault). The service goes on with the set
     *  before it. */
    COFFER_SUBSCRIPTION_ERROR = 3,
    /** A later set was committed. */
    COFFER_SUBSCRIPTION_SUPERSEDED = 4
} coffer_subscription_state;

/** Takes a snapshot of the latest subscription set of `db`'s file into *out
 *  (version 0, empty and complete, when none was committed). The caller
 *  frees it. The set is stored in the file: it survives closing and
 *  reopening. Errors: COFFER_ERR_INVALID_ARGUMENT (NULL or closed handle,
 *  NULL out), COFFER_ERR_NO_MEMORY, storage errors. */
COFFER_API coffer_status coffer_subscriptions_latest(coffer_db *db, coffer_subscription_set **out);

/** Begins an update: *out is a mutable copy of the latest set, changed by
 *  coffer_subscription_set_append() and the removes, then stored by
 *  coffer_subscription_set_commit() (or dropped by
 *  coffer_subscription_set_free()). Errors as coffer_subscriptions_latest(),
 *  and COFFER_ERR_READ_ONLY for a read-only handle. */
COFFER_API coffer_status coffer_subscriptions_update(coffer_db *db, coffer_subscription_set **out);

/** Adds the subscription `name` (NULL or "" for an unnamed one) to an
 *  update: the objects of class `class_name` matching `query`, in the query
 *  language (docs/QUERY.md) of the subset the service evaluates (docs/SYNC.md,
 *  "Predicates over stored objects"; the service refuses others when the set
 *  reaches it, see COFFER_SUBSCRIPTION_ERROR). `class_name` must be a
 *  top-level class of the handle's schema. Appending a subscription that the
 *  set holds already (same name, class and query; for an unnamed one, same
 *  class and query) changes nothing. Strings are copied. Errors:
 *  COFFER_ERR_INVALID_ARGUMENT (NULL set, class or query, an empty query),
 *  COFFER_ERR_MISUSE (a snapshot, not an update), COFFER_ERR_SCHEMA (a class
 *  the schema does not have, or an embedded one),
 *  COFFER_ERR_PRIMARY_KEY_EXISTS (`name` is taken by another query: remove it
 *  first), COFFER_ERR_NO_MEMORY. */
COFFER_API coffer_status coffer_subscription_set_append(coffer_subscription_set *set, const char *name,
                                                        const char *class_name, const char *query);

/** Removes the subscription named `name` from an update; *removed (may be
 *  NULL) is 1 when there was one, else 0. Errors: COFFER_ERR_INVALID_ARGUMENT
 *  (NULL set or name), COFFER_ERR_MISUSE (a snapshot). */
COFFER_API coffer_status coffer_subscription_set_remove_named(coffer_subscription_set *set, const char *name,
                                                              int *removed);

/** Removes every subscription of class `class_name` from an update;
 *  *removed (may be NULL) is how many. Errors as
 *  coffer_subscription_set_remove_named(). */
COFFER_API coffer_status coffer_subscription_set_remove_class(coffer_subscription_set *set, const char *class_name,
                                                              size_t *removed);

/** Removes every subscription from an update; *removed (may be NULL) is how
 *  many. Errors: COFFER_ERR_INVALID_ARGUMENT, COFFER_ERR_MISUSE. */
COFFER_API coffer_status coffer_subscription_set_remove_all(coffer_subscription_set *set, size_t *removed);

/** Stores an update as the file's latest set, with the next version
 *  (*version, may be NULL), in a write transaction of its own (so not
 *  inside one of the calling thread's), in state COFFER_SUBSCRIPTION_PENDING;
 *  a syncing handle sends it to the service at once. The set becomes a
 *  snapshot of that version (it can no longer be changed). Errors:
 *  COFFER_ERR_INVALID_ARGUMENT, COFFER_ERR_MISUSE (a snapshot, or a set of
 *  a closed handle), storage errors (nothing is stored). */
COFFER_API coffer_status coffer_subscription_set_commit(coffer_subscription_set *set, uint64_t *version);

/** The set's version (0 for NULL). */
COFFER_API uint64_t coffer_subscription_set_version(const coffer_subscription_set *set);

/** The number of subscriptions in the set (0 for NULL). */
COFFER_API size_t coffer_subscription_set_count(const coffer_subscription_set *set);

/** The subscription at `index` (0 ≤ index < count, in the order appended):
 *  its name ("" when unnamed), class and query, each may be NULL when not
 *  wanted; the strings belong to the set and stay valid until it changes or
 *  is freed. Errors: COFFER_ERR_INVALID_ARGUMENT (NULL set),
 *  COFFER_ERR_NOT_FOUND (index out of range). */
COFFER_API coffer_status coffer_subscription_set_at(const coffer_subscription_set *set, size_t index,
                                                    const char **name, const char **class_name, const char **query);

/** The index of the subscription named `name` in *index. Errors:
 *  COFFER_ERR_INVALID_ARGUMENT (NULL set, name or index),
 *  COFFER_ERR_NOT_FOUND (no subscription has that name). */
COFFER_API coffer_status coffer_subscription_set_find(const coffer_subscription_set *set, const char *name,
                                                      size_t *index);

/** The state of the set when it was taken or committed (a
 *  coffer_subscription_state; an update not committed is
 *  COFFER_SUBSCRIPTION_PENDING). Take a new snapshot to see it change. */
COFFER_API int coffer_subscription_set_state(const coffer_subscription_set *set);

/** For a set in COFFER_SUBSCRIPTION_ERROR, the service's message (it names
 *  the subscription, its query and the part the service cannot evaluate);
 *  "" otherwise. Valid while the set lives. */
COFFER_API const char *coffer_subscription_set_error(const coffer_subscription_set *set);

/** Frees a set (an update not committed is dropped). NULL is a no-op. */
COFFER_API void coffer_subscription_set_free(coffer_subscription_set *set);

/** Waits until subscription set `version` (or a later one) of a syncing
 *  handle is complete: the file then holds the objects it gives. Returns
 *  COFFER_OK when complete, COFFER_ERR_QUERY with the service's message when
 *  the service refused the set, COFFER_ERR_TIMEOUT after `timeout_ms`
 *  milliseconds, COFFER_ERR_MISUSE for a handle that does not sync flexibly
 *  or a version above the latest. Do not call it inside a write transaction
 *  of the same handle. */
COFFER_API coffer_status coffer_subscriptions_wait(coffer_db *db, uint64_t version, uint64_t timeout_ms);

/* ------------------------------------------------------------------------ */
/* Experimental                                                              */
/* ------------------------------------------------------------------------ */

/* The declarations below are experimental: they may change or go away in any
 * release, and are not part of the stable API or ABI. They are visible only
 * to code that defines COFFER_EXPERIMENTAL_API before including coffer.h. */
#ifdef COFFER_EXPERIMENTAL_API

/** File format 4: one record per object, the format before clusters. */
#define COFFER_STORAGE_FORMAT_RECORDS 4u
/** File format 5: objects stored in clusters of up to 256, column by column
 *  (docs/FORMAT.md, "Clusters (format 5)"); the default. docs/PERFORMANCE.md,
 *  "Storage v2", compares it with format 4. */
#define COFFER_STORAGE_FORMAT_CLUSTERS 5u

/** Chooses the file format of the file `config` opens: 0 (the default,
 *  COFFER_STORAGE_FORMAT_CLUSTERS), COFFER_STORAGE_FORMAT_RECORDS or
 *  COFFER_STORAGE_FORMAT_CLUSTERS. coffer_open() creates a new file in it;
 *  a read-write open of an existing file of format 4 upgrades it to format
 *  5 unless this asks for format 4 (coffer_open()); a file of format 5
 *  stays format 5, whatever this says, and this library opens either. A
 *  file of format 5 cannot be opened by a library that reads only up to
 *  format 4 (COFFER_ERR_FORMAT_VERSION): format 4 is for files that such a
 *  library must still open. COFFER_ERR_INVALID_ARGUMENT naming the value for
 *  any other format, or when `config` is NULL. */
COFFER_API coffer_status coffer_config_set_storage_format(coffer_config *config, uint32_t format);

#endif /* COFFER_EXPERIMENTAL_API */

#ifdef __cplusplus
}
#endif

#endif /* COFFER_H */
