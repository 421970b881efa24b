/* reported_copy — LMDB's copy of an environment, moved through a pipe so
 * that the thread that asked for it can report its progress. */
#define _GNU_SOURCE
#include "storage/reported_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"

typedef struct copy_job {
    MDB_env *env;
    int fd; /* the pipe's write end, closed by the job */
    unsigned flags;
    int rc;
} copy_job;

static void *run_copy(void *arg)
{
    copy_job *job = arg;
    /* A reader that stops (a cancelled copy) must give LMDB EPIPE, not
     * kill the process; LMDB's own writer thread inherits this mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    job->rc = mdb_env_copyfd2(job->env, job->fd, job->flags);
    close(job->fd);
    return NULL;
}

/* Moves everything the pipe `in` gives to `out`, reporting. */
static coffer_status pump(int in, int out, const char *path, cf_progress *progress)
{
    char buf[1 << 16];
    uint64_t written = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n == 0)
            return COFFER_OK;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cf_error(COFFER_ERR_IO, "cannot read the copy of '%s': %s", path, strerror(errno));
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return cf_error(COFFER_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
            off += w;
        }
        written += (uint64_t)n;
        coffer_status st = cf_progress_step(progress, written);
        if (st != COFFER_OK)
            return st;
    }
}

coffer_status cf_copy_env_reported(MDB_env *env, const char *path, unsigned flags, cf_progress *progress)
{
    if (!progress || !progress->fn) {
        int rc = mdb_env_copy2(env, path, flags);
        return rc ? cf_error(COFFER_ERR_IO, "cannot write '%s': %s", path, mdb_strerror(rc)) : COFFER_OK;
    }
    int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0)
        return cf_error(COFFER_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        coffer_status st = cf_error(COFFER_ERR_IO, "cannot copy to '%s': %s", path, strerror(errno));
        close(out);
        unlink(path);
        return st;
    }
    copy_job job = {.env = env, .fd = fds[1], .flags = flags};
    pthread_t thread;
    int err = pthread_create(&thread, NULL, run_copy, &job);
    coffer_status st = COFFER_OK;
    if (err != 0) {
        close(fds[1]);
        st = cf_error(COFFER_ERR_IO, "cannot copy to '%s': %s", path, strerror(err));
    } else {
        st = pump(fds[0], out, path, progress);
    }
    close(fds[0]); /* a copy still writing now gets EPIPE and stops */
    if (err == 0) {
        pthread_join(thread, NULL);
        if (st == COFFER_OK && job.rc != 0)
            st = cf_error(COFFER_ERR_IO, "cannot write '%s': %s", path, mdb_strerror(job.rc));
    }
    if (st == COFFER_OK && fsync(out) != 0)
        st = cf_error(COFFER_ERR_IO, "cannot sync '%s': %s", path, strerror(errno));
    close(out);
    if (st != COFFER_OK)
        unlink(path);
    return st;
}
