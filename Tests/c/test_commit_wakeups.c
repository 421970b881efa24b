/* test_commit_wakeups.c — a commit wakes the sleepers on the note file's
 * counter only when there are any: commits of a file nobody observes make
 * no futex call; with an observer's notifier asleep on it, commits wake it
 * and its callbacks come; once that handle closed, commits make none again.
 * The library's futex calls are seen by wrapping syscall() in this
 * executable (the static library linked into it calls this one). */
#define _GNU_SOURCE
#include "test_support.h"

#include <dlfcn.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int wakes;

long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_futex && (a[1] & FUTEX_CMD_MASK) == FUTEX_WAKE)
        atomic_fetch_add(&wakes, 1);
    long (*real)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static coffer_db *open_at(const char *path)
{
    coffer_config *c = ts_config_at(path);
    assert_ok(coffer_config_set_schema(c, ts_std_schema, TS_STD_SCHEMA_COUNT, 1));
    coffer_db *db = NULL;
    assert_ok(coffer_open(c, &db));
    coffer_config_free(c);
    return db;
}

static void add_person(coffer_db *db, int64_t id)
{
    coffer_class_id person;
    assert_ok(coffer_db_find_class(db, "Person", &person));
    coffer_txn *txn = NULL;
    assert_ok(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn));
    coffer_field f[] = {ts_field(PERSON_ID, coffer_value_int(id)), ts_field(PERSON_NAME, ts_str("p"))};
    coffer_object *obj = NULL;
    assert_ok(coffer_object_create(txn, person, f, 2, COFFER_UPDATE_ERROR, &obj));
    coffer_object_release(obj);
    assert_ok(coffer_txn_commit(txn));
    coffer_txn_free(txn);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static atomic_ullong seen_version;

static void on_refresh(void *ctx, coffer_txn *txn, uint64_t old_version, uint64_t new_version)
{
    (void)ctx, (void)txn, (void)old_version;
    atomic_store(&seen_version, new_version);
}

static uint64_t version_of(coffer_db *db)
{
    coffer_txn *txn = NULL;
    uint64_t v = 0;
    assert_ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn));
    assert_ok(coffer_txn_version(txn, &v));
    coffer_txn_free(txn);
    return v;
}

static void wakes_only_sleepers(void **state)
{
    ts_env *f = *state;
    coffer_db *writer = open_at(f->path);

    /* Nobody observes: no wake-up. */
    atomic_store(&wakes, 0);
    for (int64_t id = 1; id <= 30; id++)
        add_person(writer, id);
    assert_int_equal(atomic_load(&wakes), 0);

    /* A second handle observes; its notifier sleeps on the counter between
     * commits, which wake it: each commit is told well before the
     * notifier's own timeout would have it look. */
    coffer_db *observer = open_at(f->path);
    coffer_token *token = NULL;
    atomic_store(&seen_version, 0);
    assert_ok(coffer_db_observe(observer, on_refresh, NULL, &token));
    sleep_ms(300); /* the notifier started and fell asleep */
    atomic_store(&wakes, 0);
    for (int64_t id = 31; id <= 35; id++) {
        add_person(writer, id);
        uint64_t want = version_of(writer);
        for (int waited = 0; atomic_load(&seen_version) < want; waited += 5) {
            if (waited > 10000)
                fail_msg("the commit of version %llu was not observed in 10 s", (unsigned long long)want);
            sleep_ms(5);
        }
        sleep_ms(50); /* asleep again */
    }
    assert_true(atomic_load(&wakes) >= 1);
    coffer_token_stop(token);
    coffer_close(observer);

    /* The observer's handle closed, its notifier gone: no wake-up again. */
    atomic_store(&wakes, 0);
    for (int64_t id = 36; id <= 60; id++)
        add_person(writer, id);
    assert_int_equal(atomic_load(&wakes), 0);
    coffer_close(writer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_EMPTY(wakes_only_sleepers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
