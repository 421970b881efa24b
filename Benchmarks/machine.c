/* machine.c — machine description for the results; see machine.h. */
#define _GNU_SOURCE
#include "machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The value of the first line of `path` starting with `key`, trimmed. */
static int read_field(const char *path, const char *key, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key)) != 0)
            continue;
        char *v = strchr(line, ':');
        if (!v)
            v = strchr(line, '=');
        if (!v)
            continue;
        v++;
        while (*v == ' ' || *v == '\t' || *v == '"')
            v++;
        v[strcspn(v, "\"\n")] = '\0';
        snprintf(out, size, "%s", v);
        found = 1;
    }
    fclose(f);
    return found;
}

static const char *file_system(const char *dir)
{
    struct statfs st;
    if (statfs(dir, &st) != 0)
        return "unknown file system";
    switch ((unsigned long)st.f_type) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x01021994: return "tmpfs (fsync is free: figures are not durable-write figures)";
    case 0x794C7630: return "overlayfs";
    case 0x2FC12FC1: return "zfs";
    default: return "other file system";
    }
}

void bench_describe_machine(const char *dir, char *out, size_t size)
{
    char cpu[128] = "unknown CPU", os[128] = "", mem[64] = "";
    struct utsname u;
    read_field("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    read_field("/etc/os-release", "PRETTY_NAME", os, sizeof os);
    if (read_field("/proc/meminfo", "MemTotal", mem, sizeof mem))
        snprintf(mem, sizeof mem, "%.1f GiB RAM", strtod(mem, NULL) / 1048576.0);
    if (uname(&u) != 0)
        snprintf(u.release, sizeof u.release, "?");
    snprintf(out, size, "%s, %ld CPUs, %s, Linux %s, %s, %s", cpu, sysconf(_SC_NPROCESSORS_ONLN), mem, u.release,
             os[0] ? os : "unknown OS", file_system(dir));
}

double bench_load_average(void)
{
    double load[1];
    return getloadavg(load, 1) == 1 ? load[0] : -1;
}

void bench_utc_now(char *out, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
