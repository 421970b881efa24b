/* value — value constructors and comparison, type names, ObjectIds, limits
 * and the library version. */
#define _POSIX_C_SOURCE 200809L

#include "util/decimal128.h"
#include "util/error.h"

#include <math.h>
#include <stddef.h>
#include <sodium.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#if defined(_WIN32)
#  include <process.h>
#  define cf_getpid() ((long)_getpid())
#else
#  include <unistd.h>
#  define cf_getpid() ((long)getpid())
#endif

_Static_assert(COFFER_VERSION_NUMBER ==
                   COFFER_VERSION_MAJOR * 10000 + COFFER_VERSION_MINOR * 100 + COFFER_VERSION_PATCH,
               "COFFER_VERSION_NUMBER disagrees with the version components");

/* ------------------------------------------------------------------------ */
/* Version and limits                                                        */
/* ------------------------------------------------------------------------ */

COFFER_API const char *coffer_version(void) { return COFFER_VERSION_STRING; }

COFFER_API int coffer_version_number(void) { return COFFER_VERSION_NUMBER; }

COFFER_API size_t coffer_max_class_name(void) { return COFFER_MAX_CLASS_NAME; }

COFFER_API size_t coffer_max_property_name(void) { return COFFER_MAX_PROPERTY_NAME; }

COFFER_API size_t coffer_encryption_key_size(void) { return COFFER_ENCRYPTION_KEY_SIZE; }

/* ------------------------------------------------------------------------ */
/* Constructors                                                              */
/* ------------------------------------------------------------------------ */

/* What an empty string or binary borrows instead of NULL, so that nobody
 * downstream passes NULL to memcpy or memcmp. */
static const char empty_bytes[1] = "";

/* A value of type `t` whose payload (the start of its union) is the `size`
 * bytes at `payload`; the rest of the union is zero. */
static inline coffer_value value_with(coffer_type t, const void *payload, size_t size)
{
    coffer_value v;
    memset(&v, 0, sizeof v);
    v.type = t;
    if (size)
        memcpy(&v.u, payload, size);
    return v;
}

/* The payload of a list, map or fields value: a pointer and a count. */
typedef struct span {
    const void *items;
    size_t count;
} span;
#define SPAN_MATCHES(m)                                                                                               \
    (sizeof(((coffer_value *)0)->u.m) == sizeof(span) &&                                                              \
     offsetof(coffer_value, u.m.count) == offsetof(coffer_value, u) + offsetof(span, count))
_Static_assert(SPAN_MATCHES(list) && SPAN_MATCHES(map) && SPAN_MATCHES(fields), "list, map and fields payloads are a pointer and a count");

static inline coffer_value value_span(coffer_type t, const void *items, size_t count)
{
    span s = {items, count};
    return value_with(t, &s, sizeof s);
}

COFFER_API coffer_value coffer_value_null(void) { return value_with(COFFER_TYPE_NULL, NULL, 0); }

COFFER_API coffer_value coffer_value_bool(bool b) { return value_with(COFFER_TYPE_BOOL, &b, sizeof b); }

COFFER_API coffer_value coffer_value_int(int64_t i) { return value_with(COFFER_TYPE_INT, &i, sizeof i); }

COFFER_API coffer_value coffer_value_float(float f) { return value_with(COFFER_TYPE_FLOAT, &f, sizeof f); }

COFFER_API coffer_value coffer_value_double(double d) { return value_with(COFFER_TYPE_DOUBLE, &d, sizeof d); }

COFFER_API coffer_value coffer_value_string(const char *text, size_t size)
{
    coffer_bytes b;
    if (text == NULL && (size == 0 || size == SIZE_MAX)) {
        b = (coffer_bytes){empty_bytes, 0};
    } else {
        /* NULL with another size is kept as given, for the writer to reject. */
        b = (coffer_bytes){text, size == SIZE_MAX ? strlen(text) : size};
    }
    return value_with(COFFER_TYPE_STRING, &b, sizeof b);
}

COFFER_API coffer_value coffer_value_binary(const void *data, size_t size)
{
    coffer_bytes b = {(data == NULL && size == 0) ? empty_bytes : data, size};
    return value_with(COFFER_TYPE_BINARY, &b, sizeof b);
}

COFFER_API coffer_value coffer_value_date(int64_t seconds, int32_t nanoseconds)
{
    coffer_timestamp t = {seconds, nanoseconds};
    return value_with(COFFER_TYPE_DATE, &t, sizeof t);
}

COFFER_API coffer_value coffer_value_object_id(const uint8_t bytes[12])
{
    return value_with(COFFER_TYPE_OBJECT_ID, bytes, bytes ? sizeof(coffer_object_id) : 0);
}

