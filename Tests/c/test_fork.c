/* test_fork.c — handles do not cross fork(). A child of a process that has
 * a database open gets storage of its own when it opens the file again (it
 * reads the parent's commits and its own commits reach the parent), the
 * handle it inherited refuses transactions with COFFER_ERR_MISUSE, and
 * closing that handle leaves the parent's reader slots and write lock
 * alone: the parent reads, writes and observes on as before. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Child exit codes, one per step that can go wrong. */
enum { CHILD_OK, CHILD_INHERITED_READ, CHILD_INHERITED_WRITE, CHILD_MESSAGE, CHILD_OPEN, CHILD_COUNT, CHILD_WRITE };

/* In the child: the inherited handle refuses reads and writes and names
 * fork(); the file opened again reads what the parent committed and takes a
 * commit of its own; then the inherited handle is closed. */
static int child_uses_file(void *arg)
{
    ts_env *env = arg;
    coffer_txn *txn = NULL;
    if (coffer_txn_begin(env->db, COFFER_TXN_READ, &txn) != COFFER_ERR_MISUSE)
        return CHILD_INHERITED_READ;
    if (coffer_txn_begin(env->db, COFFER_TXN_WRITE, &txn) != COFFER_ERR_MISUSE)
        return CHILD_INHERITED_WRITE;
    if (!strstr(coffer_last_error(), "fork()"))
        return CHILD_MESSAGE;
    coffer_db *db = NULL;
    if (ts_env_open(env, NULL, 0, 0, &db) != COFFER_OK)
        return CHILD_OPEN;
    if (ts_count_of(db, "Person") != 1)
        return CHILD_COUNT;
    coffer_class_id person = ts_class(db, "Person");
    if (coffer_txn_begin(db, COFFER_TXN_WRITE, &txn) != COFFER_OK)
        return CHILD_WRITE;
    ts_add_person(txn, person, 2, "from the child");
    if (coffer_txn_commit(txn) != COFFER_OK)
        return CHILD_WRITE;
    coffer_txn_free(txn);
    coffer_close(db);
    coffer_close(env->db);
    return CHILD_OK;
}

/* The parent keeps a read transaction open across the fork: the child's
 * close of its inherited copy must not release that reader's slot or the
 * parent's snapshot. */
TS_ENV_TEST(test_child_opens_again)
{
    coffer_class_id person = ts_class(env->db, "Person");
    ts_commit_person(env->db, person, 1, "from the parent");
    coffer_txn *reader = ts_begin(env->db, COFFER_TXN_READ);

    assert_int_equal(ts_run_in_child(child_uses_file, env, "child opening the file again"), CHILD_OK);

    assert_int_equal(ts_count(reader, person), 1);
    coffer_txn_free(reader);
    assert_int_equal(ts_count_of(env->db, "Person"), 2);
    ts_commit_person(env->db, person, 3, "from the parent again");
    assert_int_equal(ts_count_of(env->db, "Person"), 3);
}

/* In the child, opening an in-memory identifier the parent has open gives a
 * new, empty store of the child's own; the parent's data is untouched. */
static int child_opens_memory(void *arg)
{
    ts_env *env = arg;
    coffer_db *db = NULL;
    if (ts_env_open(env, ts_std_schema, TS_STD_SCHEMA_COUNT, 1, &db) != COFFER_OK)
        return CHILD_OPEN;
    if (ts_count_of(db, "Person") != 0)
        return CHILD_COUNT;
    coffer_close(db);
    return CHILD_OK;
}

TS_ENV_TEST(test_child_memory_store_is_its_own)
{
    coffer_class_id person = ts_class(env->db, "Person");
    ts_commit_person(env->db, person, 1, "kept by the parent");
    assert_int_equal(ts_run_in_child(child_opens_memory, env, "child opening the in-memory store"), CHILD_OK);
    assert_int_equal(ts_count_of(env->db, "Person"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_FILE_MODES(test_child_opens_again),
        TS_TEST_MODE(test_child_memory_store_is_its_own, ts_mode_memory, "memory"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
