"""Per-call cost of the Python binding: put and get of N entries.

    PYTHONPATH=<build>/bindings/python python3 -P bindings/python/bench.py [--num N] [--mode M] [--rounds R] [--json F]

(-P: not the source directory's jigsawdb/, which lacks the built module.)

Writes N random 16-byte keys with 100-byte values (the paper's entries,
as jigsaw_bench's fillrandom) one put at a time, then reads each back
in another random order (its keys copied into new bytes objects in that
order), R rounds after one that warms the caches. Each round reads every
key once on the same open database, half of them (alternate chunks of
4096 keys) with db.get from Python and half with the C++ API's DB::Get
called from C++ (jigsawdb._jigsawdb._cpp_get_loop: one ReadOptions and
one value string reused, as a C++ program reads); the halves swap each
round. Prints microseconds per call of each and their ratio, per round
and as the median of the rounds.
"""
import argparse
import json
import os
import random
import shutil
import tempfile
import statistics
import time

import jigsawdb
from jigsawdb import _jigsawdb


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num", type=int, default=1000000)
    parser.add_argument("--mode", choices=["pmem", "hybrid", "disk"], default="pmem")
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    rng = random.Random(301)
    keys = [b"%016d" % i for i in range(args.num)]
    rng.shuffle(keys)
    value = bytes(rng.getrandbits(8) for _ in range(100))
    path = tempfile.mkdtemp(prefix="jigsawdb-bench-", dir=args.dir)
    try:
        with jigsawdb.DB(os.path.join(path, "db"), create_if_missing=True, mode=args.mode,
                         pool_size=4 << 30) as db:
            start = time.perf_counter()
            for k in keys:
                db.put(k, value)
            put_us = (time.perf_counter() - start) * 1e6 / args.num
            # The read order, each key a new bytes object made in that order:
            # the keys lie in memory in the order the loops read them, so no
            # loop -- the C++ one included -- waits on a cache miss to find
            # its next key.
            rng.shuffle(keys)
            keys = [bytes(bytearray(k)) for k in keys]
            # Each round splits the keys into chunks of 4096 and gives them
            # in turn to the two loops (the other half the next round), so
            # both meet the same noise and neither finds the blocks the
            # other just read in its caches.
            chunk = 4096
            ratios, gets, cpps = [], [], []
            for r in range(args.rounds + 1):
                seconds = [0.0, 0.0]
                found = [0, 0]
                for c, i in enumerate(range(0, args.num, chunk)):
                    part = keys[i:i + chunk]
                    if (c + r) % 2 == 0:
                        start = time.perf_counter()
                        n = 0
                        for k in part:
                            n += db.get(k) is not None
                        seconds[0] += time.perf_counter() - start
                        found[0] += n
                    else:
                        n, s = _jigsawdb._cpp_get_loop(db, part)
                        seconds[1] += s
                        found[1] += n
                if sum(found) != args.num:
                    raise SystemExit("found %d of %d keys" % (sum(found), args.num))
                if r == 0:
                    continue  # warms the caches
                get_us, cpp_us = (seconds[i] * 1e6 / found[i] for i in range(2))
                ratios.append(get_us / cpp_us)
                gets.append(get_us)
                cpps.append(cpp_us)
                print("Python, round %d: get %.3f us/op, C++ Get %.3f us/op, ratio %.2f" % (r, get_us, cpp_us, ratios[-1]))
        result = {"binding": "python", "mode": args.mode, "num": args.num, "rounds": args.rounds, "put_us": put_us,
                  "get_us": statistics.median(gets), "cpp_get_us": statistics.median(cpps),
                  "ratio": statistics.median(ratios)}
        print("Python, mode %s, %d entries: put %.3f us/op; medians of %d rounds: get %.3f us/op, C++ Get %.3f us/op, "
              "ratio %.2f" % (args.mode, args.num, put_us, args.rounds, result["get_us"], result["cpp_get_us"],
                              result["ratio"]))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
    finally:
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
