/* signal — the commit counter shared by every process that has a file open
 * (`<path>-note`), and the sleeping on it. On Linux waiters sleep in the
 * kernel on the counter's address (a futex on a shared file mapping works
 * across processes) and count themselves beside it, so that a commit wakes
 * the kernel only when someone sleeps; elsewhere they look at it every
 * 20 ms. */
#define _GNU_SOURCE
#include "storage/signal.h"

#include "storage/reserve.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#define NOTE_SIZE 4096
static const char NOTE_MAGIC[8] = {'C', 'O', 'F', 'N', 'O', 'T', 'E', '1'};

/* The layout of the note file: the magic, then the counter in its own
 * cache line, followed by the number of threads (of every process) sleeping
 * on it, so that a commit nobody waits for makes no system call. */
typedef struct note {
    char magic[8];
    char pad[56];
    _Atomic uint32_t commits;
    _Atomic uint32_t waiters;
} note;

struct cf_signal {
    note *shared; /* the mapped file, or `local` */
    note local;   /* in-memory stores, and files whose note cannot be mapped */
    int mapped;
};

coffer_status cf_signal_open(const char *path, int read_only, cf_signal **out)
{
    *out = NULL;
    cf_signal *sig = calloc(1, sizeof *sig);
    if (!sig)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a database");
    sig->shared = &sig->local;
    *out = sig;
    if (!path)
        return COFFER_OK;
    char name[4200];
    if (snprintf(name, sizeof name, "%s-note", path) >= (int)sizeof name)
        return COFFER_OK;
    int fd = open(name, (read_only ? O_RDONLY : O_RDWR | O_CREAT) | O_CLOEXEC, 0644);
    if (fd < 0 && !read_only)
        fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return COFFER_OK;
    struct stat sb;
    int writable = (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR;
    /* The counter is written through the mapping: its page must be backed
     * before it is mapped, or a full disk would be a SIGBUS. */
    if (writable && fstat(fd, &sb) == 0) {
        coffer_status st = cf_reserve_space(fd, sb.st_size > NOTE_SIZE ? sb.st_size : NOTE_SIZE, name);
        if (st != COFFER_OK) {
            close(fd);
            cf_signal_close(sig);
            *out = NULL;
            return st;
        }
    }
    if (fstat(fd, &sb) == 0 && sb.st_size < NOTE_SIZE && writable && ftruncate(fd, NOTE_SIZE) == 0)
        sb.st_size = NOTE_SIZE;
    if (sb.st_size >= NOTE_SIZE) {
        void *p = mmap(NULL, NOTE_SIZE, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            note *n = p;
            if (writable && memcmp(n->magic, NOTE_MAGIC, sizeof NOTE_MAGIC) != 0)
                memcpy(n->magic, NOTE_MAGIC, sizeof NOTE_MAGIC); /* a new file: zeros otherwise */
            if (memcmp(n->magic, NOTE_MAGIC, sizeof NOTE_MAGIC) == 0) {
                sig->shared = n;
                sig->mapped = writable ? 2 : 1;
            } else {
                munmap(p, NOTE_SIZE);
            }
        }
    }
    close(fd);
    return COFFER_OK;
}

void cf_signal_close(cf_signal *sig)
{
    if (!sig)
        return;
    if (sig->mapped)
        munmap(sig->shared, NOTE_SIZE);
    free(sig);
}

uint32_t cf_signal_value(cf_signal *sig)
{
    return atomic_load_explicit(&sig->shared->commits, memory_order_acquire);
}

static void wake_all(cf_signal *sig)
{
#ifdef __linux__
    /* A shared mapping needs the process-shared futex; the local counter
     * the private one. */
    int op = sig->mapped ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
    syscall(SYS_futex, (uint32_t *)&sig->shared->commits, op, INT_MAX, NULL, NULL, 0);
#else
    (void)sig;
#endif
}

void cf_signal_commit(cf_signal *sig)
{
    if (sig->mapped == 1)
        return; /* read-only mapping: this process cannot commit anyway */
    /* Sequentially consistent with the waiter's count and its look at the
     * counter (cf_signal_wait): either this sees the waiter, or the waiter
     * sees the new value (and the futex does not sleep on a changed one). */
    atomic_fetch_add_explicit(&sig->shared->commits, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&sig->shared->waiters, memory_order_seq_cst) != 0)
        wake_all(sig);
}

void cf_signal_poke(cf_signal *sig)
{
    wake_all(sig);
}

void cf_signal_wait(cf_signal *sig, uint32_t seen, int timeout_ms)
{
    if (timeout_ms <= 0 || cf_signal_value(sig) != seen)
        return;
#ifdef __linux__
    /* Counted while asleep. A waiter of a read-only mapping cannot count
     * itself, so committers do not wake it: it sleeps 20 ms at a time and
     * looks again. A process killed while asleep leaves the count above
     * zero, which only brings back a wake-up per commit. */
    int counted = sig->mapped != 1;
    if (!counted && timeout_ms > 20)
        timeout_ms = 20;
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    int op = sig->mapped ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
    if (counted)
        atomic_fetch_add_explicit(&sig->shared->waiters, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&sig->shared->commits, memory_order_seq_cst) == seen)
        syscall(SYS_futex, (uint32_t *)&sig->shared->commits, op, seen, &ts, NULL, 0);
    if (counted)
        atomic_fetch_sub_explicit(&sig->shared->waiters, 1, memory_order_seq_cst);
#else
    int step = timeout_ms < 20 ? timeout_ms : 20;
    struct timespec ts = {0, (long)step * 1000000L};
    nanosleep(&ts, NULL);
#endif
}
