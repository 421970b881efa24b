/*
 * test_support.h — shared helpers for Coffer's C test suites (cmocka).
 *
 * - temporary directories (mkdtemp under the working directory, or under
 *   $TMPDIR for fixtures another user must reach) and their removal
 * - a standard schema with every scalar type, required and optional
 * - open helpers for plain, encrypted and in-memory databases (by path,
 *   identifier or test environment) and per-suite setups with own schemas
 * - status assertions that print coffer_last_error() on failure
 * - value helpers that compare values independently of the library
 * - small write/read helpers (Persons, blobs, counts, iteration, index hits)
 * - child processes: a function run in a child, or a fork with two pipes
 */
#ifndef COFFER_TEST_SUPPORT_H
#define COFFER_TEST_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <cmocka.h>

#include "coffer.h"

#include <lmdb.h>

/* ------------------------------------------------------------------------ */
/* Status assertions                                                         */
/* ------------------------------------------------------------------------ */

/* The message of the last status checked by assert_ok/assert_status, copied
 * right after the call (before any other library call can overwrite it). */
const char *ts_saved_error(void);

void ts_check_status(coffer_status got, coffer_status want, const char *expr, const char *file, int line);
void ts_check_status2(coffer_status got, coffer_status want1, coffer_status want2, const char *expr,
                      const char *file, int line);
void ts_check_not_ok(coffer_status got, const char *expr, const char *file, int line);
void ts_check_error_contains(const char *needle, const char *file, int line);

/* assert_ok(coffer_call(...)): fails the test and prints the status and
 * coffer_last_error() unless the call returns COFFER_OK. */
#define assert_ok(expr) ts_check_status((expr), COFFER_OK, #expr, __FILE__, __LINE__)
/* assert_status(coffer_call(...), COFFER_ERR_X) */
#define assert_status(expr, want) ts_check_status((expr), (want), #expr, __FILE__, __LINE__)
/* One of two statuses. */
#define assert_status2(expr, w1, w2) ts_check_status2((expr), (w1), (w2), #expr, __FILE__, __LINE__)
/* Any status but COFFER_OK (and COFFER_DONE). */
#define assert_not_ok(expr) ts_check_not_ok((expr), #expr, __FILE__, __LINE__)
/* The message saved by the last assert_status/assert_ok/... contains `needle`. */
#define assert_error_contains(needle) ts_check_error_contains((needle), __FILE__, __LINE__)

/* ------------------------------------------------------------------------ */
/* Files and directories                                                     */
/* ------------------------------------------------------------------------ */

#define TS_PATH_MAX 4096

/* Creates a unique directory "<cwd>/coffer-test-XXXXXX" (canonical, absolute)
 * into `out` (TS_PATH_MAX bytes). Returns 0 or -1. */
/* The file format new files of this run are written in: the value of
 * COFFER_TEST_STORAGE_FORMAT (CTest's "*.records" entries set 4), else the
 * library's default (5, or 4 in a build with CMake's
 * COFFER_DEFAULT_STORAGE_FORMAT=4). Tests
 * of one format's bytes skip on the other. */
unsigned ts_storage_format(void);

/* Makes every file the suite creates from now on one of `format`, whatever
 * the run asks for: for a suite about one format's bytes (call it first in
 * main). */
void ts_pin_storage_format(unsigned format);

/* The first line of a test that reads or damages file format 4's record
 * bytes: skipped in a run on clusters (test_clusters.c damages those). */
#define TS_RECORDS_ONLY()                                                  \
    do {                                                                   \
        if (ts_storage_format() == 5) {                                    \
            print_message("    skipped: it handles file format 4's records\n"); \
            skip();                                                        \
        }                                                                  \
    } while (0)

int ts_make_temp_dir(char *out);
/* Removes a directory tree (rm -rf). */
void ts_remove_tree(const char *path);
/* Joins dir and name into out (TS_PATH_MAX). Returns out. */
char *ts_join(char *out, const char *dir, const char *name);
int ts_file_exists(const char *path);
/* Size of a file in bytes, or -1. */
long long ts_file_size(const char *path);
/* Reads a whole file (malloc'ed, NUL-terminated beyond `*size`). NULL on error. */
unsigned char *ts_read_file(const char *path, size_t *size);
/* Writes (creates/truncates) a file. Returns 0 or -1. */
int ts_write_file(const char *path, const void *data, size_t size);
/* Copies a file. Returns 0 or -1. */
int ts_copy_file(const char *from, const char *to);
/* Number of directory entries other than "." and "..", or -1. */
int ts_count_dir_entries(const char *dir);
/* Writes an LMDB file of another program at `path` (no subdirectory): one
 * committed pair `key` = `value` in LMDB's main database, with LMDB's
 * `-lock` file left beside it. Asserts. */
