/* websocket — the built-in sync transport for ws:// URLs: a small RFC 6455
 * client over a TCP socket, without TLS (wss:// needs a transport of its
 * own). It opens the connection with the HTTP upgrade (checking the
 * server's Sec-WebSocket-Accept), sends each frame as one masked binary
 * message, and receives binary messages (fragmented or not), answering
 * pings; a text message, a close or a message over the size limit ends the
 * connection. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sync/session.h"
#include "util/error.h"

#define CONNECT_MS 10000
#define MAX_MESSAGE (64u << 20)
static const char GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

typedef struct ws_conn {
    int fd;
    uint8_t *in; /* received bytes not yet consumed */
    size_t in_len, in_cap;
    uint8_t *msg; /* the message being assembled, then the last one returned */
    size_t msg_len, msg_cap;
    int in_message; /* fragments of a message have arrived */
} ws_conn;

/* ---- SHA-1 (for Sec-WebSocket-Accept only) ------------------------------ */

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1(const uint8_t *data, size_t len, uint8_t out[20])
{
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    size_t total = ((len + 8) / 64 + 1) * 64;
    uint8_t *m = calloc(1, total);
    if (!m) {
        memset(out, 0, 20);
        return;
    }
    memcpy(m, data, len);
    m[len] = 0x80;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        m[total - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t off = 0; off < total; off += 64) {
        uint32_t w[80];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)m[off + 4 * i] << 24 | (uint32_t)m[off + 4 * i + 1] << 16 | (uint32_t)m[off + 4 * i + 2] << 8 |
                   m[off + 4 * i + 3];
        for (int i = 16; i < 80; i++)
            w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
            uint32_t f, k;
            if (i < 20) {
                f = (b & c) | (~b & d);
                k = 0x5A827999;
            } else if (i < 40) {
                f = b ^ c ^ d;
                k = 0x6ED9EBA1;
            } else if (i < 60) {
                f = (b & c) | (b & d) | (c & d);
                k = 0x8F1BBCDC;
            } else {
                f = b ^ c ^ d;
                k = 0xCA62C1D6;
            }
            uint32_t t = rol(a, 5) + f + e + k + w[i];
            e = d;
            d = c;
            c = rol(b, 30);
            b = a;
            a = t;
        }
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
    }
    free(m);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

/* ---- sockets ------------------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static coffer_status write_all(ws_conn *c, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pfd = {c->fd, POLLOUT, 0};
            if (poll(&pfd, 1, CONNECT_MS) <= 0)
                return cf_error(COFFER_ERR_IO, "ws: the connection stopped taking data");
            continue;
        }
        if (w <= 0)
            return cf_error(COFFER_ERR_IO, "ws: cannot send: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return COFFER_OK;
}

/* Reads what is there into c->in, waiting at most `ms`: COFFER_ERR_TIMEOUT when nothing came. */
static coffer_status fill(ws_conn *c, int ms)
{
    struct pollfd pfd = {c->fd, POLLIN, 0};
    int r = poll(&pfd, 1, ms < 0 ? 0 : ms);
    if (r < 0 && errno == EINTR)
        return COFFER_ERR_TIMEOUT;
    if (r < 0)
        return cf_error(COFFER_ERR_IO, "ws: poll failed: %s", strerror(errno));
    if (r == 0)
        return COFFER_ERR_TIMEOUT;
    if (c->in_cap - c->in_len < 65536) {
        size_t cap = c->in_cap ? c->in_cap * 2 : 131072;
        uint8_t *p = realloc(c->in, cap);
        if (!p)
            return cf_error(COFFER_ERR_NO_MEMORY, "ws: out of memory");
        c->in = p;
        c->in_cap = cap;
    }
    ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return COFFER_ERR_TIMEOUT;
    if (n < 0)
        return cf_error(COFFER_ERR_IO, "ws: cannot receive: %s", strerror(errno));
    if (n == 0)
        return cf_error(COFFER_ERR_IO, "ws: the service closed the connection");
    c->in_len += (size_t)n;
    return COFFER_OK;
}

