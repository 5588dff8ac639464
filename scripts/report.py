#!/usr/bin/env python3
"""The main job's report, from the JSON files scripts/run-main.sh writes.

    scripts/report.py OUT_DIR [--docs]

Writes OUT_DIR/report.md: the machine, date and commit; jigsaw_bench's
figures and JigsawDB's ratio to each peer; the Optane timing model run;
the machine's floors; disk mode without and with compression (bytes per
entry); two threads (YCSB, readwhilewriting); jigsaw_profile at each scale; format_bench; the bindings' point
reads; and every target these runs measure, met or missed. Draws
jigsaw_bench's throughput and latency percentiles per workload and engine
(OUT_DIR/bench-throughput.png, bench-latency.png) with gnuplot.
With --docs it also rewrites the generated parts of docs/performance.md
("The latest main job run") and README.md ("Results"), between their
"<!-- main-job:... -->" markers, so the documents quote the latest run.
Python's standard library only.
"""
import glob
import json
import os
import re
import subprocess
import sys

PEERS = ("leveldb", "rocksdb", "lmdb")
NAMES = {"jigsaw": "JigsawDB", "leveldb": "LevelDB", "rocksdb": "RocksDB", "lmdb": "LMDB"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def table(header, rows):
    """A Markdown table; numbers right-aligned."""
    def cell(v):
        return v if isinstance(v, str) else ("-" if v is None else f"{v:.3f}")
    def text(i):
        return all(isinstance(r[i], str) and not re.fullmatch(r"[-0-9.,x%; ]*", r[i]) for r in rows)
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 or text(i) else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(out)


def ratio(x):
    return "-" if x is None else f"{x:.2f}x"


class Bench:
    """jigsaw_bench's results: (engine, benchmark) -> us/op of each pass."""

    def __init__(self, data):
        self.data = data
        self.passes = {}
        self.percentiles = {}  # (engine, benchmark) -> [(p50, p99, p99.9) or None] per pass
        self.order = []
        for r in data.get("results", []):
            key = (r["engine"], r["benchmark"])
            self.passes.setdefault(key, []).append(r["micros_per_op"])
            self.percentiles.setdefault(key, []).append(
                (r["p50_us"], r["p99_us"], r["p999_us"]) if "p50_us" in r else None)
            if r["engine"] == "jigsaw":
                self.order.append(r["benchmark"])

    def rows(self):
        """(label, benchmark, pass index) in the order JigsawDB ran them."""
        seen = {}
        for b in self.order:
            i = seen.get(b, 0)
            seen[b] = i + 1
            total = len(self.passes[("jigsaw", b)])
            yield (f"{b} ({i + 1})" if total > 1 else b), b, i

    def us(self, engine, benchmark, i):
        p = self.passes.get((engine, benchmark), [])
        return p[i] if i < len(p) else None

    def speedup(self, peer, benchmark, i):
        ours, theirs = self.us("jigsaw", benchmark, i), self.us(peer, benchmark, i)
        return theirs / ours if ours and theirs else None

    def speedups(self, peer, benchmarks):
        return [s for label, b, i in self.rows() if b in benchmarks
                for s in [self.speedup(peer, b, i)] if s is not None]


# Okabe-Ito colours, one per engine (told apart with colour-blindness too).
COLOURS = {"jigsaw": "#0072B2", "leveldb": "#D55E00", "rocksdb": "#009E73", "lmdb": "#CC79A7"}


def plot_bench(bench, out):
    """bench-throughput.png (ops/s, log scale, a group of bars per workload) and bench-latency.png (p50, p99 and
    p99.9 per workload and engine) in `out`, through gnuplot; the names of what it drew."""
    engines = [e for e in ("jigsaw",) + PEERS if any(k[0] == e for k in bench.passes)]
    rows = list(bench.rows())
    if not engines or not rows:
        return []
    def cell(v):
        return "NaN" if v is None else f"{v:.6g}"
    with open(os.path.join(out, "bench-throughput.dat"), "w") as f:
        f.write("# workload " + " ".join(engines) + "  (ops/s)\n")
        for label, b, i in rows:
            f.write(f'"{label}" ' + " ".join(cell(1e6 / bench.us(e, b, i) if bench.us(e, b, i) else None)
                                             for e in engines) + "\n")
    timed = 0  # rows with percentiles
    with open(os.path.join(out, "bench-latency.dat"), "w") as f:
        f.write("# workload, then p50 p99 p99.9 (us) of each engine: " + " ".join(engines) + "\n")
        for label, b, i in rows:
            if not any(p and p[0] for e in engines for p in bench.percentiles.get((e, b), [])):
                continue  # a scan: not timed per operation
            timed += 1
            cells = []
            for e in engines:
                p = bench.percentiles.get((e, b), [])
                cells += list(p[i]) if i < len(p) and p[i] else [None] * 3
            f.write(f'"{label}" ' + " ".join(cell(v) for v in cells) + "\n")
    bars = lambda column: ", ".join(
        f"'{out}/{{dat}}' using {column(k)}{':xtic(1)' if k == 0 else ''} title '{NAMES[e]}' lc rgb '{COLOURS[e]}'"
        for k, e in enumerate(engines))
    cfg = bench.data.get("config", {})
    gp = [
        "set terminal pngcairo size 1100,440 noenhanced",
        "set style data histograms", "set style histogram clustered gap 1", "set style fill solid 1.0 border -1",
        "set logscale y", "set key outside right top", "set xtics rotate by -25", "set grid ytics",
        f"set output '{out}/bench-throughput.png'",
        f"set title 'jigsaw_bench, {cfg.get('num')} entries, mode {cfg.get('mode')}: throughput (higher is better)'",
        "set ylabel 'operations per second'",
        "plot " + bars(lambda k: k + 2).replace("{dat}", "bench-throughput.dat"),
    ]
    drawn = ["bench-throughput.png"]
    if timed > 0:
        gp += ["set terminal pngcairo size 1100,1000 noenhanced", f"set output '{out}/bench-latency.png'",
               "set yrange [0.1:*]",
               "set multiplot layout 3,1 title 'jigsaw_bench latency percentiles, microseconds (lower is better; "
               "scans are not timed per operation)'"]
        for n, name in enumerate(("p50", "p99", "p99.9")):
            gp += [f"set title '{name}'", "set ylabel 'us'",
                   "plot " + bars(lambda k, n=n: 2 + 3 * k + n).replace("{dat}", "bench-latency.dat")]
        gp += ["unset multiplot"]
        drawn.append("bench-latency.png")
    script = os.path.join(out, "bench.gp")
    with open(script, "w") as f:
        f.write("\n".join(gp) + "\n")
    try:
        subprocess.run(["gnuplot", script], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"report: gnuplot failed ({e}); its script is {script}", file=sys.stderr)
        return []
    return drawn


def target(name, value, met):
    return [name, value, "met" if met else "missed"]


def bench_section(bench, optane, floors, targets):
    m, cfg = bench.data.get("machine", {}), bench.data.get("config", {})
    lines = [f"jigsaw_bench, {cfg.get('num')} entries ({cfg.get('key_size')}-byte keys, "
             f"{cfg.get('value_size')}-byte values), every engine on /dev/shm, JigsawDB in "
             f"{cfg.get('mode')} mode. Microseconds per operation, and JigsawDB's throughput over each peer's "
             "(a repeated benchmark is numbered by its pass):", ""]
    engines = [e for e in ("jigsaw",) + PEERS if any(k[0] == e for k in bench.passes)]
    header = ["benchmark"] + [f"{NAMES[e]} us/op" for e in engines] + [f"vs {NAMES[p]}" for p in engines[1:]]
    rows = []
    for label, b, i in bench.rows():
        rows.append([label] + [bench.us(e, b, i) for e in engines] + [ratio(bench.speedup(p, b, i)) for p in engines[1:]])
    lines += [table(header, rows), ""]
    fills = {"fillseq", "fillsync", "fillrandom", "overwrite"}
    reads = {"readrandom", "readseq"}
    for peer in ("leveldb", "rocksdb"):
        s, seq = bench.speedups(peer, fills | {"readrandom"}), bench.speedups(peer, {"readseq"})
        if s and seq:
            targets.append(target(f"pmem mode at least 3x {NAMES[peer]} (readseq 2.5x)",
                                  f"{min(s):.2f}-{max(s):.2f}x; readseq {min(seq):.2f}-{max(seq):.2f}x",
                                  min(s) >= 3.0 and min(seq) >= 2.5))
    s = bench.speedups("lmdb", fills | {"readrandom"})
    if s:
        targets.append(target("pmem mode at least 2x LMDB on fills and point reads",
                              f"{min(s):.2f}-{max(s):.2f}x", min(s) >= 2.0))
    s = bench.speedups("lmdb", {"readseq"})
    if s:
        targets.append(target("readseq at least LMDB's", f"{min(s):.2f}-{max(s):.2f}x", min(s) >= 1.0))
    if optane:
        ob = Bench(optane)
        rows = [[label, bench.us("jigsaw", b, i), ob.us("jigsaw", b, i),
                 ratio(ob.us("jigsaw", b, i) / bench.us("jigsaw", b, i)) if ob.us("jigsaw", b, i) else "-"]
                for label, b, i in bench.rows()]
        lines += ["JigsawDB under the Optane timing model (docs/emulation.md) beside the run above:", "",
                  table(["benchmark", "emulated pmem us/op", "Optane model us/op", "slower by"], rows), ""]
    if floors:
        rows = [[f["benchmark"], f["floor_micros_per_op"], f.get("jigsaw_micros_per_op"),
                 ratio(f.get("ratio")), f["floor"]] for f in floors.get("floors", [])]
        lines += ["floor_bench: the least any store must do per operation on this machine, beside JigsawDB's "
                  "best pass (\"Physical floors\"):", "",
                  table(["benchmark", "floor us", "JigsawDB us", "ratio", "floor"], rows), ""]
        r = {f["benchmark"]: f.get("ratio") for f in floors.get("floors", [])}
        if r.get("readrandom"):
            targets.append(target("readrandom within 2x of the machine's floor", ratio(r["readrandom"]),
                                  r["readrandom"] <= 2.0))
    return lines


def scale_section(bench, scaled, targets):
    """The workload at a larger scale (run-main.sh --scale) beside the main run, JigsawDB and LMDB, when both are of
    the same commit."""
    if not scaled or scaled.get("jigsaw_commit") != bench.data.get("jigsaw_commit"):
        return []
    big = Bench(scaled)
    n, n_big = bench.data.get("config", {}).get("num"), scaled.get("config", {}).get("num")
    rows = []
    for label, b, i in big.rows():
        rows.append([label, bench.us("jigsaw", b, i), big.us("jigsaw", b, i), bench.us("lmdb", b, i),
                     big.us("lmdb", b, i), ratio(bench.speedup("lmdb", b, i)), ratio(big.speedup("lmdb", b, i))])
    s = big.speedups("lmdb", {"readrandom"})
    if s:
        targets.append(target(f"readrandom at least 2x LMDB at {n_big} entries", f"{min(s):.2f}-{max(s):.2f}x",
                              min(s) >= 2.0))
    return [f"The same workload at {n_big} entries ({scaled.get('config', {}).get('reads')} reads; `run-main.sh "
            f"--scale`), beside the run above at {n}: microseconds per operation, and JigsawDB's throughput over "
            "LMDB's:", "",
            table(["benchmark", f"JigsawDB {n}", f"JigsawDB {n_big}", f"LMDB {n}", f"LMDB {n_big}",
                   f"vs LMDB {n}", f"vs LMDB {n_big}"], rows), ""]


def space_section(plain, packed, targets):
    """Disk mode without and with each engine's table compression: us/op and bytes on disk per entry."""
    if not plain or not packed:
        return []
    a, b = Bench(plain), Bench(packed)
    space = {mode: {s["engine"]: s["bytes_per_entry"] for s in data.get("space", [])}
             for mode, data in (("plain", plain), ("packed", packed))}
    engines = [e for e in ("jigsaw",) + PEERS if e in space["packed"]]
    cfg = packed.get("config", {})
    lines = [f"Disk mode, {cfg.get('num')} entries, values {cfg.get('compression_ratio')} compressible (db_bench's "
             "values), tables uncompressed and then compressed with each engine's own codec (JigsawDB LZ4, LevelDB "
             "and RocksDB Snappy; LMDB has none). Microseconds per operation, and bytes of each engine's files per "
             "entry written:", ""]
    header = ["benchmark"] + [f"{NAMES[e]} {m}" for e in engines for m in ("plain", "compressed")]
    rows = [[label] + [bench.us(e, bm, i) for e in engines for bench in (a, b)] for label, bm, i in b.rows()]
    rows.append(["bytes/entry"] + [f"{space[m].get(e, 0):.1f}" for e in engines for m in ("plain", "packed")])
    lines += [table(header, rows), ""]
    ours, leveldb = space["packed"].get("jigsaw"), space["packed"].get("leveldb")
    if ours and leveldb:
        targets.append(target("disk mode, compressed: bytes/entry at most LevelDB's with Snappy",
                              f"{ours:.1f} vs {leveldb:.1f}", ours <= leveldb))
    slower = [(label, b.us("jigsaw", bm, i) / a.us("jigsaw", bm, i)) for label, bm, i in b.rows()
              if a.us("jigsaw", bm, i) and b.us("jigsaw", bm, i)]
    if slower:
        worst = max(slower, key=lambda x: x[1])
        targets.append(target("compression slows no JigsawDB workload by more than 10%",
                              f"worst {worst[0]} {worst[1]:.2f}x", worst[1] <= 1.10))
    return lines


def writer_rates(data):
    """readwhilewriting's writer puts per second, per engine (the first pass of each)."""
    rates = {}
    for r in data.get("results", []):
        if r["benchmark"] == "readwhilewriting" and "writer_puts" in r and r["engine"] not in rates:
            seconds = r["num"] * r["micros_per_op"] / 1e6
            rates[r["engine"]] = r["writer_puts"] / seconds if seconds > 0 else 0
    return rates


def threads_section(threads, paced, targets):
    """Two threads: YCSB A-F and readwhilewriting as db_bench runs it (the writer as fast as it can), and
    readwhilewriting again with every engine's writer at one rate (--benchmark_write_rate_limit)."""
    if not threads:
        return []
    a = Bench(threads)
    engines = [e for e in ("jigsaw",) + PEERS if any(k[0] == e for k in a.passes)]
    cfg = threads.get("config", {})
    header = ["benchmark"] + [f"{NAMES[e]} us/op" for e in engines] + [f"vs {NAMES[p]}" for p in engines[1:]]
    rows = [[label] + [a.us(e, b, i) for e in engines] + [ratio(a.speedup(p, b, i)) for p in engines[1:]]
            for label, b, i in a.rows()]
    rates = writer_rates(threads)
    ops = cfg.get("reads") if (cfg.get("reads") or 0) > 0 else cfg.get("num")  # -1: --num
    lines = [f"Two threads, {cfg.get('num')} entries, {ops} operations per workload, every engine on /dev/shm: "
             "YCSB A-F (zipfian) and readwhilewriting as db_bench runs it, its writer as fast as it can (puts per "
             "second: " + ", ".join(f"{NAMES[e]} {rates[e]:,.0f}" for e in engines if e in rates) +
             "). Microseconds per operation, and JigsawDB's throughput over each peer's:", "",
             table(header, rows), ""]
    ycsb = {f"ycsb{c}" for c in "abcdef"}
    paced_bench = Bench(paced) if paced else None
    for peer, want in (("lmdb", 2.0), ("leveldb", 3.0)):
        s = a.speedups(peer, ycsb)
        if not s:
            continue
        rww = paced_bench.speedups(peer, {"readwhilewriting"}) if paced_bench else []
        value = f"YCSB {min(s):.2f}-{max(s):.2f}x" + (f"; readwhilewriting at one write rate {min(rww):.2f}x"
                                                        if rww else "")
        targets.append(target(f"two threads: YCSB A-F and readwhilewriting at least {want:g}x {NAMES[peer]}",
                              value, min(s + rww) >= want))
    if paced_bench:
        pcfg = paced.get("config", {})
        prates = writer_rates(paced)
        rows = [[NAMES[e], paced_bench.us(e, "readwhilewriting", 0), f"{prates.get(e, 0):,.0f}",
                 ratio(paced_bench.speedup(e, "readwhilewriting", 0)) if e != "jigsaw" else "-"] for e in engines]
        lines += [f"readwhilewriting with every writer at {pcfg.get('benchmark_write_rate_limit', 0) / 1e6:g} MB/s "
                  "of keys and values (`--benchmark_write_rate_limit`), so that the readers of each engine share "
                  "the machine with the same writes:", "",
                  table(["engine", "reader us/op", "writer puts/s", "JigsawDB's readers vs"], rows), ""]
    return lines


def profile_section(profile, targets):
    num = profile["num"]
    configs = {f"{c['storage']}/{c['format']}": c for c in profile.get("configurations", [])}
    ldb, ldb_nvm = profile.get("leveldb_total_s"), profile.get("leveldb_nvm_total_s")
    rows = []
    for name, c in configs.items():
        rows.append([name, c["total_s"], ratio(c["total_s"] / ldb) if ldb else "-", c["compactions"],
                     f"{100 * c['convert_share']:.1f}%", c["encode_s"], c["write_s"],
                     ratio(c.get("write_over_encode"))])
    if ldb:
        rows.append(["leveldb (disk)", ldb, "1.00x", None, "-", None, None, "-"])
    if ldb_nvm:
        rows.append(["leveldb (/dev/shm)", ldb_nvm, ratio(ldb_nvm / ldb) if ldb else "-", None, "-", None, None, "-"])
    lines = [f"jigsaw_profile, {num} entries: each configuration's total time (load and compactions), its "
             "compactions, the share of compaction time spent converting into and out of the block format, "
             "encode and write seconds, and write over encode (the paper's Figure 4):", "",
             table(["configuration", "total s", "vs LevelDB", "compactions", "convert", "encode s", "write s",
                    "write/encode"], [[v if not isinstance(v, int) else str(v) for v in r] for r in rows]), ""]
    k, c = configs.get("disk+nvm/keyset"), configs.get("disk+nvm/classic")
    dk, dc = configs.get("disk/keyset"), configs.get("disk/classic")
    at = f" ({num} entries)"
    if k:
        targets.append(target("KeySet conversion at most 3% of compaction time, Disk+NVM" + at,
                               f"{100 * k['convert_share']:.1f}%", k["convert_share"] <= 0.03))
    if k and c:
        r = k["total_s"] / c["total_s"]
        targets.append(target("KeySet total at most 0.8x classic's, Disk+NVM" + at, ratio(r), r <= 0.8))
        if k.get("write_over_encode") and c.get("write_over_encode"):
            r = k["write_over_encode"] / c["write_over_encode"]
            targets.append(target("KeySet write/encode at least 5x classic's, Disk+NVM" + at, ratio(r), r >= 5))
    if dk and dc:
        r = dk["total_s"] / dc["total_s"]
        targets.append(target("KeySet total at most 0.9x classic's, disk only" + at, ratio(r), r <= 0.9))
    keysets = [x["total_s"] for x in (k, dk) if x]
    if keysets and ldb:
        best = min(keysets)
        targets.append(target("best KeySet total at most 0.6x LevelDB's" + at, ratio(best / ldb), best / ldb <= 0.6))
        targets.append(target("best KeySet total at most 0.35x LevelDB's and below LevelDB on /dev/shm" + at,
                              f"{ratio(best / ldb)}; {best:.3f} vs {ldb_nvm or 0:.3f} s",
                              best / ldb <= 0.35 and (ldb_nvm is None or best < ldb_nvm)))
    if dk and ldb:
        targets.append(target("disk-only KeySet total at most 0.7x LevelDB's" + at, ratio(dk["total_s"] / ldb),
                              dk["total_s"] / ldb <= 0.7))
    return lines


def format_section(fmt, targets):
    medians = {}
    for b in fmt.get("benchmarks", []):
        if b.get("aggregate_name") == "median" and b.get("items_per_second"):
            medians[b["run_name"].split("/")[0]] = 1e9 / b["items_per_second"]
    rows = []
    for op in ("Build", "BuildNoFilter", "Scan", "Get", "Seek", "Merge", "MergeLeveled", "Flush", "Migrate"):
        keyset = medians.get("BM_KeySet_" + op)
        classic = medians.get("BM_Classic_" + op) or medians.get("BM_Classic_Build")
        if not keyset or not classic:
            continue
        rows.append([op, keyset, classic, ratio(classic / keyset)])
        if op in ("Build", "Scan", "Merge", "MergeLeveled", "Flush"):
            targets.append(target(f"format_bench {op} at least 3x classic", ratio(classic / keyset),
                                  classic / keyset >= 3))
        if op == "Get":
            targets.append(target("format_bench Get at most 400 ns", f"{keyset:.1f} ns", keyset <= 400))
    return ["format_bench: one block of each format, nanoseconds per entry (median of five repetitions):", "",
            table(["op", "KeySet ns", "classic ns", "speed-up"], rows), ""]


def bindings_section(py, node, targets):
    rows = []
    if py:
        rows.append(["Python get", py["get_us"], py["cpp_get_us"], ratio(py["ratio"])])
    if node:
        rows.append(["Node getSync", node["get_sync_us"], node["cpp_get_us"], ratio(node["ratio"])])
    for row in rows:
        r = float(row[3].rstrip("x"))
        targets.append(target(f"{row[0]} at most 2x the C++ Get on the same database", row[3], r <= 2))
    return ["The bindings: a point read through each beside the C++ Get on the same open database (medians):", "",
            table(["read", "binding us", "C++ Get us", "ratio"], rows), ""] if rows else []


def build_report(out):
    bench = load(os.path.join(out, "jigsaw_bench.json"))
    if bench is None:
        sys.exit(f"report: no {out}/jigsaw_bench.json (run ./scripts/run-main.sh)")
    bench = Bench(bench)
    m = bench.data.get("machine", {})
    commit = bench.data.get("jigsaw_commit", "?")
    date = bench.data.get("date", "?")[:10]
    targets = []
    body = [f"Machine: {m.get('host', '?')}, {m.get('cores', '?')} cores, {m.get('cpu', '?')}, Linux "
            f"{m.get('kernel', '?')}. Run {bench.data.get('date', '?')}, JigsawDB "
            f"{bench.data.get('jigsaw_version', '?')} at commit {commit}.", ""]
    body += bench_section(bench, load(os.path.join(out, "jigsaw_bench_optane.json")),
                          load(os.path.join(out, "floor_bench.json")), targets)
    body += scale_section(bench, load(os.path.join(out, "jigsaw_bench_scale.json")), targets)
    body += space_section(load(os.path.join(out, "jigsaw_bench_disk_none.json")),
                          load(os.path.join(out, "jigsaw_bench_disk_default.json")), targets)
    body += threads_section(load(os.path.join(out, "jigsaw_bench_threads.json")),
                            load(os.path.join(out, "jigsaw_bench_threads_paced.json")), targets)
    profiles = [p for p in (load(f) for f in glob.glob(os.path.join(out, "jigsaw_profile-*.json"))) if p]
    for p in sorted(profiles, key=lambda p: p["num"]):
        body += profile_section(p, targets)
    plots = plot_bench(bench, out)
    plots += sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "profile-*.png")))
    if plots:
        body += ["Plots: " + ", ".join(plots) + " (in the output directory).", ""]
    fmt = load(os.path.join(out, "format_bench.json"))
    if fmt:
        body += format_section(fmt, targets)
    body += bindings_section(load(os.path.join(out, "bindings_python.json")),
                             load(os.path.join(out, "bindings_node.json")), targets)
    body += ["Every target these runs measure (why each stands where it does: docs/performance.md, \"Targets\"):", "",
             table(["target", "this run", "status"], targets), ""]
    readme = readme_table(bench, date, commit, m)
    return body, readme


