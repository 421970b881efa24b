/* frames — encoding and decoding of the sync protocol's frames, changesets
 * and schemas (docs/SYNC.md). Decoding checks everything (counts against
 * the bytes that remain, every value's structure, no trailing bytes) before
 * a caller sees the frame, so a truncated or hostile frame is an error that
 * names what was wrong, never a read out of bounds. */
#include "sync/frames.h"

#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "util/error.h"

int cf_stamp_cmp(const cf_stamp *a, const cf_stamp *b)
{
    if (a->clock != b->clock)
        return a->clock < b->clock ? -1 : 1;
    return memcmp(a->client, b->client, CF_SYNC_ID_SIZE);
}

int cf_elem_id_cmp(const cf_elem_id *a, const cf_elem_id *b)
{
    if (a->clock != b->clock)
        return a->clock < b->clock ? -1 : 1;
    int c = memcmp(a->client, b->client, CF_SYNC_ID_SIZE);
    if (c)
        return c;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* ------------------------------------------------------------------------ */
/* Changesets                                                                */
/* ------------------------------------------------------------------------ */

static coffer_status read_elem_id(cf_wreader *r, cf_elem_id *id, const char *what)
{
    const uint8_t *client;
    coffer_status st = cf_wire_get_u64le(r, &id->clock, what);
    if (st == COFFER_OK)
        st = cf_wire_get_raw(r, CF_SYNC_ID_SIZE, &client, what);
    if (st == COFFER_OK) {
        memcpy(id->client, client, CF_SYNC_ID_SIZE);
        st = cf_wire_get_varint(r, &id->seq, what);
    }
    return st;
}

static coffer_status read_fields(cf_wreader *r, cf_sync_change *c)
{
    coffer_status st = cf_wire_get_count(r, &c->nfields, 2, "a property count");
    const uint8_t *start = r->p;
    for (uint64_t i = 0; st == COFFER_OK && i < c->nfields; i++) {
        cf_slice name, value;
        st = cf_wire_get_string(r, &name, "a property name");
        if (st == COFFER_OK)
            st = cf_wire_get_value(r, &value, "a property value");
    }
    c->fields = (cf_slice){start, (size_t)(r->p - start)};
    return st;
}

static coffer_status read_change(cf_wreader *r, cf_sync_change *c)
{
    memset(c, 0, sizeof *c);
    coffer_status st = cf_wire_get_u8(r, &c->op, "a change's op");
    if (st != COFFER_OK)
        return st;
    if (c->op < CF_OP_CREATE || c->op > CF_OP_EVICT) {
        r->p--;
        return cf_wire_bad(r, "unknown change op %u", c->op);
    }
    if ((st = cf_wire_get_string(r, &c->cls, "a change's class")) != COFFER_OK ||
        (st = cf_wire_get_value(r, &c->pk, "a change's primary key")) != COFFER_OK)
        return st;
    switch (c->op) {
    case CF_OP_CREATE:
    case CF_OP_UPDATE:
        return read_fields(r, c);
    case CF_OP_DELETE:
    case CF_OP_EVICT:
        return COFFER_OK;
    default:
        break;
    }
    if ((st = cf_wire_get_string(r, &c->prop, "a change's property")) != COFFER_OK)
        return st;
    switch (c->op) {
    case CF_OP_LIST_INSERT: {
        uint8_t anchored;
        if ((st = read_elem_id(r, &c->elem, "a list element id")) != COFFER_OK ||
            (st = cf_wire_get_u8(r, &anchored, "a list insert's anchor")) != COFFER_OK)
            return st;
        if (anchored > 1)
            return cf_wire_bad(r, "a list insert's anchor flag is %u (0 or 1)", anchored);
        c->has_anchor = anchored;
        if (anchored && (st = read_elem_id(r, &c->anchor, "a list insert's anchor")) != COFFER_OK)
            return st;
        return cf_wire_get_value(r, &c->value, "a list element's value");
    }
    case CF_OP_LIST_ERASE:
        return read_elem_id(r, &c->elem, "a list element id");
    case CF_OP_LIST_SET:
        if ((st = read_elem_id(r, &c->elem, "a list element id")) != COFFER_OK)
            return st;
        return cf_wire_get_value(r, &c->value, "a list element's value");
    case CF_OP_SET_ADD:
    case CF_OP_SET_REMOVE:
        return cf_wire_get_value(r, &c->value, "a set element");
    case CF_OP_MAP_PUT:
        if ((st = cf_wire_get_string(r, &c->key, "a map key")) != COFFER_OK)
            return st;
        return cf_wire_get_value(r, &c->value, "a map value");
    default: /* CF_OP_MAP_REMOVE */
        return cf_wire_get_string(r, &c->key, "a map key");
    }
}

coffer_status cf_sync_cs_read(cf_wreader *r, cf_sync_cs *out)
{
    memset(out, 0, sizeof *out);
    uint64_t n;
    coffer_status st = cf_wire_get_varint(r, &out->version, "a changeset's version");
    if (st == COFFER_OK)
        st = cf_wire_get_u64le(r, &out->clock, "a changeset's clock");
    /* The smallest change: op, empty class, null key. */
    if (st == COFFER_OK)
        st = cf_wire_get_count(r, &n, 3, "a changeset's change count");
    if (st != COFFER_OK)
        return st;
    out->changes = calloc(n ? (size_t)n : 1, sizeof *out->changes);
    if (!out->changes)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory decoding a changeset of %llu changes", (unsigned long long)n);
    out->nchanges = (size_t)n;
    for (size_t i = 0; i < out->nchanges; i++)
        if ((st = read_change(r, &out->changes[i])) != COFFER_OK) {
            cf_sync_cs_free(out);
            return st;
        }
    return COFFER_OK;
}

coffer_status cf_sync_cs_decode(const uint8_t *p, size_t n, cf_sync_cs *out)
{
    cf_wreader r = cf_wreader_make(p, n, "changeset");
    coffer_status st = cf_sync_cs_read(&r, out);
    if (st == COFFER_OK && r.p != r.end) {
        st = cf_wire_bad(&r, "%zu bytes after the changeset", cf_wreader_left(&r));
        cf_sync_cs_free(out);
    }
    return st;
}

void cf_sync_cs_free(cf_sync_cs *cs)
{
    if (!cs)
        return;
    free(cs->changes);
    memset(cs, 0, sizeof *cs);
}

coffer_status cf_sync_change_field(cf_wreader *r, cf_slice *name, cf_slice *value)
{
    coffer_status st = cf_wire_get_string(r, name, "a property name");
    return st == COFFER_OK ? cf_wire_get_value(r, value, "a property value") : st;
}

void cf_cs_begin_change(cf_sync_cs_builder *b, uint8_t op, const char *cls, cf_slice pk)
{
    cf_wire_u8(&b->body, op);
    cf_wire_string(&b->body, cls, strlen(cls));
    cf_buf_put(&b->body, pk.p, pk.n);
    b->count++;
}

void cf_cs_elem_id(cf_buf *b, const cf_elem_id *id)
{
    cf_wire_u64le(b, id->clock);
    cf_buf_put(b, id->client, CF_SYNC_ID_SIZE);
    cf_wire_varint(b, id->seq);
}

coffer_status cf_sync_cs_finish(cf_sync_cs_builder *b, cf_buf *out)
{
    cf_wire_varint(out, b->version);
    cf_wire_u64le(out, b->clock);
    cf_wire_varint(out, b->count);
    cf_buf_put(out, b->body.p, b->body.len);
    if (out->failed || b->body.failed)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory encoding a changeset of %llu changes",
                        (unsigned long long)b->count);
    return COFFER_OK;
}

