/* test_support.c — shared helpers for Coffer's C tests. */
#define _GNU_SOURCE
#define COFFER_EXPERIMENTAL_API
#include "test_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <lmdb.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The format the run asks for, or 0 when it leaves it to the library. */
static unsigned requested_storage_format(void)
{
    const char *f = getenv("COFFER_TEST_STORAGE_FORMAT");
    return f && *f ? (unsigned)strtoul(f, NULL, 10) : 0;
}

unsigned ts_storage_format(void)
{
    unsigned requested = requested_storage_format();
    return requested ? requested : COFFER_TEST_DEFAULT_STORAGE_FORMAT;
}

void ts_pin_storage_format(unsigned format)
{
    char text[16];
    snprintf(text, sizeof text, "%u", format);
    setenv("COFFER_TEST_STORAGE_FORMAT", text, 1);
}

/* A new configuration, in the file format the run asks for
 * (COFFER_TEST_STORAGE_FORMAT; unset: the library's default). */
static coffer_status new_config(coffer_config **out)
{
    coffer_status st = coffer_config_new(out);
    if (st == COFFER_OK && requested_storage_format())
        st = coffer_config_set_storage_format(*out, requested_storage_format());
    return st;
}

/* ------------------------------------------------------------------------ */
/* Status assertions                                                         */
/* ------------------------------------------------------------------------ */

static char saved_error[2048];

const char *ts_saved_error(void) { return saved_error; }

static void save_error(void)
{
    const char *msg = coffer_last_error();
    snprintf(saved_error, sizeof saved_error, "%s", msg ? msg : "(null)");
}

static const char *status_name(coffer_status s)
{
    switch (s) {
    case COFFER_OK: return "COFFER_OK";
    case COFFER_DONE: return "COFFER_DONE";
    case COFFER_ERR_INVALID_ARGUMENT: return "COFFER_ERR_INVALID_ARGUMENT";
    case COFFER_ERR_NO_MEMORY: return "COFFER_ERR_NO_MEMORY";
    case COFFER_ERR_IO: return "COFFER_ERR_IO";
    case COFFER_ERR_NOT_FOUND: return "COFFER_ERR_NOT_FOUND";
    case COFFER_ERR_MISUSE: return "COFFER_ERR_MISUSE";
    case COFFER_ERR_NOT_IN_WRITE: return "COFFER_ERR_NOT_IN_WRITE";
    case COFFER_ERR_READ_ONLY: return "COFFER_ERR_READ_ONLY";
    case COFFER_ERR_SCHEMA: return "COFFER_ERR_SCHEMA";
    case COFFER_ERR_MIGRATION_REQUIRED: return "COFFER_ERR_MIGRATION_REQUIRED";
    case COFFER_ERR_SCHEMA_VERSION: return "COFFER_ERR_SCHEMA_VERSION";
    case COFFER_ERR_TYPE: return "COFFER_ERR_TYPE";
    case COFFER_ERR_PRIMARY_KEY_EXISTS: return "COFFER_ERR_PRIMARY_KEY_EXISTS";
    case COFFER_ERR_IMMUTABLE: return "COFFER_ERR_IMMUTABLE";
    case COFFER_ERR_MAP_FULL: return "COFFER_ERR_MAP_FULL";
    case COFFER_ERR_FILE_TOO_LARGE: return "COFFER_ERR_FILE_TOO_LARGE";
    case COFFER_ERR_NOT_A_DATABASE: return "COFFER_ERR_NOT_A_DATABASE";
    case COFFER_ERR_FORMAT_VERSION: return "COFFER_ERR_FORMAT_VERSION";
    case COFFER_ERR_CORRUPTED: return "COFFER_ERR_CORRUPTED";
    case COFFER_ERR_INTEGRITY: return "COFFER_ERR_INTEGRITY";
    case COFFER_ERR_KEY_REQUIRED: return "COFFER_ERR_KEY_REQUIRED";
    case COFFER_ERR_WRONG_KEY: return "COFFER_ERR_WRONG_KEY";
    case COFFER_ERR_NOT_ENCRYPTED: return "COFFER_ERR_NOT_ENCRYPTED";
    case COFFER_ERR_LIMIT: return "COFFER_ERR_LIMIT";
    case COFFER_ERR_BUSY: return "COFFER_ERR_BUSY";
    case COFFER_ERR_INTERNAL: return "COFFER_ERR_INTERNAL";
    case COFFER_ERR_QUERY: return "COFFER_ERR_QUERY";
    case COFFER_ERR_INTERRUPTED: return "COFFER_ERR_INTERRUPTED";
    case COFFER_ERR_TIMEOUT: return "COFFER_ERR_TIMEOUT";
    case COFFER_ERR_BUFFER_TOO_SMALL: return "COFFER_ERR_BUFFER_TOO_SMALL";
    case COFFER_ERR_CANCELLED: return "COFFER_ERR_CANCELLED";
    }
    return "unknown status";
}

void ts_check_status(coffer_status got, coffer_status want, const char *expr, const char *file, int line)
{
    save_error();
    if (got != want) {
        print_error("%s:%d: %s\n    returned %s (%d), expected %s (%d)\n    last error: \"%s\"\n", file,
                    line, expr, status_name(got), (int)got, status_name(want), (int)want, saved_error);
        _fail(file, line);
    }
}