void ts_write_foreign_lmdb(const char *path, const char *key, const char *value);

/* Raw LMDB access to a closed database file, for tests that damage or
 * rewrite stored bytes: a write transaction on `path` and sub-database
 * `dbname` ("0", "1", "2", ...), ended (committed or aborted) by
 * ts_raw_end(), which also closes the environment. */
typedef struct ts_raw {
    MDB_env *env;
    MDB_txn *txn;
} ts_raw;
MDB_dbi ts_raw_open(ts_raw *w, const char *path, const char *dbname);
void ts_raw_end(ts_raw *w, int commit);
/* The format number in the header of the closed database file at `path`. */
uint32_t ts_raw_format(const char *path);
/* memmem */
const void *ts_memmem(const void *hay, size_t hay_len, const void *needle, size_t needle_len);

/* ------------------------------------------------------------------------ */
/* Random numbers (deterministic)                                            */
/* ------------------------------------------------------------------------ */

void ts_seed(uint64_t seed);
uint64_t ts_rand(void);
/* Uniform in [0, n). */
uint64_t ts_rand_below(uint64_t n);
void ts_rand_bytes(void *buf, size_t n);

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */
/* ------------------------------------------------------------------------ */

extern const uint8_t ts_key[64];
extern const uint8_t ts_other_key[64];

/* Sample values shared by the value suites: two object ids and two UUIDs. */
extern const uint8_t OID_A[12], OID_B[12];
extern const uint8_t UUID_A[16], UUID_B[16];

/* The decimal128 of a text; fails the test if it does not parse. */
coffer_decimal128 ts_dec(const char *text);

/* The key of a storage mode: ts_key when encrypted, NULL otherwise. */
const uint8_t *ts_mode_key(int mode);

/* ------------------------------------------------------------------------ */
/* The standard schema                                                       */
/* ------------------------------------------------------------------------ */

/* Class "AllTypes": every scalar type, required (0..9) then optional (10..19). */
enum {
    AT_BOOL = 0,
    AT_INT,
    AT_FLOAT,
    AT_DOUBLE,
    AT_STRING,
    AT_BINARY,
    AT_DATE,
    AT_OID,
    AT_UUID,
    AT_DECIMAL,
    AT_OPT_BOOL,
    AT_OPT_INT,
    AT_OPT_FLOAT,
    AT_OPT_DOUBLE,
    AT_OPT_STRING,
    AT_OPT_BINARY,
    AT_OPT_DATE,
    AT_OPT_OID,
    AT_OPT_UUID,
    AT_OPT_DECIMAL,
    AT_COUNT
};

/* Class "Person": id int primary key, name string indexed, age int,
 * nickname string optional. */
enum { PERSON_ID = 0, PERSON_NAME, PERSON_AGE, PERSON_NICKNAME, PERSON_COUNT };

/* Class "Dog" of the kennel suites (the change log, observed collections):
 * id int primary key, name string, age int. */
enum { TS_DOG_ID = 0, TS_DOG_NAME, TS_DOG_AGE, TS_DOG_COUNT };

extern const coffer_property_schema ts_all_types_properties[AT_COUNT];
extern const coffer_property_schema ts_person_properties[PERSON_COUNT];
extern const coffer_property_schema ts_dog_properties[TS_DOG_COUNT];
/* { Dog }: the kennel of the observer suites that need no other class. */
extern const coffer_class_schema ts_dog_kennel[1];
/* { AllTypes, Person } */
extern const coffer_class_schema ts_std_schema[2];
#define TS_STD_SCHEMA_COUNT 2

/* The type of AllTypes property `p`. */
coffer_type ts_all_types_type(coffer_property_id p);

/* ------------------------------------------------------------------------ */
/* Storage modes and the per-test environment                                */
/* ------------------------------------------------------------------------ */

enum ts_mode { TS_PLAIN = 0, TS_ENCRYPTED = 1, TS_MEMORY = 2 };
extern int ts_mode_plain, ts_mode_encrypted, ts_mode_memory;
const char *ts_mode_name(int mode);

typedef struct ts_env {
    int mode;
    char dir[TS_PATH_MAX];   /* unique temporary directory */
    char path[TS_PATH_MAX];  /* dir/test.coffer (files) */
    char ident[256];         /* in-memory identifier (memory mode) */
    char shared_dir[TS_PATH_MAX]; /* made by ts_env_shared_dir, or "" */
    coffer_db *db;           /* opened with the standard schema by ts_setup */
    coffer_class_id all_types;
    coffer_class_id person;
} ts_env;

