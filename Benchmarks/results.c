/* results.c — verification, table and JSON; see results.h. */
#include "results.h"

#include <errno.h>
#include <string.h>

const bench_target bench_targets[] = {
    {"coffer >= 2x sqlite", "coffer", "sqlite", 2.0, -1, -1},
    {"coffer within 2x of lmdb", "coffer", "lmdb", 0.5, BENCH_OP_INSERT_BULK, BENCH_OP_READ_BY_PK},
    {"encrypted within 2x of plain", "coffer_encrypted", "coffer", 0.5, -1, -1},
};
const size_t bench_target_count = sizeof bench_targets / sizeof bench_targets[0];

static int target_applies(const bench_target *t, int op)
{
    return t->only_op < 0 || t->only_op == op || t->also_op == op;
}

int bench_verify(const bench_result *results, size_t count, const uint64_t expected[BENCH_OP_COUNT], FILE *err)
{
    int mismatches = 0;
    for (size_t i = 0; i < count; i++)
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            const bench_result *r = &results[i];
            if (!r->supported[op] || r->check[op] == expected[op])
                continue;
            fprintf(err, "verification failed: %s, %s: got %llu, expected %llu\n", r->engine->key, bench_op_key(op),
                    (unsigned long long)r->check[op], (unsigned long long)expected[op]);
            mismatches++;
        }
    return mismatches;
}

void bench_keep_fastest(bench_result *best, const bench_result *run)
{
    if (!run->completed) {
        *best = *run;
        return;
    }
    for (int op = 0; op < BENCH_OP_COUNT; op++)
        if (run->supported[op] && (!best->supported[op] || run->seconds[op] < best->seconds[op])) {
            best->supported[op] = 1;
            best->seconds[op] = run->seconds[op];
            best->check[op] = run->check[op];
        }
    if (run->peak_rss_bytes > best->peak_rss_bytes)
        best->peak_rss_bytes = run->peak_rss_bytes;
}

const bench_result *bench_find_result(const bench_result *results, size_t count, const char *key)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(results[i].engine->key, key) == 0)
            return &results[i];
    return NULL;
}

double bench_ratio(const bench_result *results, size_t count, const bench_workload *w, bench_op op, const char *a,
                   const char *b)
{
    const bench_result *ra = bench_find_result(results, count, a), *rb = bench_find_result(results, count, b);
    if (!ra || !rb)
        return 0;
    double x = bench_ops_per_second(ra, w, op), y = bench_ops_per_second(rb, w, op);
    return x > 0 && y > 0 ? x / y : 0;
}

/* 1234567 -> "1.23M", 45678 -> "45.7k", 812 -> "812". */
static const char *rate(double v, char *buf, size_t size)
{
    if (v <= 0)
        snprintf(buf, size, "-");
    else if (v >= 1e6)
        snprintf(buf, size, "%.3gM", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, size, "%.3gk", v / 1e3);
    else
        snprintf(buf, size, "%.4g", v);
    return buf;
}

static const char *ratio_text(double v, char *buf, size_t size)
{
    if (v <= 0)
        snprintf(buf, size, "-");
    else if (v < 0.1)
        snprintf(buf, size, "%.2gx", v);
    else
        snprintf(buf, size, "%.2fx", v);
    return buf;
}

static const char *const engine_columns[] = {"coffer", "coffer_encrypted", "lmdb", "sqlite"};
enum { ENGINE_COLUMNS = sizeof engine_columns / sizeof engine_columns[0] };