void ts_check_status2(coffer_status got, coffer_status want1, coffer_status want2, const char *expr,
                      const char *file, int line)
{
    save_error();
    if (got != want1 && got != want2) {
        print_error("%s:%d: %s\n    returned %s (%d), expected %s or %s\n    last error: \"%s\"\n", file,
                    line, expr, status_name(got), (int)got, status_name(want1), status_name(want2),
                    saved_error);
        _fail(file, line);
    }
}

void ts_check_not_ok(coffer_status got, const char *expr, const char *file, int line)
{
    save_error();
    if (got == COFFER_OK || got == COFFER_DONE) {
        print_error("%s:%d: %s\n    returned %s, expected an error\n", file, line, expr, status_name(got));
        _fail(file, line);
    }
}

void ts_check_error_contains(const char *needle, const char *file, int line)
{
    if (strstr(saved_error, needle) == NULL) {
        print_error("%s:%d: error message \"%s\" does not contain \"%s\"\n", file, line, saved_error, needle);
        _fail(file, line);
    }
}

/* ------------------------------------------------------------------------ */
/* Files and directories                                                     */
/* ------------------------------------------------------------------------ */

int ts_make_temp_dir(char *out)
{
    char cwd[TS_PATH_MAX - 64];
    char tmpl[TS_PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL)
        return -1;
    snprintf(tmpl, sizeof tmpl, "%s/coffer-test-XXXXXX", cwd);
    if (mkdtemp(tmpl) == NULL)
        return -1;
    if (realpath(tmpl, out) == NULL)
        return -1;
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP || flag == FTW_D)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void ts_remove_tree(const char *path)
{
    if (path == NULL || path[0] == '\0')
        return;
    /* make everything writable first, in case a test chmod-ed files */
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *ts_join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, TS_PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < TS_PATH_MAX);
    return out;
}

int ts_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

long long ts_file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (long long)st.st_size;
}

unsigned char *ts_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    if (n < 0) {
        fclose(f);
        return NULL;
    }
    rewind(f);
    unsigned char *buf = malloc((size_t)n + 1);
    if (buf == NULL) {
        fclose(f);
        return NULL;
    }
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = 0;
    *size = got;
    return buf;
}

int ts_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t put = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || put != size)
        return -1;
    return 0;
}

int ts_copy_file(const char *from, const char *to)
{
    size_t size;
    unsigned char *data = ts_read_file(from, &size);
    if (data == NULL)
        return -1;
    int rc = ts_write_file(to, data, size);
    free(data);
    return rc;
}

int ts_count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            print_message("    directory entry: %s\n", e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

MDB_dbi ts_raw_open(ts_raw *w, const char *path, const char *dbname)
{
    assert_int_equal(mdb_env_create(&w->env), 0);
    assert_int_equal(mdb_env_set_maxdbs(w->env, 64), 0);
    assert_int_equal(mdb_env_set_mapsize(w->env, (size_t)1 << 30), 0);
    assert_int_equal(mdb_env_open(w->env, path, MDB_NOSUBDIR, 0644), 0);
    assert_int_equal(mdb_txn_begin(w->env, NULL, 0, &w->txn), 0);
    MDB_dbi dbi;
    assert_int_equal(mdb_dbi_open(w->txn, dbname, 0, &dbi), 0);
    return dbi;
}

void ts_raw_end(ts_raw *w, int commit)
{
    if (commit)
        assert_int_equal(mdb_txn_commit(w->txn), 0);
    else
        mdb_txn_abort(w->txn);
    mdb_env_close(w->env);
}

uint32_t ts_raw_format(const char *path)
{
    ts_raw w;
    MDB_dbi meta = ts_raw_open(&w, path, "0");
    MDB_val k = {6, "header"}, v;
    assert_int_equal(mdb_get(w.txn, meta, &k, &v), 0);
    const uint8_t *h = v.mv_data;
    uint32_t format = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24;
    ts_raw_end(&w, 0);
    return format;
}

void ts_write_foreign_lmdb(const char *path, const char *key, const char *value)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_open(env, path, MDB_NOSUBDIR, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, NULL, 0, &dbi), 0);
    MDB_val k = {strlen(key), (void *)key}, v = {strlen(value), (void *)value};
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

const void *ts_memmem(const void *hay, size_t hay_len, const void *needle, size_t needle_len)
{
    return memmem(hay, hay_len, needle, needle_len);
}

/* ------------------------------------------------------------------------ */
/* Random numbers                                                            */
/* ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

void ts_seed(uint64_t seed) { rng_state = seed ^ 0x9E3779B97F4A7C15ull; }

uint64_t ts_rand(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t ts_rand_below(uint64_t n) { return n == 0 ? 0 : ts_rand() % n; }

void ts_rand_bytes(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n >= 8) {
        uint64_t r = ts_rand();
        memcpy(p, &r, 8);
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t r = ts_rand();
        memcpy(p, &r, n);
    }
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */
/* ------------------------------------------------------------------------ */

const uint8_t ts_key[64] = {
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00,
    0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0,
    0x5a, 0xa5, 0x3c, 0xc3, 0x69, 0x96, 0x0f, 0xf0, 0x12, 0x21, 0x34, 0x43, 0x56, 0x65, 0x78, 0x87,
};

const uint8_t ts_other_key[64] = {
    0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
    0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
    0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87, 0x78, 0x69, 0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f,
    0x87, 0x78, 0x65, 0x56, 0x43, 0x34, 0x21, 0x12, 0xf0, 0x0f, 0x96, 0x69, 0xc3, 0x3c, 0xa5, 0x5a,
};

