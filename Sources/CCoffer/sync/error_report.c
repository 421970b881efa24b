/* error_report — the sync error callback (include/coffer.h,
 * coffer_config_set_sync_error_callback). */
#include "sync/error_report.h"

#include <stdlib.h>
#include <string.h>

#include "storage/config.h"
#include "util/error.h"

COFFER_API coffer_status coffer_config_set_sync_error_callback(coffer_config *config, coffer_sync_error_fn fn,
                                                               void *ctx)
{
    CHECK_CONFIG(config, "coffer_config_set_sync_error_callback");
    config->sync_error_fn = fn;
    config->sync_error_ctx = fn ? ctx : NULL;
    return COFFER_OK;
}

/* A primary key's wire value as a coffer_value (a string borrows `v`);
 * 0 when it is not a primary key's type. */
static int decode_pk(cf_slice v, coffer_value *out)
{
    if (v.n < 1)
        return 0;
    cf_wreader r = cf_wreader_make(v.p + 1, v.n - 1, "ERROR frame");
    memset(out, 0, sizeof *out);
    switch (v.p[0]) {
    case CF_SV_INT: {
        int64_t i;
        if (cf_wire_get_zigzag(&r, &i, "the primary key") != COFFER_OK)
            return 0;
        out->type = COFFER_TYPE_INT;
        out->u.integer = i;
        return 1;
    }
    case CF_SV_STRING: {
        cf_slice s;
        if (cf_wire_get_string(&r, &s, "the primary key") != COFFER_OK)
            return 0;
        out->type = COFFER_TYPE_STRING;
        out->u.string = (coffer_bytes){s.n ? (const void *)s.p : "", s.n};
        return 1;
    }
    case CF_SV_OBJECT_ID:
        if (v.n != 1 + sizeof out->u.object_id.bytes)
            return 0;
        out->type = COFFER_TYPE_OBJECT_ID;
        memcpy(out->u.object_id.bytes, v.p + 1, sizeof out->u.object_id.bytes);
        return 1;
    case CF_SV_UUID:
        if (v.n != 1 + sizeof out->u.uuid.bytes)
            return 0;
        out->type = COFFER_TYPE_UUID;
        memcpy(out->u.uuid.bytes, v.p + 1, sizeof out->u.uuid.bytes);
        return 1;
    default:
        return 0;
    }
}

void cf_sync_report_error(coffer_sync_error_fn fn, void *ctx, const cf_frame_error *e)
{
    if (!fn)
        return;
    char *message = cf_slice_strdup(e->message);
    char *class_name = e->class_name.n ? cf_slice_strdup(e->class_name) : NULL;
    coffer_value pk;
    int has_pk = class_name && decode_pk(e->pk, &pk);
    coffer_sync_error_event event = {
        .code = e->code,
        .code_name = cf_sync_error_name(e->code),
        .message = message ? message : "",
        .fatal = e->fatal,
        .class_name = class_name,
        .primary_key = has_pk ? &pk : NULL,
    };
    fn(ctx, &event);
    free(message);
    free(class_name);
}
