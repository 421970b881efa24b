#!/usr/bin/env python3
"""Presents benchmark results (C, Swift, Python); the standard library is enough.

  report.py check JSON             checks the JSON has the documented shape
  report.py chart JSON SVG         writes a bar chart (ops/s, log scale)
  report.py publish JSON DOC SVG   writes the chart and replaces the figures
                                   block of DOC (docs/PERFORMANCE.md)

The figures block of C results sits between the markers <!-- figures:begin -->
and <!-- figures:end -->, that of Swift or Python results between
<!-- figures-swift:begin --> and <!-- figures-swift:end --> (or -python); the
rest of DOC is written by hand.
"""
import html
import json
import math
import os
import sys

ENGINES = ["coffer", "coffer_encrypted", "lmdb", "sqlite", "grdb", "sqlite3", "objectbox"]
LABELS = {"coffer": "Coffer", "coffer_encrypted": "Coffer encrypted", "lmdb": "raw LMDB", "sqlite": "SQLite",
          "grdb": "GRDB", "sqlite3": "sqlite3", "objectbox": "ObjectBox"}
# Ratio column headings: "Coffer/SQLite", "encrypted/plain".
SHORT = {"coffer": "Coffer", "lmdb": "LMDB", "sqlite": "SQLite", "grdb": "GRDB", "sqlite3": "sqlite3",
         "objectbox": "ObjectBox"}
LANGUAGES = {"c": "C", "swift": "Swift", "python": "Python"}
COLORS = ["#1f5fa8", "#8a56c2", "#2e9a48", "#e07b1f", "#b03a48", "#6b6b6b"]


def markers(data):
    """The figures block's markers for the language of `data`."""
    language = data.get("language", "c")
    name = "figures" if language == "c" else f"figures-{language}"
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def language_of(data):
    return LANGUAGES.get(data.get("language", "c"), data.get("language", "c"))


def engine_list(data, engines):
    names = [LABELS.get(e, e) for e in engines]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


class BadResults(Exception):
    pass


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise BadResults(f"{path}: {e}")
    check(data, path)
    return data


def check(data, path):
    def need(cond, what):
        if not cond:
            raise BadResults(f"{path}: {what}")

    need(isinstance(data, dict), "the top level is not an object")
    need(isinstance(data.get("machine"), str) and data["machine"], '"machine" is not a non-empty string')
    need(isinstance(data.get("n"), int) and data["n"] > 0, '"n" is not a positive integer')
    ops = data.get("operations")
    need(isinstance(ops, dict) and ops, '"operations" is not a non-empty object')
    for op, engines in ops.items():
        need(isinstance(engines, dict) and engines, f'operation "{op}" has no engines')
        for engine, rate in engines.items():
            need(isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > 0,
                 f'operation "{op}", engine "{engine}": {rate!r} is not a positive ops/s figure')
    need(data.get("verified") is True, '"verified" is not true: some engine gave a wrong answer or failed')


def engines_of(data):
    seen = {e for rates in data["operations"].values() for e in rates}
    return [e for e in ENGINES if e in seen] + sorted(seen - set(ENGINES))


def title_of(data, op):
    return data.get("operation_titles", {}).get(op, op.replace("_", " "))


def short_rate(v):
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if v >= div * 10 or (suffix == "M" and v >= div):
            return f"{v / div:.3g}{suffix}"
    return f"{v:.4g}"


