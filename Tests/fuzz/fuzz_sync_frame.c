/*
 * fuzz_sync_frame.c — libFuzzer target for the sync protocol's decoders
 * (Sources/CCoffer/sync/frames.h). The input is taken as a frame: it either
 * decodes or is refused with COFFER_ERR_CORRUPTED (or, for a huge count, a
 * memory error), never anything else and never a read out of bounds. A
 * frame that decodes is checked through: every changeset's CREATE and
 * UPDATE fields iterate to the end of their bytes. The input is also read
 * as a bare changeset and as a schema, the other two things a peer sends.
 */
#include <stdint.h>
#include <stdlib.h>

#include "coffer.h"
#include "sync/frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_status(coffer_status st)
{
    if (st != COFFER_OK && st != COFFER_ERR_CORRUPTED && st != COFFER_ERR_NO_MEMORY)
        abort();
}

static void walk_changeset(const cf_sync_cs *cs)
{
    for (size_t i = 0; i < cs->nchanges; i++) {
        const cf_sync_change *c = &cs->changes[i];
        if (c->op != CF_OP_CREATE && c->op != CF_OP_UPDATE)
            continue;
        cf_wreader r = cf_wreader_make(c->fields.p, c->fields.n, "fields");
        for (uint64_t k = 0; k < c->nfields; k++) {
            cf_slice name, value;
            if (cf_sync_change_field(&r, &name, &value) != COFFER_OK)
                abort(); /* checked when the frame was decoded */
        }
        if (r.p != r.end)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_frame f;
    coffer_status st = cf_frame_decode(data, size, &f);
    check_status(st);
    if (st == COFFER_OK) {
        if (f.type == CF_FRAME_UPLOAD)
            for (size_t i = 0; i < f.u.upload.count; i++)
                walk_changeset(&f.u.upload.changesets[i]);
        if (f.type == CF_FRAME_DOWNLOAD)
            for (size_t i = 0; i < f.u.download.count; i++)
                walk_changeset(&f.u.download.changesets[i].cs);
        cf_frame_free(&f);
    }
    cf_sync_cs cs;
    st = cf_sync_cs_decode(data, size, &cs);
    check_status(st);
    if (st == COFFER_OK) {
        walk_changeset(&cs);
        cf_sync_cs_free(&cs);
    }
    cf_wreader r = cf_wreader_make(data, size, "schema");
    cf_wire_schema s;
    st = cf_wire_schema_read(&r, &s);
    check_status(st);
    if (st == COFFER_OK)
        cf_wire_schema_free(&s);
    return 0;
}
