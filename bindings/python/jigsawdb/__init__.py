"""JigsawDB from Python: an embedded key-value store for persistent memory.

The API follows plyvel's (LevelDB's Python binding)::

    import jigsawdb

    with jigsawdb.DB("/dev/shm/app", create_if_missing=True, pool_size=256 << 20) as db:
        db.put(b"user:1", b"alice")
        assert db.get(b"user:1") == b"alice"
        with db.write_batch() as batch:
            batch.put(b"user:2", b"bob")
            batch.delete(b"user:1")
        for key, value in db.iterator(prefix=b"user:"):
            print(key, value)

Keys and values are ``bytes``. Every engine error is a ``jigsawdb.Error``
(a subclass per kind: ``CorruptionError``, ``InvalidArgumentError``,
``IOError``, ``NoSpaceError``, ``NotFoundError``, ``NotSupportedError``),
whose message is the engine's Status. Calls into the engine release the
GIL, so threads sharing a database run in parallel. A database opened
here is the same database the C++ and C APIs and the ``jigsaw`` tool open;
its modes and options are in the engine's ``include/jigsaw/options.h``.
"""

from ._jigsawdb import (
    DB,
    CorruptionError,
    Error,
    InvalidArgumentError,
    IOError,
    Iterator,
    NoSpaceError,
    NotFoundError,
    NotSupportedError,
    Snapshot,
    WriteBatch,
    __engine_version__,
)

__all__ = [
    "DB",
    "CorruptionError",
    "Error",
    "InvalidArgumentError",
    "IOError",
    "Iterator",
    "NoSpaceError",
    "NotFoundError",
    "NotSupportedError",
    "Snapshot",
    "WriteBatch",
    "__engine_version__",
]
