#!/usr/bin/env python3
"""scripts/report.py: the main job's report from its JSON files.

Runs the script on small JSON files shaped like the benchmarks' output and
checks what it computes (ratios, targets met and missed) and how it
rewrites the documents' generated parts. Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import report  # noqa: E402


def bench_json(jigsaw, leveldb, lmdb):
    """jigsaw_bench --json with one pass of each benchmark but readrandom (two)."""
    results = []
    for engine, figures in (("jigsaw", jigsaw), ("leveldb", leveldb), ("lmdb", lmdb)):
        for benchmark, micros in figures:
            results.append({"engine": engine, "benchmark": benchmark, "micros_per_op": micros})
    return {"machine": {"host": "testhost", "cores": 2, "cpu": "Test CPU", "kernel": "6.1"},
            "config": {"num": 1000, "key_size": 16, "value_size": 100, "mode": "pmem"},
            "jigsaw_commit": "abc123", "jigsaw_version": "0.1.0", "date": "2026-12-04T00:00:00Z",
            "results": results}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = self.dir.name
        jigsaw = [("fillrandom", 1.0), ("readrandom", 0.5), ("readseq", 0.02), ("readrandom", 0.4)]
        leveldb = [("fillrandom", 4.0), ("readrandom", 2.0), ("readseq", 0.06), ("readrandom", 2.0)]
        lmdb = [("fillrandom", 1.5), ("readrandom", 1.1), ("readseq", 0.05), ("readrandom", 1.0)]
        self.write("jigsaw_bench.json", bench_json(jigsaw, leveldb, lmdb))

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, data):
        with open(os.path.join(self.out, name), "w") as f:
            json.dump(data, f)

    def targets(self, body):
        rows = [line for line in "\n".join(body).splitlines() if line.startswith("| ") and line.endswith((" met |", " missed |"))]
        return {r.split(" | ")[0][2:]: r for r in rows}

    def test_ratios_and_passes(self):
        body, readme = report.build_report(self.out)
        text = "\n".join(body)
        self.assertIn("| readrandom (1) | 0.500 | 2.000 | 1.100 | 4.00x | 2.20x |", text)
        self.assertIn("| readrandom (2) | 0.400 | 2.000 | 1.000 | 5.00x | 2.50x |", text)
        self.assertIn("| fillrandom | 1.000 | 4.000 | 1.500 | 4.00x | 1.50x |", text)
        self.assertIn("commit abc123", "\n".join(readme))

    def test_targets_are_scored(self):
        body, _ = report.build_report(self.out)
        targets = self.targets(body)
        # Against LevelDB every ratio is at least 3x, readseq 3x >= 2.5x.
        self.assertTrue(targets["pmem mode at least 3x LevelDB (readseq 2.5x)"].endswith("| met |"))
        # fillrandom leads LMDB by only 1.5x.
        self.assertTrue(targets["pmem mode at least 2x LMDB on fills and point reads"].endswith("| missed |"))
        self.assertTrue(targets["readseq at least LMDB's"].endswith("| met |"))

    def test_profile_and_format_targets(self):
        def config(storage, fmt, total, share, woe):
            return {"storage": storage, "format": fmt, "total_s": total, "compactions": 3, "convert_share": share,
                    "encode_s": 0.1, "write_s": 0.1, "write_over_encode": woe}
        self.write("jigsaw_profile-1000.json", {
            "num": 1000, "leveldb_total_s": 10.0, "leveldb_nvm_total_s": 8.0,
            "configurations": [config("disk+nvm", "keyset", 2.0, 0.02, 1.0), config("disk+nvm", "classic", 4.0, 0.4, 0.1),
                               config("disk", "keyset", 9.5, 0.1, 1.0), config("disk", "classic", 10.0, 0.2, 0.5)]})
        medians = [("BM_KeySet_Build", 30.0), ("BM_Classic_Build", 90.0), ("BM_KeySet_Get", 500.0),
                   ("BM_Classic_Get", 900.0)]
        self.write("format_bench.json", {"benchmarks": [
            {"run_name": name + "/repeats:5", "aggregate_name": "median", "items_per_second": 1e9 / ns}
            for name, ns in medians]})
        body, _ = report.build_report(self.out)
        targets = self.targets(body)
        self.assertIn("| 2.0% | met |", targets["KeySet conversion at most 3% of compaction time, Disk+NVM (1000 entries)"])
        self.assertIn("| 0.50x | met |", targets["KeySet total at most 0.8x classic's, Disk+NVM (1000 entries)"])
        self.assertIn("| 10.00x | met |", targets["KeySet write/encode at least 5x classic's, Disk+NVM (1000 entries)"])
        self.assertIn("| 0.95x | missed |", targets["KeySet total at most 0.9x classic's, disk only (1000 entries)"])
        self.assertIn("| 0.95x | missed |", targets["disk-only KeySet total at most 0.7x LevelDB's (1000 entries)"])
        self.assertIn("| 3.00x | met |", targets["format_bench Build at least 3x classic"])
        self.assertIn("| 500.0 ns | missed |", targets["format_bench Get at most 400 ns"])

    def test_space_and_scale_sections(self):
        plain = bench_json([("fillrandom", 2.0), ("readrandom", 1.0)], [("fillrandom", 4.0), ("readrandom", 3.0)],
                           [("fillrandom", 3.0), ("readrandom", 1.0)])
        plain["space"] = [{"engine": "jigsaw", "bytes_per_entry": 105.0}, {"engine": "leveldb", "bytes_per_entry": 85.0}]
        packed = bench_json([("fillrandom", 1.8), ("readrandom", 1.5)], [("fillrandom", 3.5), ("readrandom", 3.0)],
                            [("fillrandom", 3.0), ("readrandom", 1.0)])
        packed["space"] = [{"engine": "jigsaw", "bytes_per_entry": 74.0}, {"engine": "leveldb", "bytes_per_entry": 72.0}]
        self.write("jigsaw_bench_disk_none.json", plain)
        self.write("jigsaw_bench_disk_default.json", packed)
        scaled = bench_json([("fillrandom", 1.2), ("readrandom", 0.5), ("readseq", 0.03), ("readrandom", 0.45)],
                            [], [("fillrandom", 3.0), ("readrandom", 1.2), ("readseq", 0.05), ("readrandom", 1.0)])
        scaled["config"]["num"] = 10000
        self.write("jigsaw_bench_scale.json", scaled)
        body, _ = report.build_report(self.out)
        text = "\n".join(body)
        t = self.targets(body)
        self.assertIn("74.0 vs 72.0 | missed", t["disk mode, compressed: bytes/entry at most LevelDB's with Snappy"])
        self.assertIn("worst readrandom 1.50x | missed", t["compression slows no JigsawDB workload by more than 10%"])
        self.assertIn("| bytes/entry | 105.0 | 74.0 | 85.0 | 72.0 |", text)
        self.assertIn("| readrandom (2) | 0.400 | 0.450 | 1.000 | 1.000 | 2.50x | 2.22x |", text)
        self.assertIn("2.22-2.40x | met", t["readrandom at least 2x LMDB at 10000 entries"])
        # The throughput plot (gnuplot is a dependency of the main job); no latency plot without percentiles.
        self.assertTrue(os.path.getsize(os.path.join(self.out, "bench-throughput.png")) > 0)
        self.assertFalse(os.path.exists(os.path.join(self.out, "bench-latency.png")))
        # A scale run of another commit is not reported beside this one.
        scaled["jigsaw_commit"] = "other"
        self.write("jigsaw_bench_scale.json", scaled)
        body, _ = report.build_report(self.out)
        self.assertNotIn("readrandom at least 2x LMDB at 10000 entries", self.targets(body))

    def test_threads_section(self):
        ycsb = [(f"ycsb{c}", 0.5) for c in "abcdef"]
        threads = bench_json(ycsb + [("readwhilewriting", 0.5)],
                             [(b, 2.0) for b, _ in ycsb] + [("readwhilewriting", 2.0)],
                             [(b, 1.1) for b, _ in ycsb] + [("readwhilewriting", 1.2)])
        paced = bench_json([("readwhilewriting", 0.4)], [("readwhilewriting", 2.0)], [("readwhilewriting", 1.0)])
        for data, puts in ((threads, {"jigsaw": 400000, "leveldb": 100000, "lmdb": 50000}),
                           (paced, {"jigsaw": 40000, "leveldb": 40000, "lmdb": 40000})):
            data["config"]["benchmark_write_rate_limit"] = 10000000
            for r in data["results"]:
                r["num"] = 1000000
                if r["benchmark"] == "readwhilewriting":
                    r["writer_puts"] = puts[r["engine"]]
        self.write("jigsaw_bench_threads.json", threads)
        body, _ = report.build_report(self.out)
        t = self.targets(body)
        # YCSB 2.2x LMDB and 4x LevelDB; without the paced run only YCSB is scored.
        self.assertIn("| YCSB 2.20-2.20x | met |", t["two threads: YCSB A-F and readwhilewriting at least 2x LMDB"])
        self.assertIn("| YCSB 4.00-4.00x | met |", t["two threads: YCSB A-F and readwhilewriting at least 3x LevelDB"])
        # Each writer's puts per second: 400000 puts while the readers ran 0.5 s.
        self.assertIn("JigsawDB 800,000, LevelDB 50,000, LMDB 41,667", "\n".join(body))
        self.write("jigsaw_bench_threads_paced.json", paced)
        body, _ = report.build_report(self.out)
        t = self.targets(body)
        # At one write rate readwhilewriting leads LMDB by 2.5x and LevelDB by 5x.
        self.assertIn("readwhilewriting at one write rate 2.50x | met",
                      t["two threads: YCSB A-F and readwhilewriting at least 2x LMDB"])
        # Readers' us/op, each writer's puts per second (40000 puts while its readers ran), the ratio.
        self.assertIn("| LMDB | 1.000 | 40,000 | 2.50x |", "\n".join(body))
        paced["results"][0]["micros_per_op"] = 0.9  # JigsawDB's readers now 1.11x LMDB's
        self.write("jigsaw_bench_threads_paced.json", paced)
        body, _ = report.build_report(self.out)
        self.assertIn("| missed |", self.targets(body)["two threads: YCSB A-F and readwhilewriting at least 2x LMDB"])

    def test_generated_parts_are_replaced_and_the_rest_kept(self):
        path = os.path.join(self.out, "doc.md")
        with open(path, "w") as f:
            f.write("before\n<!-- main-job:x:begin -->\nold figures\n<!-- main-job:x:end -->\nafter\n")
        report.replace_between(path, "x", ["new figures", ""])
        with open(path) as f:
            self.assertEqual(f.read(), "before\n<!-- main-job:x:begin -->\nnew figures\n<!-- main-job:x:end -->\nafter\n")
        with self.assertRaises(SystemExit):
            report.replace_between(path, "missing", ["anything"])

    def test_the_script_writes_the_report(self):
        run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), self.out],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(self.out, "report.md")) as f:
            self.assertIn("| readseq | 0.020 | 0.060 | 0.050 | 3.00x | 2.50x |", f.read())

    def test_without_the_benchmark_results_it_says_so(self):
        os.remove(os.path.join(self.out, "jigsaw_bench.json"))
        run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), self.out],
                             capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("run-main.sh", run.stderr)


if __name__ == "__main__":
    unittest.main()