const uint8_t OID_A[12] = {0x65, 0x4a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71, 0x82, 0x93, 0xa4};
const uint8_t OID_B[12] = {0xff, 0x00, 0xff, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
const uint8_t UUID_A[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                                   0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
const uint8_t UUID_B[16] = {0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88,
                                   0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00};

coffer_decimal128 ts_dec(const char *text)
{
    coffer_decimal128 d = {{0, 0}};
    coffer_status st = coffer_decimal128_from_string(text, &d);
    if (st != COFFER_OK)
        fail_msg("decimal128_from_string(\"%s\") = %d: %s", text, (int)st, coffer_last_error());
    return d;
}

const uint8_t *ts_mode_key(int mode) { return mode == TS_ENCRYPTED ? ts_key : NULL; }

/* ------------------------------------------------------------------------ */
/* The standard schema                                                       */
/* ------------------------------------------------------------------------ */

#define OPT COFFER_PROPERTY_OPTIONAL

const coffer_property_schema ts_all_types_properties[AT_COUNT] = {
    {.name = "boolValue", .type = COFFER_TYPE_BOOL},
    {.name = "intValue", .type = COFFER_TYPE_INT},
    {.name = "floatValue", .type = COFFER_TYPE_FLOAT},
    {.name = "doubleValue", .type = COFFER_TYPE_DOUBLE},
    {.name = "stringValue", .type = COFFER_TYPE_STRING},
    {.name = "binaryValue", .type = COFFER_TYPE_BINARY},
    {.name = "dateValue", .type = COFFER_TYPE_DATE},
    {.name = "objectIdValue", .type = COFFER_TYPE_OBJECT_ID},
    {.name = "uuidValue", .type = COFFER_TYPE_UUID},
    {.name = "decimalValue", .type = COFFER_TYPE_DECIMAL128},
    {.name = "optBoolValue", .type = COFFER_TYPE_BOOL, .flags = OPT},
    {.name = "optIntValue", .type = COFFER_TYPE_INT, .flags = OPT},
    {.name = "optFloatValue", .type = COFFER_TYPE_FLOAT, .flags = OPT},
    {.name = "optDoubleValue", .type = COFFER_TYPE_DOUBLE, .flags = OPT},
    {.name = "optStringValue", .type = COFFER_TYPE_STRING, .flags = OPT},
    {.name = "optBinaryValue", .type = COFFER_TYPE_BINARY, .flags = OPT},
    {.name = "optDateValue", .type = COFFER_TYPE_DATE, .flags = OPT},
    {.name = "optObjectIdValue", .type = COFFER_TYPE_OBJECT_ID, .flags = OPT},
    {.name = "optUuidValue", .type = COFFER_TYPE_UUID, .flags = OPT},
    {.name = "optDecimalValue", .type = COFFER_TYPE_DECIMAL128, .flags = OPT},
};

const coffer_property_schema ts_person_properties[PERSON_COUNT] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "age", .type = COFFER_TYPE_INT},
    {.name = "nickname", .type = COFFER_TYPE_STRING, .flags = OPT},
};

const coffer_property_schema ts_dog_properties[TS_DOG_COUNT] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "age", .type = COFFER_TYPE_INT},
};

const coffer_class_schema ts_dog_kennel[1] = {
    {.name = "Dog", .properties = ts_dog_properties, .property_count = TS_DOG_COUNT},
};

const coffer_class_schema ts_std_schema[2] = {
    {.name = "AllTypes", .properties = ts_all_types_properties, .property_count = AT_COUNT},
    {.name = "Person", .properties = ts_person_properties, .property_count = PERSON_COUNT},
};

coffer_type ts_all_types_type(coffer_property_id p)
{
    return ts_all_types_properties[p % AT_COUNT].type;
}

/* ------------------------------------------------------------------------ */
/* Environments                                                              */
/* ------------------------------------------------------------------------ */

int ts_mode_plain = TS_PLAIN, ts_mode_encrypted = TS_ENCRYPTED, ts_mode_memory = TS_MEMORY;

const char *ts_mode_name(int mode)
{
    switch (mode) {
    case TS_PLAIN: return "plain";
    case TS_ENCRYPTED: return "encrypted";
    case TS_MEMORY: return "memory";
    }
    return "?";
}

static coffer_config *make_config(const ts_env *env)
{
    coffer_config *cfg = NULL;
    if (new_config(&cfg) != COFFER_OK)
        return NULL;
    coffer_status st;
    if (env->mode == TS_MEMORY)
        st = coffer_config_set_in_memory_identifier(cfg, env->ident);
    else
        st = coffer_config_set_path(cfg, env->path);
    if (st == COFFER_OK && env->mode == TS_ENCRYPTED)
        st = coffer_config_set_encryption_key(cfg, ts_key, sizeof ts_key);
    if (st != COFFER_OK) {
        coffer_config_free(cfg);
        return NULL;
    }
    return cfg;
}

coffer_config *ts_env_config(const ts_env *env)
{
    coffer_config *cfg = make_config(env);
    if (cfg == NULL) {
        print_error("ts_env_config: %s\n", coffer_last_error());
        fail();
    }
    return cfg;
}

