/* runner.c — one child process per engine; see runner.h. */
#define _GNU_SOURCE
#include "runner.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char failure[400];

int bench_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(failure, sizeof failure, fmt, ap);
    va_end(ap);
    return -1;
}

const char *bench_failure(void)
{
    return failure;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Current resident set size, from /proc (0 if unavailable). */
static uint64_t current_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t dir_bytes_total;
static int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)path, (void)ftw;
    if (type == FTW_F)
        dir_bytes_total += (uint64_t)st->st_size;
    return 0;
}

static uint64_t dir_bytes(const char *dir)
{
    dir_bytes_total = 0;
    nftw(dir, add_file, 8, FTW_PHYS);
    return dir_bytes_total;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* The child: runs the operations and fills `r`. */
static void run_child(const bench_engine *engine, bench_workload w, const char *dir, bench_result *r)
{
    void *state;
    if (bench_workload_prepare(&w)) {
        snprintf(r->error, sizeof r->error, "out of memory generating %llu objects", (unsigned long long)w.n);
        return;
    }
    r->harness_rss_bytes = current_rss();
    if (engine->open(dir, &state)) {
        snprintf(r->error, sizeof r->error, "open: %s", bench_failure());
        return;
    }
    for (int op = 0; op < BENCH_OP_COUNT; op++) {
        if (!engine->ops[op])
            continue;
        if (engine->prepare && engine->prepare(state, &w, op)) {
            snprintf(r->error, sizeof r->error, "preparing %s: %s", bench_op_key(op), bench_failure());
            engine->close(state);
            return;
        }
        double start = now();
        int rc = engine->ops[op](state, &w, &r->check[op]);
        r->seconds[op] = now() - start;
        if (rc) {
            snprintf(r->error, sizeof r->error, "%s: %s", bench_op_key(op), bench_failure());
            engine->close(state);
            return;
        }
        r->supported[op] = 1;
        if (op == BENCH_OP_READ_ALL)
            r->file_bytes = dir_bytes(dir);
    }
    engine->close(state);
    r->completed = 1;
}

static int write_all(int fd, const void *data, size_t size)
{
    const char *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

static size_t read_all(int fd, void *data, size_t size)
{
    char *p = data;
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, p + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

int bench_run_engine(const bench_engine *engine, const bench_workload *w, const char *workdir, bench_result *out)
{
    char dir[4096];
    int fds[2];
    memset(out, 0, sizeof *out);
    out->engine = engine;
    snprintf(dir, sizeof dir, "%s/%s", workdir, engine->key);
    remove_tree(dir);
    if (mkdir(dir, 0755) != 0) {
        snprintf(out->error, sizeof out->error, "cannot create %.400s: %s", dir, strerror(errno));
        return -1;
    }
    if (pipe(fds) != 0) {
        snprintf(out->error, sizeof out->error, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(out->error, sizeof out->error, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(engine, *w, dir, out);
        _exit(write_all(fds[1], out, sizeof *out) ? 3 : 0);
    }
    close(fds[1]);
    bench_result child;
    size_t got = read_all(fds[0], &child, sizeof child);
    close(fds[0]);
    int status;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR)
        ;
    remove_tree(dir);
    if (got == sizeof child) {
        *out = child;
        out->engine = engine;
    } else if (WIFSIGNALED(status)) {
        snprintf(out->error, sizeof out->error, "the engine's process died of signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    } else {
        snprintf(out->error, sizeof out->error, "the engine's process exited with status %d and no results",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    out->peak_rss_bytes = (uint64_t)usage.ru_maxrss * 1024;
    return out->completed ? 0 : -1;
}

double bench_ops_per_second(const bench_result *r, const bench_workload *w, bench_op op)
{
    if (!r->supported[op] || r->seconds[op] <= 0)
        return 0;
    return (double)bench_op_count(w, op) / r->seconds[op];
}
