/* frames — the messages of sync protocol versions 2 and 3 (docs/SYNC.md, "Frames",
 * "Changesets", "Schema"): encoders that append a frame to a cf_buf, and
 * decoders that check a whole frame before anything uses it. Decoded frames
 * borrow their strings, values and changesets from the frame's bytes; only
 * the arrays of changes and changesets are allocated (free with the
 * matching _free function). */
#ifndef COFFER_SYNC_FRAMES_H
#define COFFER_SYNC_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "sync/wire.h"

#define CF_SYNC_PROTOCOL 2u
/* Flexible-sync clients (query subscriptions) speak version 3: HELLO, then
 * SUBSCRIBE. */
#define CF_SYNC_PROTOCOL_FLEXIBLE 3u
/* Partition-based clients told how much is left to download speak version
 * 4: version 2 and a PROGRESS frame before each DOWNLOAD frame. */
#define CF_SYNC_PROTOCOL_PROGRESS 4u
#define CF_SYNC_ID_SIZE 16

/* No frame may exceed this; both ends accept messages up to it. */
#define CF_SYNC_MAX_FRAME_BYTES (64u << 20)
/* The largest changeset: it must fit the DOWNLOAD frame that carries it
 * alone (type, latest version, count, server version, origin id: at most
 * 1 + 10 + 1 + 10 + 16 bytes before it). */
#define CF_SYNC_MAX_CHANGESET_BYTES (CF_SYNC_MAX_FRAME_BYTES - 64u)

enum {
    CF_FRAME_HELLO = 1,
    CF_FRAME_WELCOME = 2,
    CF_FRAME_UPLOAD = 3,
    CF_FRAME_UPLOAD_ACK = 4,
    CF_FRAME_DOWNLOAD = 5,
    CF_FRAME_DOWNLOAD_ACK = 6,
    CF_FRAME_ERROR = 7,
    CF_FRAME_SUBSCRIBE = 8,
    CF_FRAME_SUBSCRIPTION_COMPLETE = 9,
    CF_FRAME_PROGRESS = 10 /* protocol 4 */
};

enum {
    CF_OP_CREATE = 1,
    CF_OP_UPDATE = 2,
    CF_OP_DELETE = 3,
    CF_OP_LIST_INSERT = 4,
    CF_OP_LIST_ERASE = 5,
    CF_OP_LIST_SET = 6,
    CF_OP_SET_ADD = 7,
    CF_OP_SET_REMOVE = 8,
    CF_OP_MAP_PUT = 9,
    CF_OP_MAP_REMOVE = 10,
    /* Protocol 3, service to client: the object left the client's view. */
    CF_OP_EVICT = 11
};

enum {
    CF_SYNC_ERR_PROTOCOL = 1,
    CF_SYNC_ERR_VERSION = 2,
    CF_SYNC_ERR_AUTH = 3,
    CF_SYNC_ERR_SCHEMA_MISMATCH = 4,
    CF_SYNC_ERR_BAD_CHANGESET = 5,
    CF_SYNC_ERR_OVERLOADED = 6,
    CF_SYNC_ERR_INTERNAL = 7,
    CF_SYNC_ERR_CLIENT_RESET = 8,
    CF_SYNC_ERR_TOKEN_EXPIRED = 9,
    CF_SYNC_ERR_COMPENSATING_WRITE = 10,
    CF_SYNC_ERR_SUBSCRIPTION = 11
};

/* Schema property flags on the wire. */
enum {
    CF_SCHEMA_OPTIONAL = 1,
    CF_SCHEMA_LIST = 2,
    CF_SCHEMA_SET = 4,
    CF_SCHEMA_MAP = 8,
    CF_SCHEMA_INDEXED = 16
};

/* A stamp orders changes: clock, then client id bytes. */
typedef struct cf_stamp {
    uint64_t clock;
    uint8_t client[CF_SYNC_ID_SIZE];
} cf_stamp;

/* < 0, 0, > 0 as a is older than, the same as, newer than b. */
int cf_stamp_cmp(const cf_stamp *a, const cf_stamp *b);

/* A list element's id. */
typedef struct cf_elem_id {
    uint64_t clock;
    uint8_t client[CF_SYNC_ID_SIZE];
    uint64_t seq;
} cf_elem_id;