static void consume(ws_conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
}

static coffer_status parse_url(const char *url, char *host, size_t hcap, char *port, size_t pcap, const char **path)
{
    if (strncmp(url, "ws://", 5) != 0)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "ws: the built-in transport speaks ws:// only (no TLS); '%s' needs a transport of its own", url);
    const char *h = url + 5, *end = h + strcspn(h, "/?");
    *path = *end ? end : "/";
    const char *colon = NULL;
    if (*h == '[') { /* [v6]:port */
        const char *close = memchr(h, ']', (size_t)(end - h));
        if (!close)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "ws: bad host in '%s'", url);
        snprintf(host, hcap, "%.*s", (int)(close - h - 1), h + 1);
        colon = close[1] == ':' ? close + 1 : NULL;
    } else {
        colon = memchr(h, ':', (size_t)(end - h));
        snprintf(host, hcap, "%.*s", (int)((colon ? colon : end) - h), h);
    }
    snprintf(port, pcap, "%.*s", colon ? (int)(end - colon - 1) : 2, colon ? colon + 1 : "80");
    if (!*host || !*port)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "ws: no host or port in '%s'", url);
    return COFFER_OK;
}

static coffer_status dial(const char *host, const char *port, int *out)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0)
        return cf_error(COFFER_ERR_IO, "ws: cannot resolve '%s': %s", host, gai_strerror(rc));
    int err = 0;
    for (ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            int soerr = 0;
            socklen_t len = sizeof soerr;
            if (poll(&pfd, 1, CONNECT_MS) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0) {
                freeaddrinfo(res);
                *out = fd;
                return COFFER_OK;
            }
            err = soerr ? soerr : ETIMEDOUT;
        } else {
            err = errno;
        }
        close(fd);
    }
    freeaddrinfo(res);
    return cf_error(COFFER_ERR_IO, "ws: cannot connect to %s:%s: %s", host, port, strerror(err));
}

static coffer_status handshake(ws_conn *c, const char *host, const char *port, const char *path)
{
    uint8_t nonce[16];
    randombytes_buf(nonce, sizeof nonce);
    char key[32];
    sodium_bin2base64(key, sizeof key, nonce, sizeof nonce, sodium_base64_VARIANT_ORIGINAL);
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
                     path, host, port, key);
    if (n <= 0 || (size_t)n >= sizeof req)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "ws: the URL is too long");
    coffer_status st = write_all(c, (const uint8_t *)req, (size_t)n);
    uint64_t deadline = now_ms() + CONNECT_MS;
    char *end = NULL;
    while (st == COFFER_OK) {
        if (c->in_len && (end = memmem(c->in, c->in_len, "\r\n\r\n", 4)))
            break;
        if (c->in_len > 16384)
            return cf_error(COFFER_ERR_IO, "ws: the service's answer to the upgrade is too long");
        uint64_t now = now_ms();
        if (now >= deadline)
            return cf_error(COFFER_ERR_IO, "ws: the service did not answer the upgrade in %d s", CONNECT_MS / 1000);
        st = fill(c, (int)(deadline - now));
        if (st == COFFER_ERR_TIMEOUT)
            st = COFFER_OK;
    }
    if (st != COFFER_OK)
        return st;
    size_t head = (size_t)(end - (char *)c->in) + 4;
    char *resp = malloc(head + 1);
    if (!resp)
        return cf_error(COFFER_ERR_NO_MEMORY, "ws: out of memory");
    memcpy(resp, c->in, head);
    resp[head] = 0;
    consume(c, head);
    if (strncmp(resp, "HTTP/1.1 101", 12) != 0) {
        char *eol = strstr(resp, "\r\n");
        if (eol)
            *eol = 0;
        st = cf_error(COFFER_ERR_IO, "ws: the service refused the upgrade: %.200s", resp);
        free(resp);
        return st;
    }
    /* The accept header: base64(SHA-1(key ‖ GUID)). */
    char concat[128], want[64];
    uint8_t digest[20];
    snprintf(concat, sizeof concat, "%s%s", key, GUID);
    sha1((const uint8_t *)concat, strlen(concat), digest);
    sodium_bin2base64(want, sizeof want, digest, sizeof digest, sodium_base64_VARIANT_ORIGINAL);
    st = cf_error(COFFER_ERR_IO, "ws: the service's upgrade has no valid Sec-WebSocket-Accept");
    for (char *line = strstr(resp, "\r\n"); line && line[2]; line = strstr(line + 2, "\r\n")) {
        char *name = line + 2;
        if (strncasecmp(name, "Sec-WebSocket-Accept:", 21) != 0)
            continue;
        char *v = name + 21;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t len = strcspn(v, " \t\r\n");
        if (len == strlen(want) && memcmp(v, want, len) == 0) {
            coffer_clear_error();
            st = COFFER_OK;
        }
        break;
    }
    free(resp);
    return st;
}

