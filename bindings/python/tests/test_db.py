"""The Python binding against the engine, in pmem, hybrid and disk mode."""
import os
import sys
import threading
import time

import pytest

import jigsawdb


def key(i):
    return b"key%06d" % i


def fill(db, n, tag=b"v"):
    model = {}
    with db.write_batch() as batch:
        for i in range(n):
            batch.put(key(i), tag + b"%d" % i)
            model[key(i)] = tag + b"%d" % i
    return model


def test_put_get_delete(open_db):
    db = open_db()
    assert db.get(b"missing") is None
    assert db.get(b"missing", b"fallback") == b"fallback"
    db.put(b"a", b"1")
    db.put(b"b", b"\x00\xff" * 100, sync=True)
    assert db.get(b"a") == b"1"
    assert db.get(b"b") == b"\x00\xff" * 100
    assert db.get(b"a", verify_checksums=True) == b"1"
    db.delete(b"a")
    assert db.get(b"a") is None
    db.delete(b"never-there")
    assert isinstance(db.latest_sequence_number, int) and db.latest_sequence_number == 4


def test_get_by_position_and_by_keyword(open_db):
    # get(key) and get(key, default) take a fast path; every other form
    # takes the full one, and all of them answer alike.
    db = open_db()
    db.put(b"k", b"v")

    class Key(bytes):
        pass

    assert db.get(b"k") == db.get(key=b"k") == db.get(Key(b"k")) == b"v"
    assert db.get(b"absent", b"d") == db.get(b"absent", default=b"d") == db.get(key=b"absent", default=b"d") == b"d"
    assert db.get(b"absent", 7) == 7
    assert db.get(b"k", None, verify_checksums=True) == b"v"
    assert jigsawdb.DB.get(db, b"k") == b"v"
    for bad in (lambda: db.get(), lambda: db.get(b"k", None, None), lambda: db.get(b"k", colour=1),
                lambda: db.get(bytearray(b"k")), lambda: jigsawdb.DB.get(object(), b"k")):
        with pytest.raises(TypeError):
            bad()
    big = bytes(range(256)) * 8192  # 2 MiB: past the kept buffer's 1 MiB
    db.put(b"big", big)
    assert db.get(b"big") == big and db.get(b"k") == b"v"


def test_wrong_types_are_type_errors(open_db):
    db = open_db()
    with pytest.raises(TypeError):
        db.put("text", b"x")
    with pytest.raises(TypeError):
        db.put(b"k", 5)
    with pytest.raises(TypeError):
        db.get(None)
    with pytest.raises(TypeError):
        db.iterator(start="a")
    with pytest.raises(ValueError):
        jigsawdb.DB("/dev/shm/unused", mode="tape")


def test_write_batches(open_db):
    db = open_db()
    with db.write_batch() as batch:
        batch.put(b"a", b"1")
        batch.put(b"b", b"2")
        batch.delete(b"a")
        assert len(batch) == 3
    assert db.get(b"a") is None and db.get(b"b") == b"2"
    # A transaction is not written when its block raises.
    with pytest.raises(RuntimeError):
        with db.write_batch(transaction=True) as batch:
            batch.put(b"c", b"3")
            raise RuntimeError("abort")
    assert db.get(b"c") is None
    # Without transaction=True it is (plyvel's rule).
    with pytest.raises(RuntimeError):
        with db.write_batch() as batch:
            batch.put(b"d", b"4")
            raise RuntimeError("written anyway")
    assert db.get(b"d") == b"4"
    batch = db.write_batch(sync=True)
    batch.put(b"e", b"5")
    batch.clear()
    batch.put(b"f", b"6")
    assert batch.approximate_size > 0
    batch.write()
    assert db.get(b"e") is None and db.get(b"f") == b"6"
    with db.write_batch() as batch:
        batch.delete_range(b"a", b"e")
    assert db.get(b"b") is None and db.get(b"d") is None and db.get(b"f") == b"6"


def test_iterators_match_a_model(open_db):
    db = open_db()
    model = fill(db, 3000)
    keys = sorted(model)
    assert list(db) == [(k, model[k]) for k in keys]
    assert list(db.iterator(reverse=True)) == [(k, model[k]) for k in reversed(keys)]
    assert list(db.iterator(include_value=False)) == keys
    assert list(db.iterator(include_key=False))[:2] == [model[keys[0]], model[keys[1]]]
    lo, hi = key(100), key(200)
    cases = [
        (dict(start=lo, stop=hi), [k for k in keys if lo <= k < hi]),
        (dict(start=lo, stop=hi, include_start=False, include_stop=True), [k for k in keys if lo < k <= hi]),
        (dict(start=lo), [k for k in keys if k >= lo]),
        (dict(stop=hi, include_stop=True), [k for k in keys if k <= hi]),
        (dict(prefix=b"key0001"), [k for k in keys if k.startswith(b"key0001")]),
        (dict(prefix=b"nothing"), []),
        (dict(start=b"zzz"), []),
    ]
    for args, want in cases:
        assert list(db.iterator(include_value=False, **args)) == want, args
        assert list(db.iterator(include_value=False, reverse=True, **args)) == want[::-1], args
    with pytest.raises(TypeError):
        db.iterator(prefix=b"key", start=b"a")
    # Flushed and compacted: the same.
    db.compact_range()
    assert list(db.iterator(include_value=False, start=lo, stop=hi)) == [k for k in keys if lo <= k < hi]