/* Ids order siblings: clock, then client, then seq. */
int cf_elem_id_cmp(const cf_elem_id *a, const cf_elem_id *b);

/* One change of a changeset. Which fields are set depends on `op`. */
typedef struct cf_sync_change {
    uint8_t op;
    cf_slice cls;   /* class name */
    cf_slice pk;    /* primary key (a value) */
    cf_slice prop;  /* collection ops: the property */
    cf_slice key;   /* map ops: the key */
    cf_slice value; /* LIST_INSERT, LIST_SET, SET_*, MAP_PUT */
    cf_elem_id elem;   /* list ops */
    int has_anchor;    /* LIST_INSERT: 0 = at the head */
    cf_elem_id anchor;
    uint64_t nfields;  /* CREATE, UPDATE: (name, value) pairs in `fields` */
    cf_slice fields;
} cf_sync_change;

typedef struct cf_sync_cs {
    uint64_t version; /* the origin client's version */
    uint64_t clock;
    size_t nchanges;
    cf_sync_change *changes;
} cf_sync_cs;

/* Decodes the changeset at the reader's position (checking every value)
 * into *out; free with cf_sync_cs_free. */
coffer_status cf_sync_cs_read(cf_wreader *r, cf_sync_cs *out);
/* Decodes exactly one changeset from `n` bytes. */
coffer_status cf_sync_cs_decode(const uint8_t *p, size_t n, cf_sync_cs *out);
void cf_sync_cs_free(cf_sync_cs *cs);

/* Iterates the (name, value) pairs of a CREATE or UPDATE. */
coffer_status cf_sync_change_field(cf_wreader *r, cf_slice *name, cf_slice *value);

/* Builds a changeset: changes are appended to `body` and counted, and
 * cf_sync_cs_finish writes the whole changeset. */
typedef struct cf_sync_cs_builder {
    uint64_t version, clock;
    uint64_t count;
    cf_buf body;
    uint64_t next_seq; /* for list element ids */
} cf_sync_cs_builder;

/* Starts a change: op, class, primary key (encoded value). */
void cf_cs_begin_change(cf_sync_cs_builder *b, uint8_t op, const char *cls, cf_slice pk);
void cf_cs_elem_id(cf_buf *b, const cf_elem_id *id);
coffer_status cf_sync_cs_finish(cf_sync_cs_builder *b, cf_buf *out);
void cf_sync_cs_builder_free(cf_sync_cs_builder *b);

/* A class of a schema on the wire. */
typedef struct cf_wire_prop {
    cf_slice name;
    uint64_t type;
    uint8_t flags;
    cf_slice target;
} cf_wire_prop;

typedef struct cf_wire_class {
    cf_slice name;
    uint8_t flags; /* 1: embedded */
    cf_slice pk;
    size_t nprops;
    cf_wire_prop *props;
} cf_wire_class;

typedef struct cf_wire_schema {
    size_t nclasses;
    cf_wire_class *classes;
} cf_wire_schema;

coffer_status cf_wire_schema_read(cf_wreader *r, cf_wire_schema *out);
/* Encodes the classes of a handle's view (linking-objects properties are
 * computed, not synced, and left out). */
struct cf_schema;
void cf_wire_schema_encode(const struct cf_schema *s, cf_buf *b);
void cf_wire_schema_free(cf_wire_schema *s);

/* Frames. */
typedef struct cf_frame_hello {
    uint64_t protocol;
    uint8_t client[CF_SYNC_ID_SIZE];
    cf_slice partition, token;
    uint64_t last_server_version;
    cf_slice schema; /* the encoded schema (checked) */
} cf_frame_hello;

typedef struct cf_frame_welcome {
    uint64_t protocol;
    uint64_t last_client_version;
    uint64_t latest_server_version;
} cf_frame_welcome;

typedef struct cf_frame_upload {
    size_t count;
    cf_sync_cs *changesets;
} cf_frame_upload;

typedef struct cf_frame_upload_ack {
    uint64_t last_client_version;
    uint64_t server_version;
} cf_frame_upload_ack;