coffer_status ts_env_open(const ts_env *env, const coffer_class_schema *classes, size_t count,
                          uint64_t version, coffer_db **out)
{
    if (env->mode == TS_MEMORY)
        return ts_open_memory(env->ident, classes, count, version, out);
    return ts_open_path(env->path, ts_mode_key(env->mode), 0, classes, count, version, out);
}

void ts_env_close(ts_env *env)
{
    coffer_close(env->db);
    env->db = NULL;
}

void ts_env_reopen(ts_env *env, const coffer_class_schema *classes, size_t count, uint64_t version)
{
    ts_env_close(env);
    assert_ok(ts_env_open(env, classes, count, version, &env->db));
}

coffer_db *ts_env_keep(const ts_env *env)
{
    coffer_db *keep = NULL;
    if (env->mode == TS_MEMORY)
        assert_ok(ts_env_open(env, NULL, 0, 0, &keep));
    return keep;
}

static int setup_common(void **state, int open_db)
{
    int mode = *state ? *(int *)*state : TS_PLAIN;
    ts_env *env = calloc(1, sizeof *env);
    if (env == NULL)
        return -1;
    env->mode = mode;
    if (ts_make_temp_dir(env->dir) != 0) {
        free(env);
        return -1;
    }
    ts_join(env->path, env->dir, "test.coffer");
    const char *base = strrchr(env->dir, '/');
    snprintf(env->ident, sizeof env->ident, "mem-%.200s", base ? base + 1 : env->dir);
    *state = env;
    coffer_clear_error();
    if (open_db) {
        coffer_status st = ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &env->db);
        if (st != COFFER_OK) {
            print_error("ts_setup: opening the standard schema (%s) failed: %d %s\n", ts_mode_name(mode),
                        (int)st, coffer_last_error());
            return -1;
        }
        if (coffer_db_find_class(env->db, "AllTypes", &env->all_types) != COFFER_OK ||
            coffer_db_find_class(env->db, "Person", &env->person) != COFFER_OK) {
            print_error("ts_setup: classes not found: %s\n", coffer_last_error());
            return -1;
        }
    }
    return 0;
}

const char *ts_env_shared_dir(ts_env *env)
{
    if (env->shared_dir[0] != '\0')
        return env->shared_dir;
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    char tmpl[TS_PATH_MAX];
    int n = snprintf(tmpl, sizeof tmpl, "%s/coffer-shared-XXXXXX", base);
    assert_true(n > 0 && n < (int)sizeof tmpl);
    assert_non_null(mkdtemp(tmpl));
    /* canonical like env->dir; kept before anything can fail, for teardown */
    if (realpath(tmpl, env->shared_dir) == NULL)
        snprintf(env->shared_dir, sizeof env->shared_dir, "%s", tmpl);
    /* mkdtemp makes it 0700: others may enter it */
    assert_int_equal(chmod(env->shared_dir, 0755), 0);
    return env->shared_dir;
}

int ts_setup(void **state) { return setup_common(state, 1); }
int ts_setup_empty(void **state) { return setup_common(state, 0); }

int ts_teardown(void **state)
{
    ts_env *env = *state;
    if (env == NULL)
        return 0;
    ts_env_close(env);
    ts_remove_tree(env->dir);
    if (env->shared_dir[0] != '\0')
        ts_remove_tree(env->shared_dir);
    free(env);
    *state = NULL;
    return 0;
}

int ts_setup_schema(void **state, const coffer_class_schema *classes, size_t count)
{
    if (ts_setup_empty(state) != 0)
        return -1;
    ts_env *env = *state;
    coffer_status st = ts_env_open(env, classes, count, 1, &env->db);
    if (st != COFFER_OK) {
        print_error("ts_setup_schema: %s\n", coffer_last_error());
        return -1;
    }
    return 0;
}

int ts_find_classes(coffer_db *db, size_t n, const char *const names[], coffer_class_id *const ids[])
{
    for (size_t i = 0; i < n; i++) {
        if (coffer_db_find_class(db, names[i], ids[i]) != COFFER_OK) {
            print_error("class lookup of %s failed: %s\n", names[i], coffer_last_error());
            return -1;
        }
    }
    return 0;
}

int ts_setup_schema_classes(void **state, const coffer_class_schema *classes, size_t count, size_t n,
                            const char *const names[], coffer_class_id *const ids[])
{
    if (ts_setup_schema(state, classes, count) != 0)
        return -1;
    ts_env *env = *state;
    return ts_find_classes(env->db, n, names, ids);
}

/* Applies a key (if any), the read-only flag and a schema (if any) to `cfg`,
 * whose path or identifier was just set with status `st`, and opens it.
 * Frees cfg. */