void bench_print_table(FILE *out, const bench_result *results, size_t count, const bench_workload *w,
                       const bench_run_info *info)
{
    char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
    fprintf(out, "\nCoffer benchmark (C): n = %llu, seed %llu, %s\n", (unsigned long long)w->n,
            (unsigned long long)w->seed, info->machine);
    fprintf(out, "load average %.2f before, %.2f after; fastest of %llu runs per engine; results %s\n\n",
            info->load_before, info->load_after, (unsigned long long)info->repeat,
            info->verified ? "verified against the oracle" : "NOT VERIFIED");
    fprintf(out, "%-50s %9s %9s %9s %9s %9s %9s %9s\n", "operation (ops/s)", "coffer", "encrypted", "lmdb", "sqlite",
            "C/SQLite", "C/LMDB", "enc/plain");
    for (int op = 0; op < BENCH_OP_COUNT; op++) {
        double v[ENGINE_COLUMNS];
        for (size_t k = 0; k < ENGINE_COLUMNS; k++) {
            const bench_result *r = bench_find_result(results, count, engine_columns[k]);
            v[k] = r ? bench_ops_per_second(r, w, op) : 0;
        }
        fprintf(out, "%-50s %9s %9s %9s %9s %9s %9s %9s\n", bench_op_title(op), rate(v[0], a, sizeof a),
                rate(v[1], b, sizeof b), rate(v[2], c, sizeof c), rate(v[3], d, sizeof d),
                ratio_text(bench_ratio(results, count, w, op, "coffer", "sqlite"), e, sizeof e),
                ratio_text(bench_ratio(results, count, w, op, "coffer", "lmdb"), f, sizeof f),
                ratio_text(bench_ratio(results, count, w, op, "coffer_encrypted", "coffer"), g, sizeof g));
    }
    fprintf(out, "\nHow each engine answers (where it is not the obvious way):\n");
    for (size_t i = 0; i < count; i++)
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            const char *plan = results[i].engine->plan ? results[i].engine->plan(op) : NULL;
            if (plan && results[i].supported[op])
                fprintf(out, "  %-18s %-34s %s\n", results[i].engine->key, bench_op_key(op), plan);
        }
    fprintf(out, "\n%-18s %14s %14s %14s\n", "engine", "peak RSS MiB", "harness MiB", "file MiB");
    for (size_t i = 0; i < count; i++)
        fprintf(out, "%-18s %14.1f %14.1f %14.1f\n", results[i].engine->key,
                (double)results[i].peak_rss_bytes / 1048576.0, (double)results[i].harness_rss_bytes / 1048576.0,
                (double)results[i].file_bytes / 1048576.0);
    fprintf(out, "\nTargets (reported, not asserted):\n");
    for (size_t t = 0; t < bench_target_count; t++) {
        const bench_target *tg = &bench_targets[t];
        int missed = 0, measured = 0;
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            if (!target_applies(tg, op))
                continue;
            double r = bench_ratio(results, count, w, op, tg->numerator, tg->denominator);
            if (r <= 0)
                continue;
            measured++;
            if (r < tg->minimum) {
                char text[32];
                fprintf(out, "  MISSED %-30s %-34s %s\n", tg->description, bench_op_key(op),
                        ratio_text(r, text, sizeof text));
                missed++;
            }
        }
        if (measured && !missed)
            fprintf(out, "  met    %s\n", tg->description);
    }
    for (size_t i = 0; i < count; i++)
        if (!results[i].completed)
            fprintf(out, "\nFAILED %s: %s\n", results[i].engine->key, results[i].error);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* Writes `"key": {"engine": value, ...}` for the engines that have one. */
