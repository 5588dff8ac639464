import os
import shutil
import tempfile

import pytest

import jigsawdb

# Small sizes: a few thousand writes flush and compact.
SMALL = dict(pool_size=128 << 20, memtable_size=256 << 10)


@pytest.fixture
def scratch():
    """A directory on tmpfs (a pool database's default pool file lives in it)."""
    path = tempfile.mkdtemp(prefix="jigsawdb-py-", dir="/dev/shm")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(params=["pmem", "hybrid", "disk"])
def mode(request):
    return request.param


@pytest.fixture
def open_db(scratch, mode):
    """open_db(**options) opens (creating) the test's database in its mode."""
    opened = []

    def opener(**options):
        args = dict(SMALL, create_if_missing=True, mode=mode)
        args.update(options)
        db = jigsawdb.DB(os.path.join(scratch, "db"), **args)
        opened.append(db)
        return db

    yield opener
    for db in opened:
        db.close()