/* A configuration for env's storage mode: path or identifier, key when
 * encrypted. The caller frees it. Fails the test on error. */
coffer_config *ts_env_config(const ts_env *env);

/* Opens another handle to env's storage with the given schema (NULL/0: none). */
coffer_status ts_env_open(const ts_env *env, const coffer_class_schema *classes, size_t count,
                          uint64_t version, coffer_db **out);

/* Closes env->db (if any) and sets it to NULL. */
void ts_env_close(ts_env *env);

/* Closes env->db (if any) and reopens it with the given schema. Fails the
 * test on error. For memory mode the data is discarded if this was the only
 * handle. */
void ts_env_reopen(ts_env *env, const coffer_class_schema *classes, size_t count, uint64_t version);

/* In memory mode, a second handle on env's storage so that its data survives
 * closing env->db; NULL in the file modes. Close it with coffer_close. */
coffer_db *ts_env_keep(const ts_env *env);

/* A fresh directory (mode 0755) under $TMPDIR, or /tmp, for fixtures that
 * another user must reach: the working tree may sit under a private (0700)
 * home directory. Made on the first call, removed by ts_teardown. */
const char *ts_env_shared_dir(ts_env *env);

/* cmocka fixtures. The prestate is a pointer to an int mode (ts_mode_*).
 * ts_setup creates the directory and opens the standard schema at version 1;
 * ts_setup_empty does not open anything. */
int ts_setup(void **state);
int ts_setup_empty(void **state);
int ts_teardown(void **state);
/* For a suite's own setup: ts_setup_empty, then opens env->db with the
 * given schema at version 1. */
int ts_setup_schema(void **state, const coffer_class_schema *classes, size_t count);

/* Defines a cmocka test whose body receives the per-test environment made
 * by the setup as `env`:  TS_ENV_TEST(test_x) { ... env->db ... }  */
