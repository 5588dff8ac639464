"""Per-call cost of the Python binding: put and get of N entries.

    PYTHONPATH=<build>/bindings/python python3 -P bindings/python/bench.py [--num N] [--mode M]

(-P: not the source directory's jigsawdb/, which lacks the built module.)

Writes N random 16-byte keys with 100-byte values (the paper's entries,
as jigsaw_bench's fillrandom) one put at a time, then reads each back
with get in another random order (readrandom), and prints microseconds
per call. The same workload through `jigsaw_bench --benchmarks=
fillrandom,readrandom --num=N --mode=M` gives the C++ API's cost; the
difference is what the binding adds per call.
"""
import argparse
import os
import random
import shutil
import tempfile
import time

import jigsawdb


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num", type=int, default=1000000)
    parser.add_argument("--mode", choices=["pmem", "hybrid", "disk"], default="pmem")
    parser.add_argument("--dir", default="/dev/shm")
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
            rng.shuffle(keys)
            start = time.perf_counter()
            found = 0
            for k in keys:
                found += db.get(k) is not None
            get_us = (time.perf_counter() - start) * 1e6 / args.num
        print("mode %s, %d entries: put %.3f us/op, get %.3f us/op (%d found)" %
              (args.mode, args.num, put_us, get_us, found))
    finally:
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