static coffer_status open_configured(coffer_config *cfg, coffer_status st, const uint8_t *key, int read_only,
                                     const coffer_class_schema *classes, size_t count, uint64_t version,
                                     coffer_db **out)
{
    if (st == COFFER_OK && key != NULL)
        st = coffer_config_set_encryption_key(cfg, key, 64);
    if (st == COFFER_OK && read_only)
        st = coffer_config_set_read_only(cfg, 1);
    if (st == COFFER_OK && (classes != NULL || version != 0))
        st = coffer_config_set_schema(cfg, classes, count, version);
    if (st == COFFER_OK)
        st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

coffer_status ts_open_path(const char *path, const uint8_t *key, int read_only, const coffer_class_schema *classes,
                           size_t count, uint64_t version, coffer_db **out)
{
    coffer_config *cfg = NULL;
    coffer_status st = new_config(&cfg);
    if (st != COFFER_OK)
        return st;
    return open_configured(cfg, coffer_config_set_path(cfg, path), key, read_only, classes, count, version, out);
}

coffer_status ts_open_std(const char *path, const uint8_t *key, int read_only, int with_schema, coffer_db **out)
{
    if (with_schema)
        return ts_open_path(path, key, read_only, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, out);
    return ts_open_path(path, key, read_only, NULL, 0, 0, out);
}

coffer_status ts_open_memory(const char *ident, const coffer_class_schema *classes, size_t count, uint64_t version,
                             coffer_db **out)
{
    coffer_config *cfg = NULL;
    coffer_status st = new_config(&cfg);
    if (st != COFFER_OK)
        return st;
    return open_configured(cfg, coffer_config_set_in_memory_identifier(cfg, ident), NULL, 0, classes, count,
                           version, out);
}

void ts_make_person_file(const char *path, const uint8_t *key, int n)
{
    coffer_db *db = NULL;
    assert_ok(ts_open_std(path, key, 0, 1, &db));
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "person %d", i);
        ts_add_person(w, ts_class(db, "Person"), i, name);
    }
    ts_commit(w);
    coffer_close(db);
}

/* ------------------------------------------------------------------------ */
/* Transactions and objects                                                  */
/* ------------------------------------------------------------------------ */

coffer_txn *ts_begin(coffer_db *db, int mode)
{
    coffer_txn *txn = NULL;
    assert_ok(coffer_txn_begin(db, mode, &txn));
    assert_non_null(txn);
    return txn;
}

uint64_t ts_version_of(coffer_db *db)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    uint64_t v;
    assert_ok(coffer_txn_version(txn, &v));
    coffer_txn_free(txn);
    return v;
}

void ts_commit(coffer_txn *txn)
{
    assert_ok(coffer_txn_commit(txn));
    coffer_txn_free(txn);
}

coffer_class_id ts_class(coffer_db *db, const char *name)
{
    coffer_class_id id = 0;
    assert_ok(coffer_db_find_class(db, name, &id));
    return id;
}

coffer_property_id ts_prop(coffer_db *db, coffer_class_id cls, const char *name)
{
    coffer_property_id id = 0;
    assert_ok(coffer_db_find_property(db, cls, name, &id));
    return id;
}

coffer_value ts_str(const char *text)
{
    coffer_value v;
    memset(&v, 0, sizeof v);
    v.type = COFFER_TYPE_STRING;
    v.u.string.data = text;
    v.u.string.size = strlen(text);
    return v;
}

coffer_field ts_field(coffer_property_id p, coffer_value v)
{
    coffer_field f;
    memset(&f, 0, sizeof f);
    f.property = p;
    f.value = v;
    return f;
}

uint64_t ts_count(coffer_txn *txn, coffer_class_id cls)
{
    uint64_t n = UINT64_MAX;
    assert_ok(coffer_class_count(txn, cls, &n));
    return n;
}

uint64_t ts_count_of(coffer_db *db, const char *cls)
{
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    uint64_t n = ts_count(r, ts_class(db, cls));
    coffer_txn_free(r);
    return n;
}

coffer_object_key ts_add_person(coffer_txn *txn, coffer_class_id person, int64_t id, const char *name)
{
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(id)), ts_field(PERSON_NAME, ts_str(name))};
    coffer_object *obj = NULL;
    assert_ok(coffer_object_create(txn, person, f, 2, COFFER_UPDATE_ERROR, &obj));
    return coffer_object_key_of(obj);
}

void ts_commit_person(coffer_db *db, coffer_class_id person, int64_t id, const char *name)
{
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    ts_add_person(w, person, id, name);
    ts_commit(w);
}

coffer_object *ts_create_at(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t n,
                            const char *file, int line)
{
    coffer_object *obj = NULL;
    ts_check_status(coffer_object_create(txn, cls, fields, n, COFFER_UPDATE_ERROR, &obj), COFFER_OK,
                    "coffer_object_create", file, line);
    if (obj == NULL) {
        print_error("%s:%d: coffer_object_create gave no object\n", file, line);
        _fail(file, line);
    }
    return obj;
}

coffer_object_key ts_commit_object(coffer_db *db, coffer_class_id cls, const coffer_field *fields, size_t n)
{
    coffer_txn *w = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object_key key = coffer_object_key_of(ts_create(w, cls, fields, n));
    ts_commit(w);
    return key;
}

coffer_object_key ts_commit_dog(coffer_db *db, coffer_class_id cls, int64_t id, const char *name, int64_t age)
{
    coffer_field f[] = {ts_field(TS_DOG_ID, coffer_value_int(id)), ts_field(TS_DOG_NAME, ts_str(name)),
                        ts_field(TS_DOG_AGE, coffer_value_int(age))};
    return ts_commit_object(db, cls, f, 3);
}