def expected_after_seek(keys, lo, hi, include_start, include_stop, reverse, target):
    """What a model says an iterator over [lo, hi) (with the include flags)
    yields after seek(target)."""
    def inside(k):
        return ((lo is None or k > lo or (include_start and k == lo)) and
                (hi is None or k < hi or (include_stop and k == hi)))
    in_range = [k for k in keys if inside(k)]
    if reverse:
        return [k for k in reversed(in_range) if k <= target]
    return [k for k in in_range if k >= target]


def test_seeks_land_where_a_model_says(open_db):
    db = open_db()
    keys = sorted(fill(db, 400))[::2]  # every other key present
    for k in sorted(fill(db, 400)):
        if k not in keys:
            db.delete(k)
    db.compact_range(start=key(0), stop=key(200))  # half in tables, half not
    targets = [b"", key(0), key(1), key(57), key(100), key(101), key(250), key(398), key(399), b"zzz"]
    ranges = [(None, None, True, False), (key(100), key(300), True, False),
              (key(100), key(300), False, True), (key(101), key(299), True, True)]
    for lo, hi, include_start, include_stop in ranges:
        for reverse in (False, True):
            it = db.iterator(include_value=False, reverse=reverse, start=lo, stop=hi,
                             include_start=include_start, include_stop=include_stop)
            for target in targets:
                it.seek(target)
                want = expected_after_seek(keys, lo, hi, include_start, include_stop, reverse, target)
                assert list(it) == want, (lo, hi, include_start, include_stop, reverse, target)
            every = expected_after_seek(keys, lo, hi, include_start, include_stop, False, b"")
            it.seek_to_start()
            assert next(it, None) == (every[0] if every else None)
            it.seek_to_stop()
            assert next(it, None) == (every[-1] if every else None)


def test_a_refreshed_iterator_reads_what_a_new_one_would(open_db):
    db = open_db()
    model = fill(db, 1000)
    it = db.iterator(start=key(100), stop=key(900))
    snap = db.snapshot()
    at_snapshot = snap.iterator(include_value=False)
    assert len(list(it)) == 800  # exhausted; refresh starts it again
    for round_ in range(4):
        for i in range(round_, 1000, 7):
            db.put(key(i), b"r%d" % round_)
            model[key(i)] = b"r%d" % round_
        for i in range(round_ * 3, 1000, 11):
            db.delete(key(i))
            model.pop(key(i), None)
        if round_ == 2:
            db.compact_range()
        it.refresh()
        want = [(k, model[k]) for k in sorted(model) if key(100) <= k < key(900)]
        assert list(it) == want
        assert list(it) == []  # until the next refresh
        at_snapshot.refresh()
        assert list(at_snapshot) == [key(i) for i in range(1000)]
    it.refresh()
    it.seek(key(500))
    assert next(it)[0] == min(k for k in model if k >= key(500))
    it.close()
    with pytest.raises(jigsawdb.Error, match="closed"):
        it.refresh()
    with pytest.raises(jigsawdb.Error, match="closed"):
        it.seek(key(1))
    at_snapshot.close()
    snap.release()


def test_snapshots_keep_what_they_saw(open_db):
    db = open_db()
    model = fill(db, 500)
    with db.snapshot() as snapshot:
        assert snapshot.sequence == db.latest_sequence_number
        for i in range(500):
            db.put(key(i), b"new")
        db.delete_range(key(0), key(100))
        db.compact_range()
        assert snapshot.get(key(5)) == model[key(5)]
        assert db.get(key(5)) is None
        assert db.get(key(200)) == b"new"
        assert list(snapshot.iterator(include_value=False)) == sorted(model)
        assert dict(snapshot.iterator()) == model
    with pytest.raises(jigsawdb.Error):
        snapshot.get(key(5))


def test_properties_sizes_and_checkpoints(open_db, scratch):
    db = open_db()
    fill(db, 5000)
    db.compact_range(start=key(0), stop=key(4999))
    assert db.get_property("jigsaw.levels").startswith("level")
    assert db.get_property("jigsaw.num-tables-at-level6") == "1"
    assert db.get_property("jigsaw.no-such-property") is None
    sizes = db.approximate_sizes([(key(0), key(5000)), (b"x", b"y")])
    assert len(sizes) == 2 and sizes[0] > 0 and sizes[1] == 0
    target = os.path.join(scratch, "checkpoint")
    db.checkpoint(target)
    with jigsawdb.DB(target, mode="disk") as copy:
        assert dict(copy) == dict(db)