/* ---- the transport ------------------------------------------------------- */

static void ws_close(void *ctx, void *connection);

static coffer_status ws_open(void *ctx, const char *url, void **connection)
{
    (void)ctx;
    char host[256], port[16];
    const char *path = "/";
    coffer_status st = parse_url(url, host, sizeof host, port, sizeof port, &path);
    if (st != COFFER_OK)
        return st;
    ws_conn *c = calloc(1, sizeof *c);
    if (!c)
        return cf_error(COFFER_ERR_NO_MEMORY, "ws: out of memory");
    c->fd = -1;
    if ((st = dial(host, port, &c->fd)) == COFFER_OK)
        st = handshake(c, host, port, path);
    if (st != COFFER_OK) {
        if (c->fd >= 0)
            close(c->fd);
        free(c->in);
        free(c);
        return st;
    }
    *connection = c;
    return COFFER_OK;
}

static coffer_status send_message(ws_conn *c, uint8_t opcode, const uint8_t *data, size_t size)
{
    uint8_t head[14], mask[4];
    size_t h = 0;
    head[h++] = 0x80 | opcode;
    if (size < 126) {
        head[h++] = 0x80 | (uint8_t)size;
    } else if (size <= 0xffff) {
        head[h++] = 0x80 | 126;
        head[h++] = (uint8_t)(size >> 8);
        head[h++] = (uint8_t)size;
    } else {
        head[h++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--)
            head[h++] = (uint8_t)((uint64_t)size >> (8 * i));
    }
    randombytes_buf(mask, 4);
    memcpy(head + h, mask, 4);
    h += 4;
    uint8_t *frame = malloc(h + size + 1);
    if (!frame)
        return cf_error(COFFER_ERR_NO_MEMORY, "ws: out of memory sending %zu bytes", size);
    memcpy(frame, head, h);
    for (size_t i = 0; i < size; i++)
        frame[h + i] = data[i] ^ mask[i & 3];
    coffer_status st = write_all(c, frame, h + size);
    free(frame);
    return st;
}

static coffer_status ws_send(void *ctx, void *connection, const uint8_t *frame, size_t size)
{
    (void)ctx;
    return send_message(connection, 0x2, frame, size);
}

/* Takes one complete frame off c->in: 1 when a whole message is in c->msg,
 * 0 when more bytes are needed, an error status (negated) otherwise. */