void cf_sync_cs_builder_free(cf_sync_cs_builder *b)
{
    free(b->body.p);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------------------ */
/* Schema                                                                    */
/* ------------------------------------------------------------------------ */

void cf_wire_schema_free(cf_wire_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nclasses; i++)
        free(s->classes[i].props);
    free(s->classes);
    memset(s, 0, sizeof *s);
}

coffer_status cf_wire_schema_read(cf_wreader *r, cf_wire_schema *out)
{
    memset(out, 0, sizeof *out);
    uint64_t n;
    /* A class: name, flags, primary key, property count: 4 bytes at least. */
    coffer_status st = cf_wire_get_count(r, &n, 4, "the schema's class count");
    if (st != COFFER_OK)
        return st;
    out->classes = calloc(n ? (size_t)n : 1, sizeof *out->classes);
    if (!out->classes)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory decoding a schema");
    for (size_t i = 0; i < n && st == COFFER_OK; i++) {
        cf_wire_class *c = &out->classes[i];
        out->nclasses = i + 1;
        uint64_t np;
        if ((st = cf_wire_get_string(r, &c->name, "a class name")) != COFFER_OK ||
            (st = cf_wire_get_u8(r, &c->flags, "a class's flags")) != COFFER_OK ||
            (st = cf_wire_get_string(r, &c->pk, "a class's primary key")) != COFFER_OK ||
            (st = cf_wire_get_count(r, &np, 4, "a class's property count")) != COFFER_OK)
            break;
        if (c->flags > 1) {
            st = cf_wire_bad(r, "class flags %u (0 or 1)", c->flags);
            break;
        }
        c->props = calloc(np ? (size_t)np : 1, sizeof *c->props);
        if (!c->props) {
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory decoding a schema");
            break;
        }
        c->nprops = (size_t)np;
        for (size_t k = 0; k < c->nprops && st == COFFER_OK; k++) {
            cf_wire_prop *p = &c->props[k];
            if ((st = cf_wire_get_string(r, &p->name, "a property name")) != COFFER_OK ||
                (st = cf_wire_get_varint(r, &p->type, "a property type")) != COFFER_OK ||
                (st = cf_wire_get_u8(r, &p->flags, "a property's flags")) != COFFER_OK ||
                (st = cf_wire_get_string(r, &p->target, "a link target")) != COFFER_OK)
                break;
            if (p->type > COFFER_TYPE_LINKING_OBJECTS)
                st = cf_wire_bad(r, "property type %llu", (unsigned long long)p->type);
            else if (p->flags > 31)
                st = cf_wire_bad(r, "property flags %u", p->flags);
        }
    }
    if (st != COFFER_OK)
        cf_wire_schema_free(out);
    return st;
}

