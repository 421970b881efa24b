/* sync_fixture.c — the sync suites' shared setup (sync_fixture.h). */
#include "sync_fixture.h"

#include <string.h>

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