coffer_status ts_write_blob(coffer_db *db, coffer_class_id all_types, const void *data, size_t size, int64_t tag)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        coffer_txn *w = NULL;
        coffer_status st = coffer_txn_begin(db, COFFER_TXN_WRITE, &w);
        if (st != COFFER_OK)
            return st;
        coffer_field f[] = {ts_field(AT_BINARY, coffer_value_binary(data, size)), ts_field(AT_INT, coffer_value_int(tag))};
        st = coffer_object_create(w, all_types, f, 2, COFFER_UPDATE_ERROR, NULL);
        if (st == COFFER_OK) {
            st = coffer_txn_commit(w);
        } else {
            coffer_status ab = coffer_txn_abort(w);
            (void)ab;
        }
        coffer_txn_free(w);
        if (st != COFFER_ERR_MAP_FULL)
            return st;
        print_message("    map full (tag %lld), retrying\n", (long long)tag);
    }
    return COFFER_ERR_MAP_FULL;
}

coffer_status ts_write_tagged_blobs(coffer_db *db, unsigned char *buf, size_t size, int64_t first, int count)
{
    coffer_class_id at;
    coffer_status st = coffer_db_find_class(db, "AllTypes", &at);
    coffer_txn *w = NULL;
    if (st == COFFER_OK)
        st = coffer_txn_begin(db, COFFER_TXN_WRITE, &w);
    for (int i = 0; st == COFFER_OK && i < count; i++) {
        int64_t tag = first + i;
        memset(buf, (int)(tag & 0xff), size);
        memcpy(buf, &tag, sizeof tag);
        memcpy(buf + size - sizeof tag, &tag, sizeof tag);
        coffer_field f[] = {ts_field(AT_BINARY, coffer_value_binary(buf, size)), ts_field(AT_INT, coffer_value_int(tag))};
        st = coffer_object_create(w, at, f, 2, COFFER_UPDATE_ERROR, NULL);
    }
    if (st == COFFER_OK)
        st = coffer_txn_commit(w);
    else if (w)
        coffer_txn_abort(w);
    coffer_txn_free(w);
    return st;
}

void ts_check_tagged_blobs(coffer_db *db, int64_t n, size_t size, int full)
{
    coffer_txn *r = ts_begin(db, COFFER_TXN_READ);
    coffer_class_id at = ts_class(db, "AllTypes");
    assert_int_equal(ts_count(r, at), (uint64_t)n);
    coffer_iter *it = ts_iterate(r, at);
    coffer_object *obj;
    int64_t want = 0;
    while (ts_next(it, &obj)) {
        size_t got;
        const unsigned char *b = ts_get_binary(obj, AT_BINARY, &got);
        int64_t head, tail;
        assert_int_equal(ts_get_int(obj, AT_INT), want);
        assert_int_equal(got, size);
        memcpy(&head, b, sizeof head);
        memcpy(&tail, b + size - sizeof tail, sizeof tail);
        assert_int_equal(head, want);
        assert_int_equal(tail, want);
        if (want % full == 0)
            for (size_t i = sizeof head; i < size - sizeof tail; i++)
                if (b[i] != (unsigned char)(want & 0xff))
                    fail_msg("value %lld differs at byte %zu", (long long)want, i);
        want++;
    }
    assert_int_equal(want, n);
    coffer_iter_free(it);
    coffer_txn_free(r);
}

static void get_typed(coffer_object *obj, coffer_property_id p, coffer_type type, coffer_value *v)
{
    memset(v, 0, sizeof *v);
    assert_ok(coffer_object_get_value(obj, p, v));
    if (v->type != type) {
        print_error("property %u: expected type %d, got %d\n", (unsigned)p, (int)type, (int)v->type);
        fail();
    }
}

int64_t ts_get_int(coffer_object *obj, coffer_property_id p)
{
    coffer_value v;
    get_typed(obj, p, COFFER_TYPE_INT, &v);
    return v.u.integer;
}

bool ts_get_bool(coffer_object *obj, coffer_property_id p)
{
    coffer_value v;
    get_typed(obj, p, COFFER_TYPE_BOOL, &v);
    return v.u.boolean;
}

double ts_get_double(coffer_object *obj, coffer_property_id p)
{
    coffer_value v;
    get_typed(obj, p, COFFER_TYPE_DOUBLE, &v);
    return v.u.double_value;
}

const char *ts_get_string(coffer_object *obj, coffer_property_id p, size_t *size)
{
    coffer_value v;
    get_typed(obj, p, COFFER_TYPE_STRING, &v);
    assert_non_null(v.u.string.data);
    assert_int_equal(((const char *)v.u.string.data)[v.u.string.size], '\0');
    if (size)
        *size = v.u.string.size;
    return v.u.string.data;
}

const void *ts_get_binary(coffer_object *obj, coffer_property_id p, size_t *size)
{
    coffer_value v;
    get_typed(obj, p, COFFER_TYPE_BINARY, &v);
    *size = v.u.binary.size;
    return v.u.binary.data;
}

int ts_get_is_null(coffer_object *obj, coffer_property_id p)
{
    coffer_value v;
    memset(&v, 0xAB, sizeof v);
    assert_ok(coffer_object_get_value(obj, p, &v));
    return v.type == COFFER_TYPE_NULL;
}