def axis_label(v):
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def chart(data, svg_path):
    ops = list(data["operations"])
    engines = engines_of(data)
    rates = [r for o in ops for r in data["operations"][o].values()]
    lo = 10 ** math.floor(math.log10(min(rates)))
    hi = 10 ** math.ceil(math.log10(max(rates)))
    if hi <= lo:
        hi = lo * 10
    left, plot_w, right = 330, 520, 70
    bar_h, gap = 11, 16
    group_h = bar_h * len(engines) + gap
    top = 96
    height = top + group_h * len(ops) + 30
    width = left + plot_w + right

    def x(v):
        return left + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="22" font-size="15" font-weight="bold">'
           f'{html.escape(engine_list(data, [e for e in engines if e != "coffer_encrypted"]))} in {language_of(data)}, '
           f'n = {data["n"]:,} (operations per second, log scale; longer is faster)</text>',
           f'<text x="10" y="40" fill="#555">{html.escape(data["machine"])}</text>']
    for i, e in enumerate(engines):
        lx = 10 + i * 150
        out.append(f'<rect x="{lx}" y="52" width="12" height="12" fill="{COLORS[i % len(COLORS)]}"/>')
        out.append(f'<text x="{lx + 17}" y="62">{html.escape(LABELS.get(e, e))}</text>')
    decade = lo
    while decade <= hi:
        gx = x(decade)
        out.append(f'<line x1="{gx:.1f}" y1="{top - 12}" x2="{gx:.1f}" y2="{height - 26}" stroke="#ddd"/>')
        out.append(f'<text x="{gx:.1f}" y="{top - 16}" text-anchor="middle" fill="#555">{axis_label(decade)}</text>')
        decade *= 10
    for g, op in enumerate(ops):
        y0 = top + g * group_h
        out.append(f'<text x="{left - 8}" y="{y0 + bar_h * len(engines) / 2 + 4:.1f}" text-anchor="end">'
                   f'{html.escape(title_of(data, op))}</text>')
        for i, e in enumerate(engines):
            v = data["operations"][op].get(e)
            if not v:
                continue
            y = y0 + i * bar_h
            out.append(f'<rect x="{left}" y="{y}" width="{max(x(v) - left, 1):.1f}" height="{bar_h - 2}" '
                       f'fill="{COLORS[i % len(COLORS)]}"><title>{html.escape(LABELS.get(e, e))}: '
                       f'{v:,.0f}/s</title></rect>')
            out.append(f'<text x="{x(v) + 4:.1f}" y="{y + bar_h - 3}" font-size="10" fill="#333">'
                       f'{short_rate(v)}</text>')
    out.append(f'<text x="10" y="{height - 8}" fill="#555" font-size="11">{html.escape(data.get("date", ""))}, '
               f'load average {data.get("load_average", {}).get("before", "?")} before the run; '
               f'source: {html.escape(data.get("source", "bench-results.json"))}</text>')
    out.append("</svg>")
    with open(svg_path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def ratio_cell(v):
    if not v:
        return "-"
    return f"{v:.2f}x" if v >= 0.1 else f"{v:.2g}x"


def ratio_pairs(data):
    """The ratio columns: the pairs the results name, in their order."""
    pairs = []
    for rates in data.get("ratios", {}).values():
        for key in rates:
            pair = tuple(key.split("/", 1))
            if len(pair) == 2 and pair not in pairs:
                pairs.append(pair)
    return pairs


def pair_heading(a, b):
    return "encrypted/plain" if (a, b) == ("coffer_encrypted", "coffer") else f"{SHORT.get(a, a)}/{SHORT.get(b, b)}"


def figures_markdown(data, svg_name):
    engines = engines_of(data)
    pairs = ratio_pairs(data)
    begin, end = markers(data)
    load = data.get("load_average", {})
    versions = data.get("engine_versions", {})
    lines = [begin,
             f"Measured {data.get('date', '?')} with N = {data['n']:,} on: {data['machine']}. "
             f"Load average {load.get('before', '?')} before and {load.get('after', '?')} after the run. "
             f"Each figure is the fastest of {data.get('repeat', 1)} runs per engine, run in turn; "
             "every run's answers matched the oracle." +
             (" Versions: " + ", ".join(f"{LABELS.get(e, e)} {v}" for e, v in versions.items()) + "."
              if versions else ""),
             "",
             f"![{engine_list(data, engines)} in {language_of(data)}, operations per second]({svg_name})",
             "",
             "| operation | " + " | ".join(LABELS.get(e, e) for e in engines) + " | " +
             " | ".join(pair_heading(a, b) for a, b in pairs) + " |",
             "|---|" + "---:|" * (len(engines) + len(pairs))]
    for op, rates in data["operations"].items():
        cells = [f"{rates[e]:,.0f}" if e in rates else "-" for e in engines]
        ratio = lambda a, b: rates[a] / rates[b] if a in rates and b in rates else 0
        plans = sorted({p for e in engines for p in [data.get("plans", {}).get(e, {}).get(op)]
                        if p and e.startswith("coffer")})
        label = title_of(data, op) + (f" ({', '.join(plans)})" if plans else "")
        lines.append(f"| {label} | " + " | ".join(cells) + " | " +
                     " | ".join(ratio_cell(ratio(a, b)) for a, b in pairs) + " |")
    lines += ["", "| engine | peak RSS | of which the harness | file size with N objects |", "|---|---:|---:|---:|"]
    for e in engines:
        mib = lambda key: data.get(key, {}).get(e, 0) / 1048576
        lines.append(f"| {LABELS.get(e, e)} | {mib('peak_rss_bytes'):.1f} MiB | "
                     f"{mib('harness_rss_bytes'):.1f} MiB | {mib('file_size_bytes'):.1f} MiB |")
    missed = [t for t in data.get("targets", []) if not t["met"]]
    met = sorted({t["target"] for t in data.get("targets", [])} - {t["target"] for t in missed})
    lines += ["", "Targets met: " + (", ".join(met) if met else "none") + "."]
    if missed:
        lines += ["", "Targets missed:", ""]
        lines += [f"- {t['target']}: {t['operation']} at {ratio_cell(t['ratio'])}" for t in missed]
    for e in engines:
        absent = [title_of(data, op) for op, rates in data["operations"].items() if e not in rates]
        if absent:
            lines += ["", f"Left out where it cannot do the same work: {LABELS.get(e, e)} ({'; '.join(absent)})."]
    for e, why in data.get("unavailable", {}).items():
        lines += ["", f"Not measured: {LABELS.get(e, e)} ({why})."]
    lines.append(end)
    return "\n".join(lines)


def publish(data, doc_path, svg_path):
    chart(data, svg_path)
    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    begin, end_marker = markers(data)
    start, end = doc.find(begin), doc.find(end_marker)
    if start < 0 or end < start:
        raise BadResults(f"{doc_path}: no {begin} ... {end_marker} block to replace")
    svg_name = os.path.relpath(svg_path, os.path.dirname(os.path.abspath(doc_path)))
    doc = doc[:start] + figures_markdown(data, svg_name) + doc[end + len(end_marker):]
    with open(doc_path, "w", encoding="utf-8") as f:
        f.write(doc)


def main(argv):
    usage = "usage: report.py check JSON | chart JSON SVG | publish JSON DOC SVG"
    commands = {"check": 1, "chart": 2, "publish": 3}
    if len(argv) < 2 or argv[1] not in commands or len(argv) != 2 + commands[argv[1]]:
        print(usage, file=sys.stderr)
        return 2
    try:
        data = load(argv[2])
        data["source"] = os.path.basename(argv[2])
        if argv[1] == "chart":
            chart(data, argv[3])
        elif argv[1] == "publish":
            publish(data, argv[3], argv[4])
    except (BadResults, OSError) as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
