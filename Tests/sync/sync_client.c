/* sync_client — a C sync client driven line by line from standard input, for
 * the end-to-end tests against the real service (Tests/sync/). It opens one
 * synced file (class Note: id, text, tags) with the core's built-in ws://
 * transport and answers each command with one line, "ok ..." or
 * "error STATUS MESSAGE":
 *
 *   token TOKEN   (the access token of the next open's HELLOs)
 *   open PATH URL PARTITION    put ID TEXT      del ID
 *   tag ID POS TEXT            untag ID POS     pause | resume
 *   wait_upload MS             wait_download MS
 *   dump      (JSON lines as `coffer-sync dump` prints them, then "ok")
 *   close
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coffer.h"

enum { P_ID = 0, P_TEXT, P_TAGS };

static const coffer_property_schema note_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "tags", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_LIST},
    {.name = "text", .type = COFFER_TYPE_STRING},
};
static const coffer_class_schema schema[] = {{.name = "Note", .properties = note_props, .property_count = 3}};

static coffer_db *db;
static char *token; /* for the next open; NULL: none */

/* Property ids by name: the schema above lists them in name order. */
static coffer_property_id prop(const char *name)
{
    coffer_property_id p = 0;
    coffer_db_find_property(db, 0, name, &p);
    return p;
}

static int fail(coffer_status st)
{
    printf("error %d %s\n", (int)st, coffer_last_error());
    return 1;
}

static void json_string(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* One line per object, by primary key (the service orders by the key's
 * encoding instead: the tests compare the lines as a set). */
static coffer_status dump(void)
{
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_READ, &txn);
    if (st != COFFER_OK)
        return st;
    coffer_iter *it;
    coffer_object *o;
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    if ((st = coffer_class_iterate(txn, 0, &it)) == COFFER_OK) {
        while ((st = coffer_iter_next(it, &o)) == COFFER_OK) {
            coffer_value v;
            if ((st = coffer_object_get_value(o, prop("id"), &v)) != COFFER_OK)
                break;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                ids = realloc(ids, cap * sizeof *ids);
            }
            ids[n++] = v.u.integer;
        }
        if (st == COFFER_DONE)
            st = COFFER_OK;
        coffer_iter_free(it);
    }
    qsort(ids, n, sizeof *ids, cmp_i64);
    for (size_t i = 0; i < n && st == COFFER_OK; i++) {
        coffer_value pk = coffer_value_int(ids[i]), v;
        coffer_list *tags;
        uint64_t count;
        if ((st = coffer_object_find(txn, 0, &pk, &o)) != COFFER_OK ||
            (st = coffer_object_get_list(o, prop("tags"), &tags)) != COFFER_OK)
            break;
        printf("{\"class\":\"Note\",\"pk\":%lld,\"properties\":{\"tags\":[", (long long)ids[i]);
        st = coffer_list_count(tags, &count);
        for (uint64_t k = 0; k < count && st == COFFER_OK; k++) {
            if ((st = coffer_list_get(tags, k, &v)) == COFFER_OK) {
                printf(k ? "," : "");
                json_string((const char *)v.u.string.data, v.u.string.size);
            }
        }
        coffer_list_release(tags);
        if (st == COFFER_OK && (st = coffer_object_get_value(o, prop("text"), &v)) == COFFER_OK) {
            printf("],\"text\":");
            json_string((const char *)v.u.string.data, v.u.string.size);
            printf("}}\n");
        }
    }
    free(ids);
    coffer_txn_free(txn);
    return st;
}

static coffer_status find_note(coffer_txn *txn, int64_t id, coffer_object **o)
{
    coffer_value pk = coffer_value_int(id);
    return coffer_object_find(txn, 0, &pk, o);
}

