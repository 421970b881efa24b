/*
 * main.c — coffer-bench: the same workload on Coffer (plain and encrypted),
 * raw LMDB and SQLite in one run; prints a table and writes
 * bench-results.json. See docs/PERFORMANCE.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine.h"
#include "results.h"

/* The first DEFAULT_ENGINES run unless --engines says otherwise; the
 * clustered ones (file format 5, experimental) only when named. */
static const bench_engine *const all_engines[] = {
    &bench_engine_coffer, &bench_engine_coffer_encrypted, &bench_engine_lmdb, &bench_engine_sqlite,
    &bench_engine_coffer_clusters, &bench_engine_coffer_clusters_encrypted};
enum { ENGINE_COUNT = sizeof all_engines / sizeof all_engines[0], DEFAULT_ENGINES = 4 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: coffer-bench [options]\n"
            "  --n N               objects in the data set (default 100000, at most 100000000)\n"
            "  --queries Q         indexed equality queries (default 1000)\n"
            "  --scans S           unindexed filter scans (default 10)\n"
            "  --prefix-queries P  string prefix queries (default 100)\n"
            "  --single-writes K   single-object write transactions (default 1000)\n"
            "  --list-length L     links appended to the list (default: n, at most 100000)\n"
            "  --repeat R          runs of every engine, taking each operation's fastest (default 3)\n"
            "  --seed S            seed of the data set (default 42)\n"
            "  --engines LIST      comma-separated subset of: coffer,coffer_encrypted,lmdb,sqlite\n"
            "                      (default), coffer_clusters,coffer_clusters_encrypted (file format 5)\n"
            "  --json PATH         write the results as JSON to PATH\n"
            "  --workdir DIR       where the stores are created (default: current directory)\n"
            "  --machine TEXT      describe the machine (default: read from the system)\n");
}

/* Parses a whole decimal number in [min, max]; prints an error naming the
 * option otherwise. */
static int parse_count(const char *option, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, 10) : 0;
    if (!(text[0] >= '0' && text[0] <= '9') || errno || *end || v < min || v > max) {
        fprintf(stderr, "coffer-bench: %s wants a whole number from %llu to %llu, not '%s'\n", option,
                (unsigned long long)min, (unsigned long long)max, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* Selects engines by key; an unknown key is an error that names it. */
static int parse_engines(const char *list, const bench_engine **out, size_t *count)
{
    char copy[256];
    *count = 0;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save, *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < ENGINE_COUNT && strcmp(all_engines[i]->key, name) != 0; i++)
            ;
        if (i == ENGINE_COUNT) {
            fprintf(stderr, "coffer-bench: --engines: unknown engine '%s' (known: coffer, coffer_encrypted, lmdb, sqlite, "
                    "coffer_clusters, coffer_clusters_encrypted)\n",
                    name);
            return -1;
        }
        for (size_t j = 0; j < *count; j++)
            if (out[j] == all_engines[i]) {
                fprintf(stderr, "coffer-bench: --engines: '%s' is listed twice\n", name);
                return -1;
            }
        out[(*count)++] = all_engines[i];
    }
    if (!*count) {
        fprintf(stderr, "coffer-bench: --engines: the list is empty\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_workload w = {.seed = 42, .n = 100000, .queries = 1000, .scans = 10, .prefix_queries = 100,
                        .single_writes = 1000};
    const bench_engine *engines[ENGINE_COUNT];
    size_t engine_count = DEFAULT_ENGINES;
    uint64_t repeat = 3, list_length = 0;
    const char *json = NULL, *workdir = ".", *machine = NULL;
    memcpy(engines, all_engines, sizeof engines);

    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "coffer-bench: '%s' is not an option or is missing its value\n", opt);
            usage(stderr);
            return 2;
        }
        const char *val = argv[++i];
        int bad = 0;
        if (strcmp(opt, "--n") == 0)
            bad = parse_count(opt, val, 1, 100000000, &w.n);
        else if (strcmp(opt, "--queries") == 0)
            bad = parse_count(opt, val, 1, 100000000, &w.queries);
        else if (strcmp(opt, "--scans") == 0)
            bad = parse_count(opt, val, 1, 1000000, &w.scans);
        else if (strcmp(opt, "--prefix-queries") == 0)
            bad = parse_count(opt, val, 1, 1000000, &w.prefix_queries);
        else if (strcmp(opt, "--single-writes") == 0)
            bad = parse_count(opt, val, 1, 10000000, &w.single_writes);
        else if (strcmp(opt, "--list-length") == 0)
            bad = parse_count(opt, val, 1, 10000000, &list_length);
        else if (strcmp(opt, "--repeat") == 0)
            bad = parse_count(opt, val, 1, 100, &repeat);
        else if (strcmp(opt, "--seed") == 0)
            bad = parse_count(opt, val, 0, UINT64_MAX, &w.seed);
        else if (strcmp(opt, "--engines") == 0)
            bad = parse_engines(val, engines, &engine_count);
        else if (strcmp(opt, "--json") == 0)
            json = val;
        else if (strcmp(opt, "--workdir") == 0)
            workdir = val;
        else if (strcmp(opt, "--machine") == 0)
            machine = val;
        else {
            fprintf(stderr, "coffer-bench: unknown option '%s'\n", opt);
            usage(stderr);
            return 2;
        }
        if (bad)
            return 2;
    }

    w.list_length = list_length ? list_length : w.n < BENCH_LIST_MAX ? w.n : BENCH_LIST_MAX;

    char dir[4096], machine_text[512], date[32];
    snprintf(dir, sizeof dir, "%s/coffer-bench-XXXXXX", workdir);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "coffer-bench: cannot create a directory in '%s': %s\n", workdir, strerror(errno));
        return 2;
    }
    if (!machine) {
        bench_describe_machine(dir, machine_text, sizeof machine_text);
        machine = machine_text;
    }
    uint64_t expected[BENCH_OP_COUNT];
    if (bench_expected_checks(&w, expected)) {
        fprintf(stderr, "coffer-bench: out of memory computing the expected answers\n");
        rmdir(dir);
        return 1;
    }

    bench_run_info info = {.machine = machine, .date = date, .load_before = bench_load_average()};
    bench_utc_now(date, sizeof date);
    bench_result results[ENGINE_COUNT], run;
    int failed = 0, mismatches = 0;
    /* Round-robin, so that a burst of other work on the machine does not
     * fall on one engine's every run. */
    for (uint64_t round = 0; round < repeat && !failed; round++)
        for (size_t i = 0; i < engine_count; i++) {
            fprintf(stderr, "coffer-bench: %s, n = %llu, run %llu of %llu ...\n", engines[i]->key,
                    (unsigned long long)w.n, (unsigned long long)round + 1, (unsigned long long)repeat);
            if (bench_run_engine(engines[i], &w, dir, &run)) {
                fprintf(stderr, "coffer-bench: %s failed: %s\n", engines[i]->key, run.error);
                failed = 1;
            }
            mismatches += bench_verify(&run, 1, expected, stderr);
            if (round == 0)
                results[i] = run;
            else
                bench_keep_fastest(&results[i], &run);
        }
    rmdir(dir);
    info.load_after = bench_load_average();
    info.repeat = repeat;
    info.verified = mismatches == 0 && !failed;
    bench_print_table(stdout, results, engine_count, &w, &info);
    if (json && bench_write_json(json, results, engine_count, &w, &info))
        return 1;
    return info.verified ? 0 : 1;
}