def test_close_reopen_and_use_after_close(open_db):
    db = open_db()
    model = fill(db, 2000)
    it = db.iterator()
    next(it)
    snapshot = db.snapshot()
    db.close()
    assert db.closed
    db.close()  # twice is fine
    for call in (lambda: db.get(b"k"), lambda: db.put(b"k", b"v"), lambda: db.iterator(),
                 lambda: db.snapshot(), lambda: db.write_batch(), lambda: db.compact_range(),
                 lambda: snapshot.get(key(1)), lambda: db.get_property("jigsaw.levels")):
        with pytest.raises(jigsawdb.Error, match="closed|released"):
            call()
    with pytest.raises(StopIteration):
        next(it)  # an iterator of a closed database ends
    again = open_db(create_if_missing=False)
    assert dict(again) == model


def test_open_errors(scratch, mode):
    path = os.path.join(scratch, "db")
    with pytest.raises(jigsawdb.Error) as missing:
        jigsawdb.DB(path, mode=mode)
    assert isinstance(missing.value, jigsawdb.InvalidArgumentError), missing.value
    db = jigsawdb.DB(path, create_if_missing=True, mode=mode, pool_size=128 << 20)
    with pytest.raises(jigsawdb.IOError):  # open here already
        jigsawdb.DB(path, mode=mode)
    db.close()
    with pytest.raises(jigsawdb.InvalidArgumentError):
        jigsawdb.DB(path, create_if_missing=True, error_if_exists=True, mode=mode)
    jigsawdb.DB(path, mode=mode).close()


def test_compressed_tables_reopen_under_every_setting(open_db):
    db = open_db(compression="lz4")
    model = {}
    for round, codec in enumerate(("lz4", "zstd", None)):
        if round > 0:
            db.close()
            db = open_db(create_if_missing=False, compression=codec)
            assert dict(db) == model
        with db.write_batch() as batch:
            for i in range(3000):
                value = (b"%d-%d" % (round, i)) * 20  # compressible
                batch.put(key(i * 7 % 5000), value)
                model[key(i * 7 % 5000)] = value
        db.compact_range()
        assert dict(db) == model
    with pytest.raises(ValueError):
        open_db(compression="snappy")


def test_read_only_open_beside_a_writer(scratch):
    path = os.path.join(scratch, "db")
    with jigsawdb.DB(path, create_if_missing=True, mode="disk") as writer:
        writer.put(b"k", b"v")
        with jigsawdb.DB(path, mode="disk", read_only=True) as reader:
            assert reader.get(b"k") == b"v"
            with pytest.raises(jigsawdb.NotSupportedError):
                reader.put(b"k", b"w")
    with pytest.raises(jigsawdb.NotSupportedError):
        jigsawdb.DB(os.path.join(scratch, "pool-db"), mode="pmem", read_only=True)


def test_engine_calls_release_the_gil(open_db):
    """Another Python thread runs while one is inside the engine.

    With a long switch interval, a thread that kept the GIL through
    compact_range would let the main thread run only once it had finished.
    """
    db = open_db()
    with db.write_batch() as batch:
        for i in range(100000):
            batch.put(key(i), b"x" * 100)
    started = threading.Event()
    finished = threading.Event()
    ran_meanwhile = 0

    def compact():
        started.set()
        db.compact_range()
        finished.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(30)
    try:
        worker = threading.Thread(target=compact)
        worker.start()
        started.wait()
        while not finished.is_set():
            ran_meanwhile += 1
            time.sleep(0.0005)  # lets the worker take the GIL back when it returns
        worker.join()
    finally:
        sys.setswitchinterval(old)
    assert ran_meanwhile > 0


def test_threads_share_a_database(open_db):
    db = open_db()
    errors = []

    def work(t):
        try:
            for i in range(2000):
                db.put(b"t%d-%d" % (t, i), b"v")
                assert db.get(b"t%d-%d" % (t, i)) == b"v"
            assert len(list(db.iterator(prefix=b"t%d-" % t))) == 2000
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(list(db.iterator(include_value=False))) == 8000


def test_a_snapshot_released_while_another_thread_reads_it(open_db):
    db = open_db()
    model = fill(db, 200)
    snapshot = db.snapshot()
    outcomes = []

    def read():
        for i in range(20000):
            try:
                assert snapshot.get(key(i % 200)) == model[key(i % 200)]
                outcomes.append("read")
            except jigsawdb.Error as e:
                assert "released" in str(e)
                outcomes.append("released")
                return

    reader = threading.Thread(target=read)
    reader.start()
    while not outcomes:
        time.sleep(0.0001)
    snapshot.release()
    reader.join()
    assert outcomes[0] == "read"
    assert snapshot.sequence > 0