static int take_frame(ws_conn *c, coffer_status *st)
{
    if (c->in_len < 2)
        return 0;
    uint8_t b0 = c->in[0], b1 = c->in[1];
    size_t h = 2;
    uint64_t len = b1 & 0x7f;
    if (len == 126) {
        if (c->in_len < 4)
            return 0;
        len = (uint64_t)c->in[2] << 8 | c->in[3];
        h = 4;
    } else if (len == 127) {
        if (c->in_len < 10)
            return 0;
        len = 0;
        for (int i = 0; i < 8; i++)
            len = len << 8 | c->in[2 + i];
        h = 10;
    }
    if (b1 & 0x80)
        h += 4; /* a masked frame from a server: allowed to read, against the RFC */
    if (len > MAX_MESSAGE || c->msg_len + len > MAX_MESSAGE) {
        *st = cf_error(COFFER_ERR_IO, "ws: a message larger than %u bytes", MAX_MESSAGE);
        return -1;
    }
    if (c->in_len < h + len)
        return 0;
    const uint8_t *payload = c->in + h;
    uint8_t opcode = b0 & 0x0f;
    int fin = (b0 & 0x80) != 0;
    if (opcode == 0x8) {
        *st = cf_error(COFFER_ERR_IO, "ws: the service closed the connection");
        return -1;
    }
    if (opcode == 0x9) { /* ping: pong with the same payload */
        uint8_t pong[125];
        size_t n = len > sizeof pong ? sizeof pong : (size_t)len;
        for (size_t i = 0; i < n; i++)
            pong[i] = (b1 & 0x80) ? payload[i] ^ c->in[h - 4 + (i & 3)] : payload[i];
        consume(c, h + (size_t)len);
        *st = send_message(c, 0xA, pong, n);
        return *st == COFFER_OK ? 0 : -1;
    }
    if (opcode == 0xA) {
        consume(c, h + (size_t)len);
        return 0;
    }
    if (opcode == 0x1 || (opcode != 0x2 && opcode != 0x0) || (opcode == 0x0) != c->in_message) {
        *st = cf_error(COFFER_ERR_IO, "ws: a message that is not a binary frame (opcode %u)", opcode);
        return -1;
    }
    if (!c->in_message)
        c->msg_len = 0;
    if (c->msg_cap < c->msg_len + len + 1) {
        size_t cap = c->msg_len + (size_t)len + 1;
        uint8_t *p = realloc(c->msg, cap);
        if (!p) {
            *st = cf_error(COFFER_ERR_NO_MEMORY, "ws: out of memory");
            return -1;
        }
        c->msg = p;
        c->msg_cap = cap;
    }
    for (size_t i = 0; i < len; i++)
        c->msg[c->msg_len + i] = (b1 & 0x80) ? payload[i] ^ c->in[h - 4 + (i & 3)] : payload[i];
    c->msg_len += (size_t)len;
    consume(c, h + (size_t)len);
    c->in_message = !fin;
    return fin;
}

static coffer_status ws_receive(void *ctx, void *connection, int timeout_ms, const uint8_t **frame, size_t *size)
{
    (void)ctx;
    ws_conn *c = connection;
    uint64_t deadline = now_ms() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        coffer_status st = COFFER_OK;
        int got;
        for (;;) { /* frames already received: control frames are handled and skipped */
            size_t before = c->in_len;
            got = take_frame(c, &st);
            if (got != 0 || st != COFFER_OK || c->in_len == before)
                break;
        }
        if (got < 0)
            return st;
        if (got > 0) {
            *frame = c->msg;
            *size = c->msg_len;
            return COFFER_OK;
        }
        uint64_t now = now_ms();
        st = fill(c, (int)(deadline > now ? deadline - now : 0));
        if (st != COFFER_OK)
            return st; /* COFFER_ERR_TIMEOUT when nothing came in time */
    }
}

static void ws_close(void *ctx, void *connection)
{
    (void)ctx;
    ws_conn *c = connection;
    if (!c)
        return;
    if (c->fd >= 0) {
        uint8_t code[2] = {0x03, 0xe8}; /* 1000: normal closure */
        send_message(c, 0x8, code, 2);
        close(c->fd);
    }
    free(c->in);
    free(c->msg);
    free(c);
}

const coffer_sync_transport cf_websocket_transport = {NULL, ws_open, ws_send, ws_receive, ws_close};