static void json_engine_numbers(FILE *f, const char *key, const bench_result *results, size_t count,
                                uint64_t (*value)(const bench_result *))
{
    fprintf(f, ",\n  \"%s\": {", key);
    for (size_t i = 0; i < count; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", results[i].engine->key, (unsigned long long)value(&results[i]));
    fprintf(f, "}");
}

static uint64_t peak_rss(const bench_result *r) { return r->peak_rss_bytes; }
static uint64_t harness_rss(const bench_result *r) { return r->harness_rss_bytes; }
static uint64_t file_bytes(const bench_result *r) { return r->file_bytes; }

int bench_write_json(const char *path, const bench_result *results, size_t count, const bench_workload *w,
                     const bench_run_info *info)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "coffer-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"machine\": ");
    json_string(f, info->machine);
    fprintf(f, ",\n  \"n\": %llu,\n  \"operations\": {", (unsigned long long)w->n);
    for (int op = 0, first_op = 1; op < BENCH_OP_COUNT; op++) {
        int any = 0;
        for (size_t i = 0; i < count; i++)
            any |= results[i].supported[op];
        if (!any)
            continue;
        fprintf(f, "%s\n    \"%s\": {", first_op ? "" : ",", bench_op_key(op));
        first_op = 0;
        for (size_t i = 0, first = 1; i < count; i++) {
            if (!results[i].supported[op])
                continue;
            fprintf(f, "%s\"%s\": %.1f", first ? "" : ", ", results[i].engine->key,
                    bench_ops_per_second(&results[i], w, op));
            first = 0;
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  },\n  \"language\": \"c\",\n  \"date\": ");
    json_string(f, info->date);
    fprintf(f, ",\n  \"repeat\": %llu", (unsigned long long)info->repeat);
    fprintf(f, ",\n  \"seed\": %llu,\n  \"verified\": %s,\n  \"load_average\": {\"before\": %.2f, \"after\": %.2f}",
            (unsigned long long)w->seed, info->verified ? "true" : "false", info->load_before, info->load_after);
    fprintf(f, ",\n  \"operation_counts\": {");
    for (int op = 0; op < BENCH_OP_COUNT; op++)
        fprintf(f, "%s\"%s\": %llu", op ? ", " : "", bench_op_key(op), (unsigned long long)bench_op_count(w, op));
    fprintf(f, "},\n  \"operation_titles\": {");
    for (int op = 0; op < BENCH_OP_COUNT; op++) {
        fprintf(f, "%s\n    \"%s\": ", op ? "," : "", bench_op_key(op));
        json_string(f, bench_op_title(op));
    }
    fprintf(f, "\n  },\n  \"plans\": {");
    for (size_t i = 0; i < count; i++) {
        fprintf(f, "%s\n    \"%s\": {", i ? "," : "", results[i].engine->key);
        for (int op = 0, first = 1; op < BENCH_OP_COUNT; op++) {
            const char *plan = results[i].engine->plan ? results[i].engine->plan(op) : NULL;
            if (!plan)
                continue;
            fprintf(f, "%s\"%s\": ", first ? "" : ", ", bench_op_key(op));
            json_string(f, plan);
            first = 0;
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  },\n  \"ratios\": {");
    for (int op = 0; op < BENCH_OP_COUNT; op++) {
        fprintf(f, "%s\n    \"%s\": {\"coffer/sqlite\": %.4g, \"coffer/lmdb\": %.4g, \"coffer_encrypted/coffer\": %.4g}",
                op ? "," : "", bench_op_key(op), bench_ratio(results, count, w, op, "coffer", "sqlite"),
                bench_ratio(results, count, w, op, "coffer", "lmdb"),
                bench_ratio(results, count, w, op, "coffer_encrypted", "coffer"));
    }
    fprintf(f, "\n  }");
    json_engine_numbers(f, "peak_rss_bytes", results, count, peak_rss);
    json_engine_numbers(f, "harness_rss_bytes", results, count, harness_rss);
    json_engine_numbers(f, "file_size_bytes", results, count, file_bytes);
    fprintf(f, ",\n  \"targets\": [");
    int first_target = 1;
    for (size_t t = 0; t < bench_target_count; t++)
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            const bench_target *tg = &bench_targets[t];
            double r = target_applies(tg, op) ? bench_ratio(results, count, w, op, tg->numerator, tg->denominator) : 0;
            if (r <= 0)
                continue;
            fprintf(f, "%s\n    {\"target\": ", first_target ? "" : ",");
            json_string(f, tg->description);
            fprintf(f, ", \"operation\": \"%s\", \"ratio\": %.4g, \"met\": %s}", bench_op_key(op), r,
                    r >= tg->minimum ? "true" : "false");
            first_target = 0;
        }
    fprintf(f, "\n  ],\n  \"errors\": {");
    for (size_t i = 0, first = 1; i < count; i++) {
        if (results[i].completed)
            continue;
        fprintf(f, "%s\"%s\": ", first ? "" : ", ", results[i].engine->key);
        json_string(f, results[i].error);
        first = 0;
    }
    fprintf(f, "}\n}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "coffer-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}
