/* list_scale — how list operations scale with the list's length: the same
 * operations on a list of 100 links and on one of 100,000 links (both in one
 * object), each write in its own transaction. Prints a table and, with
 * --json FILE, writes the figures. A durable file pays an fsync per commit,
 * which hides the list's own cost, so the run also uses an in-memory
 * database, where the commit is cheap and the structure is what is timed. */
#define _POSIX_C_SOURCE 200809L
#include <coffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const coffer_property_schema item_props[] = {{.name = "n", .type = COFFER_TYPE_INT}};
static const coffer_property_schema holder_props[] = {
    {.name = "items", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Item"},
};
static const coffer_class_schema schema[] = {
    {.name = "Item", .properties = item_props, .property_count = 1},
    {.name = "Holder", .properties = holder_props, .property_count = 1},
};
enum { ITEM = 0, HOLDER = 1 };

static void check(coffer_status st, const char *what)
{
    if (st != COFFER_OK) {
        fprintf(stderr, "list_scale: %s: %s\n", what, coffer_last_error());
        exit(1);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Creates `items` Item objects and a Holder whose list links to all of
 * them, in one transaction; returns the holder's key. */
static coffer_object_key build(coffer_db *db, uint64_t items)
{
    coffer_txn *txn;
    check(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn), "begin");
    coffer_object *holder;
    check(coffer_object_create(txn, HOLDER, NULL, 0, COFFER_UPDATE_ERROR, &holder), "create holder");
    coffer_list *list;
    check(coffer_object_get_list(holder, 0, &list), "open list");
    for (uint64_t i = 0; i < items; i++) {
        coffer_field f = {0, coffer_value_int((int64_t)i)};
        coffer_object *item;
        check(coffer_object_create(txn, ITEM, &f, 1, COFFER_UPDATE_ERROR, &item), "create item");
        coffer_value link = coffer_value_object(item);
        check(coffer_list_append(list, &link), "append");
        coffer_object_release(item);
    }
    coffer_object_key key = coffer_object_key_of(holder);
    check(coffer_txn_commit(txn), "commit");
    coffer_txn_free(txn);
    return key;
}

typedef struct figures {
    double append, get, remove; /* operations per second */
} figures;

static coffer_list *open_list(coffer_txn *txn, coffer_object_key holder)
{
    coffer_object *obj;
    check(coffer_object_get(txn, HOLDER, holder, &obj), "get holder");
    coffer_list *list;
    check(coffer_object_get_list(obj, 0, &list), "open list");
    return list;
}

static figures measure(coffer_db *db, coffer_object_key holder, int writes, int reads)
{
    figures f;
    /* Appending one link per write transaction. */
    double t = now();
    for (int i = 0; i < writes; i++) {
        coffer_txn *txn;
        check(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn), "begin");
        coffer_list *list = open_list(txn, holder);
        coffer_value link = coffer_value_link(ITEM, 1 + (uint64_t)i % 50);
        check(coffer_list_append(list, &link), "append");
        check(coffer_txn_commit(txn), "commit");
        coffer_txn_free(txn);
    }
    f.append = writes / (now() - t);
    /* Reading by random index, in one read transaction. */
    coffer_txn *txn;
    check(coffer_txn_begin(db, COFFER_TXN_READ, &txn), "begin");
    coffer_list *list = open_list(txn, holder);
    uint64_t n;
    check(coffer_list_count(list, &n), "count");
    uint64_t sum = 0;
    t = now();
    for (int i = 0; i < reads; i++) {
        coffer_value v;
        check(coffer_list_get(list, next_random() % n, &v), "get");
        sum += v.u.link.key;
    }
    f.get = reads / (now() - t);
    coffer_txn_free(txn);
    if (sum == 0)
        fprintf(stderr, "list_scale: unexpected empty links\n");
    /* Removing from the middle, one per write transaction. */
    t = now();
    for (int i = 0; i < writes; i++) {
        check(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn), "begin");
        list = open_list(txn, holder);
        check(coffer_list_count(list, &n), "count");
        check(coffer_list_remove(list, n / 2), "remove");
        check(coffer_txn_commit(txn), "commit");
        coffer_txn_free(txn);
    }
    f.remove = writes / (now() - t);
    return f;
}

static coffer_db *open_db(const char *path, const char *memory_id)
{
    coffer_config *config;
    check(coffer_config_new(&config), "config");
    if (memory_id)
        check(coffer_config_set_in_memory_identifier(config, memory_id), "in-memory");
    else
        check(coffer_config_set_path(config, path), "path");
    check(coffer_config_set_schema(config, schema, 2, 0), "schema");
    coffer_db *db;
    check(coffer_open(config, &db), "open");
    coffer_config_free(config);
    return db;
}

int main(int argc, char **argv)
{
    uint64_t big = 100000, small = 100;
    int writes = 1000, reads = 200000;
    const char *json = NULL, *dir = ".";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            big = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--writes") == 0 && i + 1 < argc)
            writes = atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: list_scale [--n N] [--writes W] [--dir DIR] [--json FILE]\n");
            return 2;
        }
    }
    FILE *out = json ? fopen(json, "w") : NULL;
    if (json && !out) {
        perror(json);
        return 1;
    }
    if (out)
        fprintf(out, "{\"list_length_small\": %llu, \"list_length_large\": %llu, \"writes\": %d, \"reads\": %d, \"storage\": {",
                (unsigned long long)small, (unsigned long long)big, writes, reads);
    printf("list operations, ops/s: a list of %llu links against one of %llu (%d writes, one per transaction)\n",
           (unsigned long long)small, (unsigned long long)big, writes);
    printf("%-10s %-22s %14s %14s %10s\n", "storage", "operation", "small list", "large list", "large/small");
    const char *modes[] = {"file", "in-memory"};
    for (int m = 0; m < 2; m++) {
        figures f[2];
        uint64_t lengths[2] = {small, big};
        for (int k = 0; k < 2; k++) {
            char path[4096], ident[64];
            snprintf(path, sizeof path, "%s/list_scale_%d.coffer", dir, k);
            snprintf(ident, sizeof ident, "list-scale-%d-%d", m, (int)getpid());
            if (m == 0) {
                unlink(path);
                char lock[4200];
                snprintf(lock, sizeof lock, "%s-lock", path);
                unlink(lock);
            }
            coffer_db *db = open_db(path, m ? ident : NULL);
            coffer_object_key holder = build(db, lengths[k]);
            f[k] = measure(db, holder, writes, reads);
            coffer_close(db);
            if (m == 0)
                unlink(path);
        }
        const char *names[] = {"append (1 per txn)", "get by index", "remove middle (1/txn)"};
        double small_v[] = {f[0].append, f[0].get, f[0].remove}, big_v[] = {f[1].append, f[1].get, f[1].remove};
        const char *keys[] = {"append", "get", "remove_middle"};
        if (out)
            fprintf(out, "%s\"%s\": {", m ? ", " : "", modes[m]);
        for (int i = 0; i < 3; i++) {
            printf("%-10s %-22s %14.0f %14.0f %10.2f\n", modes[m], names[i], small_v[i], big_v[i], big_v[i] / small_v[i]);
            if (out)
                fprintf(out, "%s\"%s\": {\"small\": %.1f, \"large\": %.1f}", i ? ", " : "", keys[i], small_v[i], big_v[i]);
        }
        if (out)
            fprintf(out, "}");
    }
    if (out) {
        fprintf(out, "}}\n");
        fclose(out);
    }
    return 0;
}