#define TS_ENV_TEST(name)                                    \
    static void name##_body(ts_env *env);                    \
    static void name(void **state) { name##_body(*state); }  \
    static void name##_body(ts_env *env)

/* Looks up the classes names[0..n) into *ids[0..n). Returns 0, or -1 with
 * the library's message printed. */
int ts_find_classes(coffer_db *db, size_t n, const char *const names[], coffer_class_id *const ids[]);
/* ts_setup_schema, then ts_find_classes on env->db: for suites that keep
 * their class ids in variables. */
int ts_setup_schema_classes(void **state, const coffer_class_schema *classes, size_t count, size_t n,
                            const char *const names[], coffer_class_id *const ids[]);

/* A test run on each storage mode, named "name[plain]", ..., with the given
 * setup (ts_setup unless named) and ts_teardown. */
#define TS_TEST_MODE_SETUP(f, setup, modevar, suffix) \
    { #f "[" suffix "]", f, setup, ts_teardown, (void *)&(modevar) }
#define TS_TEST_ALL_MODES_SETUP(f, setup)                           \
    TS_TEST_MODE_SETUP(f, setup, ts_mode_plain, "plain"),         \
    TS_TEST_MODE_SETUP(f, setup, ts_mode_encrypted, "encrypted"), \
    TS_TEST_MODE_SETUP(f, setup, ts_mode_memory, "memory")
#define TS_TEST_FILE_MODES_SETUP(f, setup)                  \
    TS_TEST_MODE_SETUP(f, setup, ts_mode_plain, "plain"), \
    TS_TEST_MODE_SETUP(f, setup, ts_mode_encrypted, "encrypted")
#define TS_TEST_MODE(f, modevar, suffix) TS_TEST_MODE_SETUP(f, ts_setup, modevar, suffix)
#define TS_TEST_ALL_MODES(f) TS_TEST_ALL_MODES_SETUP(f, ts_setup)
#define TS_TEST_FILE_MODES(f) TS_TEST_FILE_MODES_SETUP(f, ts_setup)
/* A test with an empty environment (plain mode directory only). */
#define TS_TEST_EMPTY(f) { #f, f, ts_setup_empty, ts_teardown, (void *)&ts_mode_plain }

/* A new, empty configuration (asserts). Free it. */
coffer_config *ts_config_new(void);
/* A new configuration with only the path set (asserts). Free it. */
coffer_config *ts_config_at(const char *path);

/* ------------------------------------------------------------------------ */
/* Schema checks                                                             */
/* ------------------------------------------------------------------------ */

/* coffer_schema_validate and coffer_config_set_schema both give `want` for
 * the schema, and their messages contain needle1 and needle2 (either may be
 * NULL). Failures are reported at file:line. */
void ts_check_schema_status(const coffer_class_schema *classes, size_t n, coffer_status want, const char *needle1,
                            const char *needle2, const char *file, int line);

/* ------------------------------------------------------------------------ */
/* Opening by path                                                           */
/* ------------------------------------------------------------------------ */

/* Opens `path` with an optional key (NULL for none), read-only or not, and
 * a schema (NULL/0/0: none, the file's own). */
coffer_status ts_open_path(const char *path, const uint8_t *key, int read_only, const coffer_class_schema *classes,
                           size_t count, uint64_t version, coffer_db **out);
/* ts_open_path with the standard schema at version 1, or with none. */
coffer_status ts_open_std(const char *path, const uint8_t *key, int read_only, int with_schema, coffer_db **out);
/* Opens the in-memory storage `ident` with a schema (NULL/0/0: none). */
coffer_status ts_open_memory(const char *ident, const coffer_class_schema *classes, size_t count, uint64_t version,
                             coffer_db **out);

/* Creates (or opens) `path` with the standard schema and adds Persons with
 * ids 0..n-1 named "person <id>" in one write transaction. */
void ts_make_person_file(const char *path, const uint8_t *key, int n);

/* ------------------------------------------------------------------------ */
/* Transactions and objects                                                  */
/* ------------------------------------------------------------------------ */

coffer_txn *ts_begin(coffer_db *db, int mode);            /* asserts */
uint64_t ts_version_of(coffer_db *db);                    /* what a read transaction begun now sees */
void ts_commit(coffer_txn *txn);                           /* commit (asserts) + free */
coffer_class_id ts_class(coffer_db *db, const char *name); /* asserts */
coffer_property_id ts_prop(coffer_db *db, coffer_class_id cls, const char *name); /* asserts */

coffer_value ts_str(const char *text);
coffer_field ts_field(coffer_property_id p, coffer_value v);
uint64_t ts_count(coffer_txn *txn, coffer_class_id cls); /* asserts */
/* The number of objects of the class named `cls` in a new read transaction. */
uint64_t ts_count_of(coffer_db *db, const char *cls);

/* Creates a Person (standard schema) with an id and a name; returns its key. */
coffer_object_key ts_add_person(coffer_txn *txn, coffer_class_id person, int64_t id, const char *name);
/* ts_add_person in a write transaction of its own, committed. */
void ts_commit_person(coffer_db *db, coffer_class_id person, int64_t id, const char *name);

/* Creates an object of class `cls` with `n` fields (COFFER_UPDATE_ERROR) and
 * returns it; fails the test, at the caller's line, unless that succeeds. */
#define ts_create(txn, cls, fields, n) ts_create_at((txn), (cls), (fields), (n), __FILE__, __LINE__)
coffer_object *ts_create_at(coffer_txn *txn, coffer_class_id cls, const coffer_field *fields, size_t n,
                            const char *file, int line);

/* Creates an object of class `cls` with `n` fields in a write transaction of
 * its own, committed; returns its key. */
coffer_object_key ts_commit_object(coffer_db *db, coffer_class_id cls, const coffer_field *fields, size_t n);

/* Creates a Dog (ts_dog_properties) of class `cls` in a write transaction of
 * its own, committed; returns its key. */
coffer_object_key ts_commit_dog(coffer_db *db, coffer_class_id cls, int64_t id, const char *name, int64_t age);

/* Creates an object with a binary value of `size` bytes and AT_INT `tag`
 * (standard schema) in a write transaction of its own, retrying on
 * COFFER_ERR_MAP_FULL (three attempts in all). Returns the status; does not
 * assert, so children may use it. */
coffer_status ts_write_blob(coffer_db *db, coffer_class_id all_types, const void *data, size_t size, int64_t tag);

/* Tagged blobs (standard schema): the value of tag t, `size` bytes, holds t
 * (int64, native order) at both ends and the byte t & 0xff between.
 * ts_write_tagged_blobs creates `count` AllTypes objects tagged first,
 * first+1, ... in one write transaction (`buf` is scratch of `size` bytes),
 * without retrying, and returns its status (children may use it).
 * ts_check_tagged_blobs checks that AllTypes holds exactly the objects tagged
 * 0..n-1 in key order, their sizes and end marks, and every `full`-th value
 * byte by byte. */
coffer_status ts_write_tagged_blobs(coffer_db *db, unsigned char *buf, size_t size, int64_t first, int count);
void ts_check_tagged_blobs(coffer_db *db, int64_t n, size_t size, int full);

/* Reading with type checks (fail the test on error or wrong type). */
int64_t ts_get_int(coffer_object *obj, coffer_property_id p);
bool ts_get_bool(coffer_object *obj, coffer_property_id p);
double ts_get_double(coffer_object *obj, coffer_property_id p);
/* Returns the borrowed string; checks NUL termination. */
const char *ts_get_string(coffer_object *obj, coffer_property_id p, size_t *size);
/* Returns the borrowed bytes of a binary value and their size. */
const void *ts_get_binary(coffer_object *obj, coffer_property_id p, size_t *size);
int ts_get_is_null(coffer_object *obj, coffer_property_id p);

/* Independent value equality: same type and contents; floats compare bit for
 * bit except that every NaN equals every NaN (so -0 and +0 differ). */
int ts_value_equal(const coffer_value *a, const coffer_value *b);
/* A printable description of a value into buf. */
const char *ts_value_describe(const coffer_value *v, char *buf, size_t size);
/* Reads property p and asserts it equals `expected` (ts_value_equal), and
 * that strings are NUL-terminated. */
#define assert_value(obj, p, expected) ts_check_value((obj), (p), (expected), __FILE__, __LINE__)
void ts_check_value(coffer_object *obj, coffer_property_id p, const coffer_value *expected,
                    const char *file, int line);

/* Keys of an iterator's objects, in iteration order. Frees the iterator.
 * Returns the count; *keys is malloc'ed (free it). Fails on errors. */
size_t ts_collect_keys(coffer_iter *iter, coffer_object_key **keys);

/* The next object of an iterator: true with *obj set, false at the end
 * (COFFER_DONE). Fails the test on any other status. */
bool ts_next(coffer_iter *iter, coffer_object **obj);

/* An iterator over the objects of class `cls` (asserts). Free it. */
coffer_iter *ts_iterate(coffer_txn *txn, coffer_class_id cls);

/* The number of objects coffer_index_find finds (asserts it succeeds). */
size_t ts_index_count(coffer_txn *txn, coffer_class_id cls, coffer_property_id p, const coffer_value *v);

/* Runs fn(arg) (which returns a coffer_status or another small number below
 * TS_CHILD_MAX) in a forked child. Children must only use library handles
 * they opened themselves after the fork. Returns fn's value, or fails the
 * test if the child was killed by a signal or exited any other way (for
 * example a sanitizer report, which exits with code 1). */
#define TS_CHILD_MAX 120
int ts_run_in_child(int (*fn)(void *arg), void *arg, const char *what);

/* waitpid, retried on EINTR. Returns 0 or -1. */
int ts_wait_pid(pid_t pid, int *status);

/* A child process with a pipe each way. In either process `send` writes to
 * the other one and `recv` reads from it. */
typedef struct ts_fork {
    pid_t pid;  /* the child's, in the parent; 0 in the child */
    int send;
    int recv;
} ts_fork;

/* Makes the two pipes, flushes stdio and forks. In the child (returns 0)
 * alarm(60) is set and the parent's ends are closed; in the parent (returns
 * the child's pid) the child's ends are. Fails the test if pipe or fork
 * fails. The child must end with _exit and use no cmocka assertions. */
pid_t ts_fork_with_pipes(ts_fork *f);
/* Closes *fd unless it is -1, and sets it to -1. */
void ts_close_fd(int *fd);
/* Closes both ends that are still open. */
void ts_fork_close(ts_fork *f);

/* Reads exactly `n` bytes from `fd`, waiting up to `timeout_ms` for each
 * part. Returns n, 0 at the end of the stream before any byte, or -1 (a
 * timeout, an error, or the end in the middle). */
int ts_recv_bytes(int fd, void *buf, size_t n, int timeout_ms);

/* For a child that reports its commits as int32 values through its pipe:
 * reads reports (waiting up to 30 s for each) until one reaches `target`
 * (`reported` is the value before the first), waits a random moment below
 * `max_pause_us` microseconds, kills the child with SIGKILL, reaps it,
 * reads what it reported before it died (waiting `drain_ms` for each) and
 * closes the pipes. Fails the test unless SIGKILL ended the child. Returns
 * the last value reported; the caller checks it reached `target`. */
int32_t ts_kill_writer(ts_fork *child, int32_t target, int32_t reported, long max_pause_us, int drain_ms);

#endif