void cf_wire_schema_encode(const cf_schema *s, cf_buf *b)
{
    cf_wire_varint(b, s->nclasses);
    for (size_t i = 0; i < s->nclasses; i++) {
        const cf_class *c = &s->classes[i];
        cf_wire_string(b, c->name, strlen(c->name));
        cf_wire_u8(b, cf_class_embedded(c) ? 1 : 0);
        const char *pk = c->pk >= 0 ? c->props[c->pk].name : "";
        cf_wire_string(b, pk, strlen(pk));
        uint64_t n = 0;
        for (size_t k = 0; k < c->nprops; k++)
            n += c->props[k].type != COFFER_TYPE_LINKING_OBJECTS;
        cf_wire_varint(b, n);
        for (size_t k = 0; k < c->nprops; k++) {
            const cf_prop *p = &c->props[k];
            if (p->type == COFFER_TYPE_LINKING_OBJECTS)
                continue;
            uint8_t flags = (cf_prop_optional(p) ? CF_SCHEMA_OPTIONAL : 0) |
                            (p->collection == COFFER_COLLECTION_LIST ? CF_SCHEMA_LIST : 0) |
                            (p->collection == COFFER_COLLECTION_SET ? CF_SCHEMA_SET : 0) |
                            (p->collection == COFFER_COLLECTION_MAP ? CF_SCHEMA_MAP : 0) |
                            ((p->flags & COFFER_PROPERTY_INDEXED) ? CF_SCHEMA_INDEXED : 0);
            cf_wire_string(b, p->name, strlen(p->name));
            cf_wire_varint(b, (uint64_t)p->type);
            cf_wire_u8(b, flags);
            const char *target = p->type == COFFER_TYPE_LINK && p->object_class ? p->object_class : "";
            cf_wire_string(b, target, strlen(target));
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                    */
/* ------------------------------------------------------------------------ */

static const char *const frame_names[] = {"frame", "HELLO frame", "WELCOME frame", "UPLOAD frame", "UPLOAD_ACK frame",
                                          "DOWNLOAD frame", "DOWNLOAD_ACK frame", "ERROR frame", "SUBSCRIBE frame",
                                          "SUBSCRIPTION_COMPLETE frame", "PROGRESS frame"};

static coffer_status decode_body(cf_wreader *r, cf_frame *f)
{
    coffer_status st;
    uint64_t n;
    switch (f->type) {
    case CF_FRAME_HELLO: {
        cf_frame_hello *h = &f->u.hello;
        const uint8_t *client;
        if ((st = cf_wire_get_varint(r, &h->protocol, "the protocol version")) != COFFER_OK ||
            (st = cf_wire_get_raw(r, CF_SYNC_ID_SIZE, &client, "the client id")) != COFFER_OK ||
            (st = cf_wire_get_string(r, &h->partition, "the partition")) != COFFER_OK ||
            (st = cf_wire_get_string(r, &h->token, "the token")) != COFFER_OK ||
            (st = cf_wire_get_varint(r, &h->last_server_version, "the last server version")) != COFFER_OK)
            return st;
        memcpy(h->client, client, CF_SYNC_ID_SIZE);
        const uint8_t *start = r->p;
        cf_wire_schema s;
        if ((st = cf_wire_schema_read(r, &s)) != COFFER_OK)
            return st;
        cf_wire_schema_free(&s);
        h->schema = (cf_slice){start, (size_t)(r->p - start)};
        return COFFER_OK;
    }
    case CF_FRAME_WELCOME:
        if ((st = cf_wire_get_varint(r, &f->u.welcome.protocol, "the protocol version")) != COFFER_OK ||
            (st = cf_wire_get_varint(r, &f->u.welcome.last_client_version, "the last client version")) != COFFER_OK)
            return st;
        return cf_wire_get_varint(r, &f->u.welcome.latest_server_version, "the latest server version");
    case CF_FRAME_UPLOAD:
        /* A changeset: version, clock, count: 10 bytes at least. */
        if ((st = cf_wire_get_count(r, &n, 10, "the changeset count")) != COFFER_OK)
            return st;
        f->u.upload.changesets = calloc(n ? (size_t)n : 1, sizeof *f->u.upload.changesets);
        if (!f->u.upload.changesets)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory decoding an UPLOAD frame");
        for (size_t i = 0; i < n; i++) {
            if ((st = cf_sync_cs_read(r, &f->u.upload.changesets[i])) != COFFER_OK)
                return st;
            f->u.upload.count = i + 1;
        }
        return COFFER_OK;
    case CF_FRAME_UPLOAD_ACK:
        if ((st = cf_wire_get_varint(r, &f->u.upload_ack.last_client_version, "the last client version")) != COFFER_OK)
            return st;
        return cf_wire_get_varint(r, &f->u.upload_ack.server_version, "the server version");
    case CF_FRAME_DOWNLOAD: {
        cf_frame_download *d = &f->u.download;
        if ((st = cf_wire_get_varint(r, &d->latest_server_version, "the latest server version")) != COFFER_OK ||
            (st = cf_wire_get_count(r, &n, 1 + CF_SYNC_ID_SIZE + 10, "the changeset count")) != COFFER_OK)
            return st;
        d->changesets = calloc(n ? (size_t)n : 1, sizeof *d->changesets);
        if (!d->changesets)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory decoding a DOWNLOAD frame");
        for (size_t i = 0; i < n; i++) {
            cf_server_changeset *s = &d->changesets[i];
            const uint8_t *origin;
            if ((st = cf_wire_get_varint(r, &s->server_version, "a server version")) != COFFER_OK ||
                (st = cf_wire_get_raw(r, CF_SYNC_ID_SIZE, &origin, "an origin client id")) != COFFER_OK)
                return st;
            memcpy(s->origin, origin, CF_SYNC_ID_SIZE);
            const uint8_t *cs_start = r->p;
            if ((st = cf_sync_cs_read(r, &s->cs)) != COFFER_OK)
                return st;
            s->len = (size_t)(r->p - cs_start);
            d->count = i + 1;
            if (i > 0 && s->server_version <= d->changesets[i - 1].server_version)
                return cf_wire_bad(r, "server version %llu after %llu: versions must increase",
                                   (unsigned long long)s->server_version,
                                   (unsigned long long)d->changesets[i - 1].server_version);
        }
        return COFFER_OK;
    }
    case CF_FRAME_DOWNLOAD_ACK:
        return cf_wire_get_varint(r, &f->u.download_ack, "the last server version");
    case CF_FRAME_ERROR: {
        uint8_t fatal;
        if ((st = cf_wire_get_varint(r, &f->u.error.code, "the error code")) != COFFER_OK ||
            (st = cf_wire_get_bytes(r, &f->u.error.message, "the error message")) != COFFER_OK ||
            (st = cf_wire_get_u8(r, &fatal, "the fatal flag")) != COFFER_OK)
            return st;
        if (fatal > 1)
            return cf_wire_bad(r, "fatal flag %u (0 or 1)", fatal);
        f->u.error.fatal = fatal;
        if (f->u.error.code == CF_SYNC_ERR_COMPENSATING_WRITE &&
            ((st = cf_wire_get_string(r, &f->u.error.class_name, "the refused object's class")) != COFFER_OK ||
             (st = cf_wire_get_value(r, &f->u.error.pk, "the refused object's primary key")) != COFFER_OK))
            return st;
        if (f->u.error.code == CF_SYNC_ERR_SUBSCRIPTION) {
            if (fatal)
                return cf_wire_bad(r, "a SUBSCRIPTION error is never fatal");
            return cf_wire_get_varint(r, &f->u.error.set_version, "the subscription set version");
        }
        return COFFER_OK;
    }
    case CF_FRAME_SUBSCRIPTION_COMPLETE:
        if ((st = cf_wire_get_varint(r, &f->u.subscription_complete.set_version, "the subscription set version")) !=
            COFFER_OK)
            return st;
        return cf_wire_get_varint(r, &f->u.subscription_complete.server_version, "the server version");
    case CF_FRAME_PROGRESS:
        return cf_wire_get_varint(r, &f->u.progress, "the downloadable bytes");
    default:
        return cf_wire_bad(r, "unknown frame type %u", f->type);
    }
}

coffer_status cf_frame_decode(const uint8_t *data, size_t n, cf_frame *out)
{
    memset(out, 0, sizeof *out);
    cf_wreader r = cf_wreader_make(data, n, "frame");
    coffer_status st = cf_wire_get_u8(&r, &out->type, "the frame type");
    if (st != COFFER_OK)
        return st;
    if (out->type >= CF_FRAME_HELLO && out->type <= CF_FRAME_PROGRESS)
        r.frame = frame_names[out->type];
    st = decode_body(&r, out);
    if (st == COFFER_OK && r.p != r.end)
        st = cf_wire_bad(&r, "%zu bytes after the end of the frame", cf_wreader_left(&r));
    if (st != COFFER_OK)
        cf_frame_free(out);
    return st;
}

void cf_frame_free(cf_frame *f)
{
    if (!f)
        return;
    if (f->type == CF_FRAME_UPLOAD) {
        for (size_t i = 0; i < f->u.upload.count; i++)
            cf_sync_cs_free(&f->u.upload.changesets[i]);
        free(f->u.upload.changesets);
    } else if (f->type == CF_FRAME_DOWNLOAD) {
        for (size_t i = 0; i < f->u.download.count; i++)
            cf_sync_cs_free(&f->u.download.changesets[i].cs);
        free(f->u.download.changesets);
    }
    memset(f, 0, sizeof *f);
}

void cf_frame_hello_encode(cf_buf *b, const uint8_t client[CF_SYNC_ID_SIZE], const char *partition, const char *token,
                           uint64_t last_server_version, const uint8_t *schema, size_t schema_len)
{
    cf_frame_hello_encode_version(b, CF_SYNC_PROTOCOL, client, partition, token, last_server_version, schema,
                                  schema_len);
}

void cf_frame_hello_encode_version(cf_buf *b, uint64_t protocol, const uint8_t client[CF_SYNC_ID_SIZE],
                                   const char *partition, const char *token, uint64_t last_server_version,
                                   const uint8_t *schema, size_t schema_len)
{
    cf_wire_u8(b, CF_FRAME_HELLO);
    cf_wire_varint(b, protocol);
    cf_buf_put(b, client, CF_SYNC_ID_SIZE);
    cf_wire_string(b, partition, strlen(partition));
    cf_wire_string(b, token ? token : "", token ? strlen(token) : 0);
    cf_wire_varint(b, last_server_version);
    cf_buf_put(b, schema, schema_len);
}

void cf_frame_welcome_encode(cf_buf *b, uint64_t last_client_version, uint64_t latest_server_version)
{
    cf_wire_u8(b, CF_FRAME_WELCOME);
    cf_wire_varint(b, CF_SYNC_PROTOCOL);
    cf_wire_varint(b, last_client_version);
    cf_wire_varint(b, latest_server_version);
}

void cf_frame_upload_encode(cf_buf *b, uint64_t count, const uint8_t *changesets, size_t len)
{
    cf_wire_u8(b, CF_FRAME_UPLOAD);
    cf_wire_varint(b, count);
    cf_buf_put(b, changesets, len);
}

void cf_frame_upload_ack_encode(cf_buf *b, uint64_t last_client_version, uint64_t server_version)
{
    cf_wire_u8(b, CF_FRAME_UPLOAD_ACK);
    cf_wire_varint(b, last_client_version);
    cf_wire_varint(b, server_version);
}

void cf_frame_download_encode(cf_buf *b, uint64_t latest_server_version, uint64_t count, const uint8_t *changesets,
                              size_t len)
{
    cf_wire_u8(b, CF_FRAME_DOWNLOAD);
    cf_wire_varint(b, latest_server_version);
    cf_wire_varint(b, count);
    cf_buf_put(b, changesets, len);
}

void cf_frame_download_ack_encode(cf_buf *b, uint64_t server_version)
{
    cf_wire_u8(b, CF_FRAME_DOWNLOAD_ACK);
    cf_wire_varint(b, server_version);
}

void cf_frame_error_encode(cf_buf *b, uint64_t code, const char *message, int fatal)
{
    cf_wire_u8(b, CF_FRAME_ERROR);
    cf_wire_varint(b, code);
    cf_wire_string(b, message, strlen(message));
    cf_wire_u8(b, fatal ? 1 : 0);
}

void cf_frame_subscribe_encode(cf_buf *b, uint64_t set_version, uint64_t count, const uint8_t *queries, size_t len)
{
    cf_wire_u8(b, CF_FRAME_SUBSCRIBE);
    cf_wire_varint(b, set_version);
    cf_wire_varint(b, count);
    cf_buf_put(b, queries, len);
}

void cf_frame_subscription_complete_encode(cf_buf *b, uint64_t set_version, uint64_t server_version)
{
    cf_wire_u8(b, CF_FRAME_SUBSCRIPTION_COMPLETE);
    cf_wire_varint(b, set_version);
    cf_wire_varint(b, server_version);
}

void cf_frame_progress_encode(cf_buf *b, uint64_t downloadable_bytes)
{
    cf_wire_u8(b, CF_FRAME_PROGRESS);
    cf_wire_varint(b, downloadable_bytes);
}

void cf_frame_subscription_error_encode(cf_buf *b, const char *message, uint64_t set_version)
{
    cf_frame_error_encode(b, CF_SYNC_ERR_SUBSCRIPTION, message, 0);
    cf_wire_varint(b, set_version);
}

const char *cf_sync_error_name(uint64_t code)
{
    static const char *const names[] = {"unknown",        "PROTOCOL",      "VERSION",    "AUTH",
                                        "SCHEMA_MISMATCH", "BAD_CHANGESET", "OVERLOADED", "INTERNAL",
                                        "CLIENT_RESET",    "TOKEN_EXPIRED", "COMPENSATING_WRITE",
                                        "SUBSCRIPTION"};
    return code < sizeof names / sizeof names[0] ? names[code] : "unknown";
}