COFFER_API coffer_value coffer_value_uuid(const uint8_t bytes[16])
{
    return value_with(COFFER_TYPE_UUID, bytes, bytes ? sizeof(coffer_uuid) : 0);
}

COFFER_API coffer_value coffer_value_decimal128(uint64_t low, uint64_t high)
{
    coffer_decimal128 d = {{low, high}};
    return value_with(COFFER_TYPE_DECIMAL128, &d, sizeof d);
}

COFFER_API coffer_value coffer_value_link(uint32_t class_id, uint64_t key)
{
    coffer_link l = {class_id, key};
    return value_with(COFFER_TYPE_LINK, &l, sizeof l);
}

COFFER_API coffer_value coffer_value_object(const struct coffer_object *obj) { return value_with(COFFER_TYPE_OBJECT, &obj, sizeof obj); }

COFFER_API coffer_value coffer_value_list(const coffer_value *items, size_t count) { return value_span(COFFER_TYPE_LIST, items, count); }

COFFER_API coffer_value coffer_value_map(const coffer_map_entry *entries, size_t count)
{
    return value_span(COFFER_TYPE_MAP, entries, count);
}

COFFER_API coffer_value coffer_value_fields(const struct coffer_field *fields, size_t count)
{
    return value_span(COFFER_TYPE_FIELDS, fields, count);
}

/* ------------------------------------------------------------------------ */
/* Equality and type names                                                   */
/* ------------------------------------------------------------------------ */

static int bytes_equal(const coffer_bytes *a, const coffer_bytes *b)
{
    if (a->size != b->size)
        return 0;
    if (a->size == 0 || a->data == b->data)
        return 1;
    if (a->data == NULL || b->data == NULL)
        return 0;
    return memcmp(a->data, b->data, a->size) == 0;
}

COFFER_API int coffer_value_equal(const coffer_value *a, const coffer_value *b)
{
    if (a == b)
        return 1;
    if (a == NULL || b == NULL || a->type != b->type)
        return 0;
    switch (a->type) {
    case COFFER_TYPE_NULL:
        return 1;
    case COFFER_TYPE_BOOL:
        return a->u.boolean == b->u.boolean;
    case COFFER_TYPE_INT:
        return a->u.integer == b->u.integer;
    case COFFER_TYPE_FLOAT:
        return a->u.float_value == b->u.float_value ||
               (isnan(a->u.float_value) && isnan(b->u.float_value));
    case COFFER_TYPE_DOUBLE:
        return a->u.double_value == b->u.double_value ||
               (isnan(a->u.double_value) && isnan(b->u.double_value));
    case COFFER_TYPE_STRING:
        return bytes_equal(&a->u.string, &b->u.string);
    case COFFER_TYPE_BINARY:
        return bytes_equal(&a->u.binary, &b->u.binary);
    case COFFER_TYPE_DATE:
        return a->u.date.seconds == b->u.date.seconds &&
               a->u.date.nanoseconds == b->u.date.nanoseconds;
    case COFFER_TYPE_OBJECT_ID:
        return memcmp(a->u.object_id.bytes, b->u.object_id.bytes, sizeof a->u.object_id.bytes) == 0;
    case COFFER_TYPE_UUID:
        return memcmp(a->u.uuid.bytes, b->u.uuid.bytes, sizeof a->u.uuid.bytes) == 0;
    case COFFER_TYPE_DECIMAL128:
        /* By numeric value, as Realm compares decimals: 1.0 equals 1.00,
         * -0 equals 0, NaN equals NaN. */
        return cf_decimal128_compare(&a->u.decimal128, &b->u.decimal128) == 0;
    case COFFER_TYPE_LINK:
        return a->u.link.class_id == b->u.link.class_id && a->u.link.key == b->u.link.key;
    default:
        return 0;
    }
}

COFFER_API const char *coffer_type_name(coffer_type type)
{
    switch (type) {
    case COFFER_TYPE_NULL: return "null";
    case COFFER_TYPE_BOOL: return "bool";
    case COFFER_TYPE_INT: return "int";
    case COFFER_TYPE_FLOAT: return "float";
    case COFFER_TYPE_DOUBLE: return "double";
    case COFFER_TYPE_STRING: return "string";
    case COFFER_TYPE_BINARY: return "data";
    case COFFER_TYPE_DATE: return "date";
    case COFFER_TYPE_OBJECT_ID: return "objectId";
    case COFFER_TYPE_UUID: return "uuid";
    case COFFER_TYPE_DECIMAL128: return "decimal128";
    case COFFER_TYPE_LINK: return "link";
    case COFFER_TYPE_MIXED: return "mixed";
    case COFFER_TYPE_LINKING_OBJECTS: return "linkingObjects";
    case COFFER_TYPE_LIST: return "list";
    case COFFER_TYPE_MAP: return "map";
    case COFFER_TYPE_SET: return "set";
    case COFFER_TYPE_OBJECT: return "object";
    case COFFER_TYPE_FIELDS: return "fields";
    }
    return "unknown";
}