def readme_table(bench, date, commit, machine):
    engines = [e for e in ("jigsaw", "leveldb", "lmdb") if any(k[0] == e for k in bench.passes)]
    rows = []
    for label, b, i in bench.rows():
        rows.append([label] + [bench.us(e, b, i) for e in engines] +
                    [ratio(bench.speedup(p, b, i)) for p in engines[1:] + ["rocksdb"]])
    header = ["benchmark"] + [f"{NAMES[e]} us/op" for e in engines] + \
             [f"vs {NAMES[p]}" for p in engines[1:] + ["rocksdb"]]
    return [f"`./scripts/run-main.sh` on {machine.get('host', '?')} ({machine.get('cores', '?')} cores, "
            f"{machine.get('cpu', '?')}), {date}, commit {commit}; every engine on /dev/shm. JigsawDB's "
            "throughput over each peer's:", "", table(header, rows), ""]


def replace_between(path, name, lines):
    with open(path) as f:
        text = f.read()
    begin, end = f"<!-- main-job:{name}:begin -->", f"<!-- main-job:{name}:end -->"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        sys.exit(f"report: {path} has no {begin} ... {end} markers")
    text = pattern.sub(lambda _: begin + "\n" + "\n".join(lines).rstrip() + "\n" + end, text)
    with open(path, "w") as f:
        f.write(text)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    out = args[0]
    body, readme = build_report(out)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("# The main job's report\n\n" + "\n".join(body))
    print(f"report: {out}/report.md")
    if "--docs" in sys.argv:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        replace_between(os.path.join(root, "docs", "performance.md"), "performance", body)
        replace_between(os.path.join(root, "README.md"), "readme", readme)
        print("report: docs/performance.md and README.md quote this run")


if __name__ == "__main__":
    main()