static int float_same(float a, float b)
{
    if (isnan(a) && isnan(b))
        return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

static int double_same(double a, double b)
{
    if (isnan(a) && isnan(b))
        return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

int ts_value_equal(const coffer_value *a, const coffer_value *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case COFFER_TYPE_NULL: return 1;
    case COFFER_TYPE_BOOL: return a->u.boolean == b->u.boolean;
    case COFFER_TYPE_INT: return a->u.integer == b->u.integer;
    case COFFER_TYPE_FLOAT: return float_same(a->u.float_value, b->u.float_value);
    case COFFER_TYPE_DOUBLE: return double_same(a->u.double_value, b->u.double_value);
    case COFFER_TYPE_STRING:
    case COFFER_TYPE_BINARY:
        if (a->u.binary.size != b->u.binary.size)
            return 0;
        if (a->u.binary.size == 0)
            return 1;
        if (a->u.binary.data == NULL || b->u.binary.data == NULL)
            return 0;
        return memcmp(a->u.binary.data, b->u.binary.data, a->u.binary.size) == 0;
    case COFFER_TYPE_DATE:
        return a->u.date.seconds == b->u.date.seconds && a->u.date.nanoseconds == b->u.date.nanoseconds;
    case COFFER_TYPE_OBJECT_ID: return memcmp(a->u.object_id.bytes, b->u.object_id.bytes, 12) == 0;
    case COFFER_TYPE_UUID: return memcmp(a->u.uuid.bytes, b->u.uuid.bytes, 16) == 0;
    case COFFER_TYPE_DECIMAL128:
        return a->u.decimal128.w[0] == b->u.decimal128.w[0] && a->u.decimal128.w[1] == b->u.decimal128.w[1];
    case COFFER_TYPE_LINK: return a->u.link.class_id == b->u.link.class_id && a->u.link.key == b->u.link.key;
    case COFFER_TYPE_LIST:
    case COFFER_TYPE_SET: return a->u.list.count == b->u.list.count;
    case COFFER_TYPE_MAP: return a->u.map.count == b->u.map.count;
    default: return 0;
    }
}

const char *ts_value_describe(const coffer_value *v, char *buf, size_t size)
{
    switch (v->type) {
    case COFFER_TYPE_NULL: snprintf(buf, size, "null"); break;
    case COFFER_TYPE_BOOL: snprintf(buf, size, "bool %d", (int)v->u.boolean); break;
    case COFFER_TYPE_INT: snprintf(buf, size, "int %" PRId64, v->u.integer); break;
    case COFFER_TYPE_FLOAT: snprintf(buf, size, "float %.9g", (double)v->u.float_value); break;
    case COFFER_TYPE_DOUBLE: snprintf(buf, size, "double %.17g", v->u.double_value); break;
    case COFFER_TYPE_STRING:
        snprintf(buf, size, "string(%zu) \"%.*s%s\"", v->u.string.size,
                 (int)(v->u.string.size > 40 ? 40 : v->u.string.size),
                 v->u.string.data ? (const char *)v->u.string.data : "", v->u.string.size > 40 ? "..." : "");
        break;
    case COFFER_TYPE_BINARY: snprintf(buf, size, "binary(%zu)", v->u.binary.size); break;
    case COFFER_TYPE_DATE:
        snprintf(buf, size, "date %" PRId64 "s %dns", v->u.date.seconds, (int)v->u.date.nanoseconds);
        break;
    case COFFER_TYPE_OBJECT_ID:
        snprintf(buf, size, "objectId %02x%02x%02x%02x...", v->u.object_id.bytes[0], v->u.object_id.bytes[1],
                 v->u.object_id.bytes[2], v->u.object_id.bytes[3]);
        break;
    case COFFER_TYPE_UUID:
        snprintf(buf, size, "uuid %02x%02x%02x%02x...", v->u.uuid.bytes[0], v->u.uuid.bytes[1], v->u.uuid.bytes[2],
                 v->u.uuid.bytes[3]);
        break;
    case COFFER_TYPE_DECIMAL128:
        snprintf(buf, size, "decimal128 %016" PRIx64 ":%016" PRIx64, v->u.decimal128.w[1], v->u.decimal128.w[0]);
        break;
    default: snprintf(buf, size, "type %d", (int)v->type); break;
    }
    return buf;
}

void ts_check_value(coffer_object *obj, coffer_property_id p, const coffer_value *expected, const char *file,
                    int line)
{
    coffer_value got;
    memset(&got, 0, sizeof got);
    ts_check_status(coffer_object_get_value(obj, p, &got), COFFER_OK, "coffer_object_get_value", file, line);
    if (!ts_value_equal(&got, expected)) {
        char a[160], b[160];
        print_error("%s:%d: property %u: got %s, expected %s\n", file, line, (unsigned)p,
                    ts_value_describe(&got, a, sizeof a), ts_value_describe(expected, b, sizeof b));
        _fail(file, line);
    }
    if (got.type == COFFER_TYPE_STRING) {
        if (got.u.string.data == NULL || ((const char *)got.u.string.data)[got.u.string.size] != '\0') {
            print_error("%s:%d: property %u: string read back is not NUL-terminated\n", file, line, (unsigned)p);
            _fail(file, line);
        }
    }
}

size_t ts_collect_keys(coffer_iter *iter, coffer_object_key **keys)
{
    size_t n = 0, cap = 16;
    coffer_object_key *k = malloc(cap * sizeof *k);
    assert_non_null(k);
    for (;;) {
        coffer_object *obj = NULL;
        coffer_status st = coffer_iter_next(iter, &obj);
        if (st == COFFER_DONE)
            break;
        if (st != COFFER_OK) {
            free(k);
            coffer_iter_free(iter);
        }
        assert_ok(st);
        assert_non_null(obj);
        if (n == cap) {
            cap *= 2;
            k = realloc(k, cap * sizeof *k);
            assert_non_null(k);
        }
        k[n++] = coffer_object_key_of(obj);
    }
    coffer_iter_free(iter);
    *keys = k;
    return n;
}

bool ts_next(coffer_iter *iter, coffer_object **obj)
{
    coffer_status st = coffer_iter_next(iter, obj);
    if (st == COFFER_DONE)
        return false;
    assert_ok(st);
    return true;
}

size_t ts_index_count(coffer_txn *txn, coffer_class_id cls, coffer_property_id p, const coffer_value *v)
{
    coffer_iter *it = NULL;
    assert_ok(coffer_index_find(txn, cls, p, v, &it));
    coffer_object_key *keys = NULL;
    size_t n = ts_collect_keys(it, &keys);
    free(keys);
    return n;
}

#define CHILD_BASE 130

int ts_run_in_child(int (*fn)(void *arg), void *arg, const char *what)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        print_error("%s: fork failed\n", what);
        fail();
    }
    if (pid == 0) {
        alarm(60);
        /* cmocka's handlers would turn a crash into a failed test that goes
         * on running the suite in the child: let it end the child. */
        static const int crashes[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
        for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++)
            signal(crashes[i], SIG_DFL);
        int rc = fn(arg);
        if (rc < 0 || rc >= TS_CHILD_MAX)
            rc = TS_CHILD_MAX;
        _exit(CHILD_BASE + rc);
    }
    int status = 0;
    if (ts_wait_pid(pid, &status) != 0) {
        print_error("%s: waitpid failed\n", what);
        fail();
    }
    if (WIFSIGNALED(status)) {
        print_error("%s: the process crashed with signal %d (%s)\n", what, WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
        fail();
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) < CHILD_BASE) {
        print_error("%s: the process exited with code %d (a sanitizer report?)\n", what,
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        fail();
    }
    return WEXITSTATUS(status) - CHILD_BASE;
}