/* ------------------------------------------------------------------------ */
/* ObjectId                                                                  */
/* ------------------------------------------------------------------------ */

/* The 5 random bytes and the counter are made once per process: on first
 * use, and again in a child after fork() (detected by the process id), so
 * that parent and child never share them. `oid_pid` is published last, with
 * release order, so a thread that reads the current pid also sees the bytes.
 * `oid_state`: 0 not initialised, 1 being initialised, 2 ready. (A fork()
 * during the few instructions of initialisation in another thread would
 * leave the child waiting; that window is not worth a pthread_atfork.) */
static atomic_int oid_state;
static atomic_long oid_pid;
static atomic_uint_fast32_t oid_counter;
static uint8_t oid_random[5];

static coffer_status oid_prepare(void)
{
    long pid = cf_getpid();
    for (;;) {
        int state = atomic_load_explicit(&oid_state, memory_order_acquire);
        if (state == 2 && atomic_load_explicit(&oid_pid, memory_order_acquire) == pid)
            return COFFER_OK;
        if (state == 1)
            continue; /* another thread is initialising; it takes microseconds */
        if (!atomic_compare_exchange_strong_explicit(&oid_state, &state, 1, memory_order_acq_rel,
                                                     memory_order_acquire))
            continue;
        if (sodium_init() < 0) {
            atomic_store_explicit(&oid_state, state, memory_order_release);
            return cf_error(COFFER_ERR_INTERNAL, "ObjectId: libsodium could not be initialised");
        }
        uint32_t start;
        randombytes_buf(oid_random, sizeof oid_random);
        randombytes_buf(&start, sizeof start);
        atomic_store_explicit(&oid_counter, start & 0xFFFFFFu, memory_order_relaxed);
        atomic_store_explicit(&oid_pid, pid, memory_order_release);
        atomic_store_explicit(&oid_state, 2, memory_order_release);
        return COFFER_OK;
    }
}

COFFER_API coffer_status coffer_object_id_generate(coffer_object_id *out)
{
    if (out == NULL)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "ObjectId: out is NULL");
    coffer_status st = oid_prepare();
    if (st != COFFER_OK)
        return st;

    uint32_t seconds = (uint32_t)time(NULL);
    uint32_t counter = (uint32_t)atomic_fetch_add_explicit(&oid_counter, 1, memory_order_relaxed);
    out->bytes[0] = (uint8_t)(seconds >> 24);
    out->bytes[1] = (uint8_t)(seconds >> 16);
    out->bytes[2] = (uint8_t)(seconds >> 8);
    out->bytes[3] = (uint8_t)seconds;
    memcpy(out->bytes + 4, oid_random, sizeof oid_random);
    out->bytes[9] = (uint8_t)(counter >> 16);
    out->bytes[10] = (uint8_t)(counter >> 8);
    out->bytes[11] = (uint8_t)counter;
    return COFFER_OK;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

COFFER_API coffer_status coffer_object_id_from_string(const char *hex, coffer_object_id *out)
{
    if (hex == NULL)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "ObjectId: text is NULL");
    if (out == NULL)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "ObjectId: out is NULL");

    coffer_object_id oid;
    size_t len = strlen(hex);
    int ok = len == 24;
    for (size_t i = 0; ok && i < 12; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            ok = 0;
        else
            oid.bytes[i] = (uint8_t)(hi << 4 | lo);
    }
    if (!ok) {
        char q[96];
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "ObjectId: %s is not 24 hexadecimal digits",
                        cf_quote(q, sizeof q, hex, len));
    }
    *out = oid;
    return COFFER_OK;
}

COFFER_API void coffer_object_id_to_string(const coffer_object_id *oid, char *buf)
{
    static const char digits[] = "0123456789abcdef";
    if (buf == NULL)
        return;
    if (oid == NULL) {
        buf[0] = '\0';
        return;
    }
    for (size_t i = 0; i < 12; i++) {
        buf[2 * i] = digits[oid->bytes[i] >> 4];
        buf[2 * i + 1] = digits[oid->bytes[i] & 0xF];
    }
    buf[24] = '\0';
}
