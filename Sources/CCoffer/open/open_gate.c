/* open_gate — per-file locks of coffer_open, in a list the registry lock
 * guards. A gate lives while some open holds or waits for it. */
#define _GNU_SOURCE
#include "open/open_gate.h"

#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/env.h"
#include "util/error.h"

struct cf_open_gate {
    char *key;
    pid_t pid;             /* the process that made it: a fork() does not inherit its holders */
    int users;             /* opens holding or waiting for it; guarded by the registry lock */
    pthread_mutex_t mutex; /* recursive */
    struct cf_open_gate *next;
};

static cf_open_gate *gates; /* guarded by the registry lock */

/* "file:" and the path with its links resolved (for a file not yet
 * created, its folder's), or "memory:" and the store's identifier. */
static char *gate_key(const char *path, const char *memory_id)
{
    char *key = NULL;
    if (memory_id)
        return asprintf(&key, "memory:%s", memory_id) < 0 ? NULL : key;
    char *resolved = realpath(path, NULL);
    if (resolved) {
        int n = asprintf(&key, "file:%s", resolved);
        free(resolved);
        return n < 0 ? NULL : key;
    }
    char *dir_copy = strdup(path), *base_copy = strdup(path);
    char *dir = dir_copy ? realpath(dirname(dir_copy), NULL) : NULL;
    int n = dir && base_copy ? asprintf(&key, "file:%s/%s", dir, basename(base_copy))
                             : asprintf(&key, "file:%s", path); /* the folder is missing: the open fails anyway */
    free(dir);
    free(dir_copy);
    free(base_copy);
    return n < 0 ? NULL : key;
}

static cf_open_gate *gate_new(char *key, pid_t pid)
{
    cf_open_gate *gate = calloc(1, sizeof *gate);
    if (!gate)
        return NULL;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&gate->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    gate->key = key;
    gate->pid = pid;
    return gate;
}

coffer_status cf_open_gate_enter(const char *path, const char *memory_id, cf_open_gate **out)
{
    char *key = gate_key(path, memory_id);
    if (!key)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening '%s'", memory_id ? memory_id : path);
    pid_t pid = getpid();
    cf_registry_lock();
    cf_open_gate *gate = gates;
    while (gate && (gate->pid != pid || strcmp(gate->key, key) != 0))
        gate = gate->next;
    if (gate) {
        free(key);
    } else if ((gate = gate_new(key, pid)) != NULL) {
        gate->next = gates;
        gates = gate;
    }
    if (gate)
        gate->users++;
    cf_registry_unlock();
    if (!gate) {
        free(key);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening '%s'", memory_id ? memory_id : path);
    }
    pthread_mutex_lock(&gate->mutex); /* not under the registry lock: this waits for the other open */
    *out = gate;
    return COFFER_OK;
}

void cf_open_gate_leave(cf_open_gate *gate)
{
    pthread_mutex_unlock(&gate->mutex);
    cf_registry_lock();
    int last = --gate->users == 0;
    if (last) {
        for (cf_open_gate **p = &gates; *p; p = &(*p)->next) {
            if (*p == gate) {
                *p = gate->next;
                break;
            }
        }
    }
    cf_registry_unlock();
    if (last) {
        pthread_mutex_destroy(&gate->mutex);
        free(gate->key);
        free(gate);
    }
}