static int command(char *line)
{
    char *cmd = strtok(line, " \n");
    if (!cmd)
        return 0;
    char *a1 = strtok(NULL, " \n"), *a2 = strtok(NULL, " \n"), *rest = strtok(NULL, "\n");
    coffer_status st = COFFER_OK;
    if (strcmp(cmd, "token") == 0) {
        free(token);
        token = a1 ? strdup(a1) : NULL;
    } else if (strcmp(cmd, "open") == 0) {
        coffer_config *cfg;
        if ((st = coffer_config_new(&cfg)) != COFFER_OK)
            return fail(st);
        if ((st = coffer_config_set_path(cfg, a1)) == COFFER_OK && (st = coffer_config_set_schema(cfg, schema, 1, 1)) == COFFER_OK &&
            (st = coffer_config_set_sync(cfg, a2, rest)) == COFFER_OK && (st = coffer_config_set_sync_token(cfg, token)) == COFFER_OK)
            st = coffer_open(cfg, &db);
        coffer_config_free(cfg);
    } else if (strcmp(cmd, "close") == 0) {
        coffer_close(db);
        db = NULL;
    } else if (strcmp(cmd, "pause") == 0) {
        /* The pause takes effect once the session has closed its connection. */
        st = coffer_sync_pause(db);
        for (int ms = 0; st == COFFER_OK && coffer_sync_state(db) != COFFER_SYNC_PAUSED; ms += 5) {
            if (ms >= 60000) {
                fprintf(stderr, "the session did not pause\n");
                st = COFFER_ERR_TIMEOUT;
                break;
            }
            usleep(5000);
        }
    } else if (strcmp(cmd, "resume") == 0) {
        st = coffer_sync_resume(db);
    } else if (strcmp(cmd, "wait_upload") == 0) {
        st = coffer_sync_wait_for_upload(db, strtoull(a1, NULL, 10));
    } else if (strcmp(cmd, "wait_download") == 0) {
        st = coffer_sync_wait_for_download(db, strtoull(a1, NULL, 10));
    } else if (strcmp(cmd, "dump") == 0) {
        st = dump();
    } else {
        coffer_txn *txn;
        coffer_object *o = NULL;
        int64_t id = a1 ? strtoll(a1, NULL, 10) : 0;
        if ((st = coffer_txn_begin(db, COFFER_TXN_WRITE, &txn)) != COFFER_OK)
            return fail(st);
        if (strcmp(cmd, "put") == 0) {
            const char *text = a2 ? a2 : "";
            coffer_field f[] = {{prop("id"), coffer_value_int(id)},
                                {prop("text"), {.type = COFFER_TYPE_STRING, .u.string = {text, strlen(text)}}}};
            st = coffer_object_create(txn, 0, f, 2, COFFER_UPDATE_MODIFIED, NULL);
        } else if ((st = find_note(txn, id, &o)) == COFFER_ERR_NOT_FOUND) {
            st = COFFER_OK; /* deleted elsewhere meanwhile: nothing to edit */
            o = NULL;
        }
        if (st == COFFER_OK && o && strcmp(cmd, "del") == 0) {
            st = coffer_object_delete(o);
        } else if (st == COFFER_OK && o && (strcmp(cmd, "tag") == 0 || strcmp(cmd, "untag") == 0)) {
            coffer_list *tags;
            uint64_t count, pos = a2 ? strtoull(a2, NULL, 10) : 0;
            if ((st = coffer_object_get_list(o, prop("tags"), &tags)) == COFFER_OK &&
                (st = coffer_list_count(tags, &count)) == COFFER_OK) {
                if (cmd[0] == 't') {
                    const char *text = rest ? rest : "";
                    coffer_value v = {.type = COFFER_TYPE_STRING, .u.string = {text, strlen(text)}};
                    st = coffer_list_insert(tags, pos > count ? count : pos, &v);
                } else if (count) {
                    st = coffer_list_remove(tags, pos % count);
                }
                coffer_list_release(tags);
            }
        }
        st = st == COFFER_OK ? coffer_txn_commit(txn) : (coffer_txn_abort(txn), st);
        coffer_txn_free(txn);
    }
    if (st != COFFER_OK)
        return fail(st);
    printf("ok\n");
    return 0;
}

int main(void)
{
    char line[4096];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin))
        command(line);
    if (db)
        coffer_close(db);
    return 0;
}