int ts_wait_pid(pid_t pid, int *status)
{
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return 0;
}

pid_t ts_fork_with_pipes(ts_fork *f)
{
    int to_child[2], to_parent[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(to_parent), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    f->pid = pid;
    if (pid == 0) {
        alarm(60);
        close(to_child[1]);
        close(to_parent[0]);
        f->send = to_parent[1];
        f->recv = to_child[0];
    } else {
        close(to_child[0]);
        close(to_parent[1]);
        f->send = to_child[1];
        f->recv = to_parent[0];
    }
    return pid;
}

void ts_close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

void ts_fork_close(ts_fork *f)
{
    ts_close_fd(&f->send);
    ts_close_fd(&f->recv);
}

int ts_recv_bytes(int fd, void *buf, size_t n, int timeout_ms)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = {fd, POLLIN, 0};
        int rc = poll(&p, 1, timeout_ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return -1;
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return got == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return (int)n;
}

int32_t ts_kill_writer(ts_fork *child, int32_t target, int32_t reported, long max_pause_us, int drain_ms)
{
    int32_t v;
    while (reported < target && ts_recv_bytes(child->recv, &v, sizeof v, 30000) == (int)sizeof v)
        reported = v;
    struct timespec pause = {0, (long)ts_rand_below((uint64_t)max_pause_us) * 1000L};
    nanosleep(&pause, NULL);
    kill(child->pid, SIGKILL);
    int ws = 0;
    assert_int_equal(ts_wait_pid(child->pid, &ws), 0);
    /* what it reported before the kill */
    while (ts_recv_bytes(child->recv, &v, sizeof v, drain_ms) == (int)sizeof v)
        reported = v;
    ts_fork_close(child);
    if (!WIFSIGNALED(ws))
        print_error("the writer exited with %d before it was killed\n", WEXITSTATUS(ws));
    assert_true(WIFSIGNALED(ws));
    assert_int_equal(WTERMSIG(ws), SIGKILL);
    return reported;
}

coffer_config *ts_config_new(void)
{
    coffer_config *cfg = NULL;
    assert_ok(new_config(&cfg));
    return cfg;
}

coffer_config *ts_config_at(const char *path)
{
    coffer_config *cfg = ts_config_new();
    assert_ok(coffer_config_set_path(cfg, path));
    return cfg;
}

/* ------------------------------------------------------------------------ */
/* Schema checks                                                             */
/* ------------------------------------------------------------------------ */

static void check_schema_messages(const char *needle1, const char *needle2, const char *file, int line)
{
    if (needle1)
        ts_check_error_contains(needle1, file, line);
    if (needle2)
        ts_check_error_contains(needle2, file, line);
}

void ts_check_schema_status(const coffer_class_schema *classes, size_t n, coffer_status want, const char *needle1,
                            const char *needle2, const char *file, int line)
{
    ts_check_status(coffer_schema_validate(classes, n), want, "coffer_schema_validate", file, line);
    check_schema_messages(needle1, needle2, file, line);
    coffer_config *cfg = NULL;
    ts_check_status(coffer_config_new(&cfg), COFFER_OK, "coffer_config_new", file, line);
    ts_check_status(coffer_config_set_schema(cfg, classes, n, 1), want, "coffer_config_set_schema", file, line);
    check_schema_messages(needle1, needle2, file, line);
    coffer_config_free(cfg);
}

coffer_iter *ts_iterate(coffer_txn *txn, coffer_class_id cls)
{
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(txn, cls, &it));
    return it;
}