typedef struct cf_server_changeset {
    uint64_t server_version;
    uint8_t origin[CF_SYNC_ID_SIZE];
    cf_sync_cs cs;
    size_t len; /* the changeset's encoded bytes (what progress counts) */
} cf_server_changeset;

typedef struct cf_frame_download {
    uint64_t latest_server_version;
    size_t count;
    cf_server_changeset *changesets;
} cf_frame_download;

typedef struct cf_frame_error {
    uint64_t code;
    cf_slice message;
    int fatal;
    /* COMPENSATING_WRITE (protocol 2): the refused object's class and
     * primary key (a value, tag included); empty for other codes. */
    cf_slice class_name, pk;
    /* SUBSCRIPTION (protocol 3, never fatal): the refused set's version. */
    uint64_t set_version;
} cf_frame_error;

typedef struct cf_frame_subscription_complete {
    uint64_t set_version;
    uint64_t server_version; /* the marker the set took effect at */
} cf_frame_subscription_complete;

/* Any decoded frame: `type` says which member is set. */
typedef struct cf_frame {
    uint8_t type;
    union {
        cf_frame_hello hello;
        cf_frame_welcome welcome;
        cf_frame_upload upload;
        cf_frame_upload_ack upload_ack;
        cf_frame_download download;
        uint64_t download_ack;
        cf_frame_error error;
        cf_frame_subscription_complete subscription_complete;
        uint64_t progress; /* PROGRESS: the changeset bytes left to download */
    } u;
} cf_frame;

/* Decodes and checks a whole frame (trailing bytes are an error). The frame
 * borrows from `data`; free with cf_frame_free. COFFER_ERR_CORRUPTED with a
 * message naming the frame and field on any fault. */
coffer_status cf_frame_decode(const uint8_t *data, size_t n, cf_frame *out);
void cf_frame_free(cf_frame *f);

/* Encoders (append to `b`; check b->failed). The schema and changesets are
 * given already encoded. */
void cf_frame_hello_encode(cf_buf *b, const uint8_t client[CF_SYNC_ID_SIZE], const char *partition, const char *token,
                           uint64_t last_server_version, const uint8_t *schema, size_t schema_len);
/* HELLO of `protocol` (CF_SYNC_PROTOCOL_FLEXIBLE for flexible sync). */
void cf_frame_hello_encode_version(cf_buf *b, uint64_t protocol, const uint8_t client[CF_SYNC_ID_SIZE],
                                   const char *partition, const char *token, uint64_t last_server_version,
                                   const uint8_t *schema, size_t schema_len);
/* SUBSCRIBE: the set's version, then `count` (name, class, query) triples
 * already encoded as three wire strings each in `queries`. */
void cf_frame_subscribe_encode(cf_buf *b, uint64_t set_version, uint64_t count, const uint8_t *queries, size_t len);
void cf_frame_subscription_complete_encode(cf_buf *b, uint64_t set_version, uint64_t server_version);
void cf_frame_subscription_error_encode(cf_buf *b, const char *message, uint64_t set_version);
void cf_frame_welcome_encode(cf_buf *b, uint64_t last_client_version, uint64_t latest_server_version);
/* UPLOAD: `count` encoded changesets concatenated in `changesets`. */
void cf_frame_upload_encode(cf_buf *b, uint64_t count, const uint8_t *changesets, size_t len);
void cf_frame_upload_ack_encode(cf_buf *b, uint64_t last_client_version, uint64_t server_version);
/* DOWNLOAD: `count` server changesets (version, origin, changeset bytes)
 * concatenated in `changesets`. */
void cf_frame_download_encode(cf_buf *b, uint64_t latest_server_version, uint64_t count, const uint8_t *changesets,
                              size_t len);
void cf_frame_download_ack_encode(cf_buf *b, uint64_t server_version);
/* PROGRESS: the changeset bytes of the DOWNLOAD frames that follow. */
void cf_frame_progress_encode(cf_buf *b, uint64_t downloadable_bytes);
void cf_frame_error_encode(cf_buf *b, uint64_t code, const char *message, int fatal);

/* The name of an error code ("SCHEMA_MISMATCH"), or "unknown". */
const char *cf_sync_error_name(uint64_t code);

#endif
