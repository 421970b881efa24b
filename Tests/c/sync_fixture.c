/* sync_fixture.c — the sync suites' shared setup (sync_fixture.h). */
#include "sync_fixture.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t sync_fake_now = 1700000000000ull;

static uint64_t read_fake_clock(void *ctx)
{
    (void)ctx;
    return sync_fake_now;
}

void sync_use_fake_clock(void) { coffer_sync_set_clock_source(read_fake_clock, NULL); }

int sync_fixture_setup(sync_fixture *f)
{
    memset(f, 0, sizeof *f);
    return ts_make_temp_dir(f->dir);
}

void sync_fixture_teardown(sync_fixture *f)
{
    ts_remove_tree(f->dir);
    coffer_sync_set_clock_source(NULL, NULL);
}

coffer_config *sync_fixture_config(const sync_fixture *f, const char *name, const coffer_class_schema *classes,
                                   size_t count, const char *url)
{
    char path[TS_PATH_MAX];
    coffer_config *cfg = ts_config_at(ts_join(path, f->dir, name));
    assert_ok(coffer_config_set_schema(cfg, classes, count, 1));
    assert_ok(coffer_config_set_sync(cfg, url, "team-1"));
    assert_ok(coffer_config_set_sync_transport(cfg, &f->transport));
    return cfg;
}

coffer_db *sync_fixture_open(coffer_config *cfg)
{
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    coffer_config_free(cfg);
    return db;
}

coffer_status sync_peer_open(void *ctx, const char *url, void **out)
{
    (void)url;
    sync_peer_conn *c = calloc(1, sizeof *c);
    if (!c)
        return COFFER_ERR_NO_MEMORY;
    c->peer = ctx;
    *out = c;
    return COFFER_OK;
}

void sync_peer_push(sync_peer_conn *c, uint8_t *frame, size_t size)
{
    assert_true(c->count < SYNC_PEER_FRAMES);
    c->frames[c->count] = frame;
    c->sizes[c->count] = size;
    c->count++;
}

coffer_status sync_peer_receive(void *ctx, void *connection, int timeout_ms, const uint8_t **data, size_t *size)
{
    (void)ctx;
    sync_peer_conn *c = connection;
    if (c->next < c->count) {
        free(c->last);
        c->last = c->frames[c->next];
        *data = c->last;
        *size = c->sizes[c->next];
        c->next++;
        return COFFER_OK;
    }
    struct timespec pause = {0, (long)(timeout_ms < 5 ? timeout_ms : 5) * 1000000L};
    nanosleep(&pause, NULL);
    return COFFER_ERR_TIMEOUT;
}

void sync_peer_close(void *ctx, void *connection)
{
    (void)ctx;
    sync_peer_conn *c = connection;
    for (int i = c->next; i < c->count; i++)
        free(c->frames[i]);
    free(c->last);
    free(c);
}
