/* JigsawDB's C API: the C++ API of jigsaw/db.h behind opaque handles, for C
 * programs and for other languages' bindings. C99.
 *
 * Conventions:
 *  - Every object made by a jigsaw_*_create (or jigsaw_open, or
 *    jigsaw_create_iterator / jigsaw_create_snapshot) is owned by the
 *    caller and released with its matching destroy / close / release call,
 *    exactly once. Passing NULL to a destroy / close / free call does
 *    nothing. The *_create calls return NULL if memory ran out.
 *  - Functions that can fail take `char** errptr`, which must not be NULL;
 *    *errptr must be NULL or a message from an earlier call. On failure the
 *    previous message is freed and *errptr is set to a new malloc'ed,
 *    NUL-terminated message ("<Code>: <text>", as Status::ToString), which
 *    the caller frees with jigsaw_free (not free: when memory runs out the
 *    message may be a static one). On success *errptr is left
 *    unchanged: check it after each call (and reset it to NULL after
 *    freeing it).
 *  - Keys and values are byte strings with an explicit length; they may
 *    hold NUL bytes. Input buffers are only read during the call.
 *  - Returned byte strings (jigsaw_get, jigsaw_property_value) are
 *    malloc'ed and freed by the caller with jigsaw_free; a value is not
 *    NUL-terminated.
 *  - Thread-safety: a jigsaw_t may be used by many threads at once.
 *    Options, read/write options, write batches and iterators are used by
 *    one thread at a time each (or with external synchronisation).
 *  - No C++ exception crosses this API. Memory running out becomes an
 *    error in errptr; where a call has none, the contract of that call
 *    says what happens (a NULL result, or an error at the next call that
 *    can report one).
 *
 * Not in the C API: custom comparators, file systems and loggers (the
 * defaults are used), MultiGet and the NVM timing model. */
#ifndef JIGSAW_INCLUDE_JIGSAW_C_H_
#define JIGSAW_INCLUDE_JIGSAW_C_H_

#include <stddef.h>
#include <stdint.h>

#include "jigsaw/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handles. */
typedef struct jigsaw_t jigsaw_t;
typedef struct jigsaw_options_t jigsaw_options_t;
typedef struct jigsaw_readoptions_t jigsaw_readoptions_t;
typedef struct jigsaw_writeoptions_t jigsaw_writeoptions_t;
typedef struct jigsaw_writebatch_t jigsaw_writebatch_t;
typedef struct jigsaw_updates_t jigsaw_updates_t;
typedef struct jigsaw_tablefilewriter_t jigsaw_tablefilewriter_t;
typedef struct jigsaw_iterator_t jigsaw_iterator_t;
typedef struct jigsaw_snapshot_t jigsaw_snapshot_t;

/* ---- Database ---- */

/* Opens (or creates, with create_if_missing) the database `name`. Returns
 * the handle, or NULL with *errptr set. The options are copied: they may
 * be destroyed after the call. Close with jigsaw_close. */
JIGSAW_EXPORT jigsaw_t* jigsaw_open(const jigsaw_options_t* options, const char* name, char** errptr);
/* Opens the disk-mode database `name` for reads only, writing nothing to
 * it, possibly while another process has it open (DB::OpenForReadOnly in
 * jigsaw/db.h). Writes through the handle fail with "Not supported". */
JIGSAW_EXPORT jigsaw_t* jigsaw_open_for_read_only(const jigsaw_options_t* options, const char* name,
                                                  char** errptr);
/* Opens the disk-mode database `name` as a secondary (DB::OpenAsSecondary):
 * a read-only open that jigsaw_try_catch_up_with_primary moves on to the
 * database's latest state. */
JIGSAW_EXPORT jigsaw_t* jigsaw_open_as_secondary(const jigsaw_options_t* options, const char* name, char** errptr);
JIGSAW_EXPORT void jigsaw_try_catch_up_with_primary(jigsaw_t* db, char** errptr);

/* Closes the database and frees the handle. Every iterator and snapshot of
 * it must have been destroyed / released first. No other thread may use
 * the handle during or after the call. */
JIGSAW_EXPORT void jigsaw_close(jigsaw_t* db);

/* Writes `key` -> `val` / deletes `key` / applies every update of `batch`
 * atomically. The batch is not changed and stays owned by the caller. */
JIGSAW_EXPORT void jigsaw_put(jigsaw_t* db, const jigsaw_writeoptions_t* options, const char* key, size_t keylen,
                              const char* val, size_t vallen, char** errptr);
JIGSAW_EXPORT void jigsaw_delete(jigsaw_t* db, const jigsaw_writeoptions_t* options, const char* key,
                                 size_t keylen, char** errptr);
JIGSAW_EXPORT void jigsaw_write(jigsaw_t* db, const jigsaw_writeoptions_t* options, jigsaw_writebatch_t* batch,
                                char** errptr);
/* Deletes every key k with begin <= k < end (DB::DeleteRange): one range
 * tombstone, whatever the number of keys. An error if begin sorts after
 * end; begin == end deletes nothing. */
JIGSAW_EXPORT void jigsaw_delete_range(jigsaw_t* db, const jigsaw_writeoptions_t* options, const char* begin,
                                       size_t beginlen, const char* end, size_t endlen, char** errptr);

/* The value of `key`: a malloc'ed buffer of *vallen bytes (not
 * NUL-terminated; free with jigsaw_free). A missing key returns NULL with
 * *vallen = 0 and *errptr unchanged; an error returns NULL with *errptr
 * set. A found empty value returns a non-NULL buffer with *vallen = 0. */
JIGSAW_EXPORT char* jigsaw_get(jigsaw_t* db, const jigsaw_readoptions_t* options, const char* key, size_t keylen,
                               size_t* vallen, char** errptr);

/* A new iterator over the database as of `options` (its snapshot, if set),
 * initially not valid, or NULL if memory ran out. Destroy it with
 * jigsaw_iter_destroy before closing the database. */
JIGSAW_EXPORT jigsaw_iterator_t* jigsaw_create_iterator(jigsaw_t* db, const jigsaw_readoptions_t* options);

/* A snapshot of the current state, or NULL if memory ran out. Release it
 * with jigsaw_release_snapshot on the same database, before closing it. */
JIGSAW_EXPORT const jigsaw_snapshot_t* jigsaw_create_snapshot(jigsaw_t* db);
JIGSAW_EXPORT void jigsaw_release_snapshot(jigsaw_t* db, const jigsaw_snapshot_t* snapshot);
/* The sequence number of the newest write reads now see, and of the newest
 * write a snapshot sees (DB::GetLatestSequenceNumber, Snapshot::sequence). */
JIGSAW_EXPORT uint64_t jigsaw_get_latest_sequence_number(jigsaw_t* db);
JIGSAW_EXPORT uint64_t jigsaw_snapshot_get_sequence_number(const jigsaw_snapshot_t* snapshot);

/* The property `propname` (see DB::GetProperty in jigsaw/db.h, e.g.
 * "jigsaw.stats") as a malloc'ed NUL-terminated string, or NULL if the
 * property is unknown (or memory ran out). Free with jigsaw_free. */
JIGSAW_EXPORT char* jigsaw_property_value(jigsaw_t* db, const char* propname);

/* For each i < num_ranges, sizes[i] = the approximate bytes the keys in
 * [range_start_key[i], range_limit_key[i]) take in the tables (not the
 * memtables); 0 where memory ran out. */
JIGSAW_EXPORT void jigsaw_approximate_sizes(jigsaw_t* db, int num_ranges, const char* const* range_start_key,
                                            const size_t* range_start_key_len,
                                            const char* const* range_limit_key,
                                            const size_t* range_limit_key_len, uint64_t* sizes);

/* Compacts the keys in [start_key, limit_key] down to the last level,
 * dropping overwritten and deleted data. A NULL start_key means from the
 * first key, a NULL limit_key to the last. */
JIGSAW_EXPORT void jigsaw_compact_range(jigsaw_t* db, const char* start_key, size_t start_key_len,
                                        const char* limit_key, size_t limit_key_len, char** errptr);

/* Checks every block's checksum and structure and the level invariants;
 * Corruption in *errptr names the first problem. */
JIGSAW_EXPORT void jigsaw_verify_integrity(jigsaw_t* db, char** errptr);

/* Writes an online checkpoint of `db` into the new directory `dir`: a
 * disk-mode database of every write up to one sequence number, stored in
 * *sequence (may be NULL). See DB::CreateCheckpoint in jigsaw/db.h. */
JIGSAW_EXPORT void jigsaw_create_checkpoint(jigsaw_t* db, const char* dir, uint64_t* sequence, char** errptr);

/* The change feed: every committed write batch from the one holding
 * `sequence` on, up to the newest visible now (DB::GetUpdatesSince in
 * jigsaw/db.h). NULL with *errptr set on error (NotFound: `sequence` is
 * older than the kept logs). Destroy it before the database. */
JIGSAW_EXPORT jigsaw_updates_t* jigsaw_get_updates_since(jigsaw_t* db, uint64_t sequence, char** errptr);
/* 1 if the feed is at a batch, else 0 (at its end, or stopped on an error:
 * jigsaw_updates_get_error). */
JIGSAW_EXPORT unsigned char jigsaw_updates_valid(const jigsaw_updates_t* updates);
/* Requires jigsaw_updates_valid. */
JIGSAW_EXPORT void jigsaw_updates_next(jigsaw_updates_t* updates);
/* Requires jigsaw_updates_valid. The current batch, as a new write batch
 * the caller destroys (NULL if memory ran out); its first update's sequence
 * number in *sequence (may be NULL). */
JIGSAW_EXPORT jigsaw_writebatch_t* jigsaw_updates_get_batch(jigsaw_updates_t* updates, uint64_t* sequence);
JIGSAW_EXPORT void jigsaw_updates_get_error(const jigsaw_updates_t* updates, char** errptr);
JIGSAW_EXPORT void jigsaw_updates_destroy(jigsaw_updates_t* updates);

/* Bulk ingest (DB::IngestExternalFile in jigsaw/db.h): adds the `n` table
 * files `files`, written by a table file writer, in one atomic change.
 * move_files: link them in and remove the originals (else copy them). */
JIGSAW_EXPORT void jigsaw_ingest_external_files(jigsaw_t* db, const char* const* files, size_t n,
                                                unsigned char move_files, char** errptr);

/* Deletes the database `name` (it must not be open anywhere): see DestroyDB
 * in jigsaw/db.h. The options name its pool (pmem_path) and mode. */
JIGSAW_EXPORT void jigsaw_destroy_db(const jigsaw_options_t* options, const char* name, char** errptr);
/* RepairDB: rebuilds a damaged database from what can still be read and
   puts it in place of the damaged one (kept at <name>.lost). On success,
   *report (may be NULL) is a malloc'ed description of what was kept and
   what was lost (free with jigsaw_free); on error *errptr is set. */
JIGSAW_EXPORT void jigsaw_repair_db(const jigsaw_options_t* options, const char* name, char** report,
                                    char** errptr);

/* Copies every live key/value of the closed database `from` into a new
 * database `to` (e.g. with a bigger pool): see CopyDB in jigsaw/db.h. */
JIGSAW_EXPORT void jigsaw_copy_db(const jigsaw_options_t* from_options, const char* from,
                                  const jigsaw_options_t* to_options, const char* to, char** errptr);

/* ---- Iterator (one thread at a time) ---- */

/* Frees the iterator. */
JIGSAW_EXPORT void jigsaw_iter_destroy(jigsaw_iterator_t* iter);
/* 1 if the iterator is at an entry, else 0. */
JIGSAW_EXPORT unsigned char jigsaw_iter_valid(const jigsaw_iterator_t* iter);
JIGSAW_EXPORT void jigsaw_iter_seek_to_first(jigsaw_iterator_t* iter);
JIGSAW_EXPORT void jigsaw_iter_seek_to_last(jigsaw_iterator_t* iter);
/* Positions at the first key >= k. */
JIGSAW_EXPORT void jigsaw_iter_seek(jigsaw_iterator_t* iter, const char* k, size_t klen);
/* next / prev / key / value require jigsaw_iter_valid. */
JIGSAW_EXPORT void jigsaw_iter_next(jigsaw_iterator_t* iter);
JIGSAW_EXPORT void jigsaw_iter_prev(jigsaw_iterator_t* iter);
/* The current key / value: *klen / *vlen bytes owned by the iterator, valid
 * until it moves or is destroyed; not NUL-terminated. */
JIGSAW_EXPORT const char* jigsaw_iter_key(const jigsaw_iterator_t* iter, size_t* klen);
JIGSAW_EXPORT const char* jigsaw_iter_value(const jigsaw_iterator_t* iter, size_t* vlen);
/* Sets *errptr if the iteration ended with an error (an iterator that is
 * not valid may have stopped on one). Memory running out during a move
 * makes the iterator not valid, with that error here. */
JIGSAW_EXPORT void jigsaw_iter_get_error(const jigsaw_iterator_t* iter, char** errptr);
/* Makes the iterator read the database as a new iterator with the same
 * read options would now (Iterator::Refresh), cheaper than a new one; it is
 * not valid until positioned, and an earlier move's error is cleared. Sets
 * *errptr if it cannot be refreshed; it is then unchanged. */
JIGSAW_EXPORT void jigsaw_iter_refresh(jigsaw_iterator_t* iter, char** errptr);

/* ---- Table file writer (TableFileWriter in jigsaw/table_file_writer.h;
 * one thread at a time) ---- */

/* Uses the options' comparator, ssd_block_size and bloom_bits_per_key. */
JIGSAW_EXPORT jigsaw_tablefilewriter_t* jigsaw_tablefilewriter_create(const jigsaw_options_t* options);
JIGSAW_EXPORT void jigsaw_tablefilewriter_destroy(jigsaw_tablefilewriter_t* writer);
JIGSAW_EXPORT void jigsaw_tablefilewriter_open(jigsaw_tablefilewriter_t* writer, const char* path, char** errptr);
/* Keys in strictly increasing order. */
JIGSAW_EXPORT void jigsaw_tablefilewriter_put(jigsaw_tablefilewriter_t* writer, const char* key, size_t klen,
                                              const char* val, size_t vlen, char** errptr);
JIGSAW_EXPORT void jigsaw_tablefilewriter_delete(jigsaw_tablefilewriter_t* writer, const char* key, size_t klen,
                                                 char** errptr);
/* Writes the index and footer, syncs and closes the file. */
JIGSAW_EXPORT void jigsaw_tablefilewriter_finish(jigsaw_tablefilewriter_t* writer, char** errptr);

/* ---- Write batch (one thread at a time) ---- */

JIGSAW_EXPORT jigsaw_writebatch_t* jigsaw_writebatch_create(void);
JIGSAW_EXPORT void jigsaw_writebatch_destroy(jigsaw_writebatch_t* batch);
/* Removes every update. */
JIGSAW_EXPORT void jigsaw_writebatch_clear(jigsaw_writebatch_t* batch);
/* Appends an update; the bytes are copied into the batch. If memory runs
 * out here (or in append), the batch is marked incomplete: jigsaw_write of
 * it fails without writing anything, until jigsaw_writebatch_clear. */
JIGSAW_EXPORT void jigsaw_writebatch_put(jigsaw_writebatch_t* batch, const char* key, size_t klen, const char* val,
                                         size_t vlen);
JIGSAW_EXPORT void jigsaw_writebatch_delete(jigsaw_writebatch_t* batch, const char* key, size_t klen);
JIGSAW_EXPORT void jigsaw_writebatch_delete_range(jigsaw_writebatch_t* batch, const char* begin, size_t beginlen,
                                                  const char* end, size_t endlen);
/* Appends the updates of `source` (unchanged) to `destination`. */
JIGSAW_EXPORT void jigsaw_writebatch_append(jigsaw_writebatch_t* destination, const jigsaw_writebatch_t* source);
/* Number of updates in the batch. */
JIGSAW_EXPORT int jigsaw_writebatch_count(const jigsaw_writebatch_t* batch);
/* Calls put or deleted for each update, in order, with `state` as the first
 * argument; the key and value pointers are valid during that call only.
 * Stops at the first range delete: use jigsaw_writebatch_iterate_ranges
 * for batches that may hold them (a change feed's). */
JIGSAW_EXPORT void jigsaw_writebatch_iterate(const jigsaw_writebatch_t* batch, void* state,
                                             void (*put)(void* state, const char* k, size_t klen, const char* v,
                                                         size_t vlen),
                                             void (*deleted)(void* state, const char* k, size_t klen));
/* The same, with deleted_range called for each range delete [b, e). */
JIGSAW_EXPORT void jigsaw_writebatch_iterate_ranges(
    const jigsaw_writebatch_t* batch, void* state,
    void (*put)(void* state, const char* k, size_t klen, const char* v, size_t vlen),
    void (*deleted)(void* state, const char* k, size_t klen),
    void (*deleted_range)(void* state, const char* b, size_t blen, const char* e, size_t elen));

/* ---- Options (used by jigsaw_open, jigsaw_destroy_db, jigsaw_copy_db) ----
 * A new jigsaw_options_t holds the C++ defaults (jigsaw/options.h, which
 * documents every field and its range). An out-of-range enum value passed
 * to a setter (or memory running out in set_pmem_path) makes the open,
 * destroy or copy that uses these options fail with InvalidArgument. The
 * setters other than set_pmem_path allocate nothing. */

/* Values for jigsaw_options_set_storage_mode (Options::storage_mode). */
enum {
  jigsaw_storage_pmem = 0,   /* everything in the pmem pool (default) */
  jigsaw_storage_hybrid = 1, /* pmem upper levels, SSD tables below pmem_budget */
  jigsaw_storage_disk = 2    /* no pmem: WAL, MANIFEST and tables as files */
};

/* Values for jigsaw_options_set_wal_recovery_mode
 * (Options::wal_recovery_mode). */
enum {
  jigsaw_wal_tolerate_corrupted_tail_records = 0, /* default */
  jigsaw_wal_absolute_consistency = 1,
  jigsaw_wal_point_in_time_recovery = 2,
  jigsaw_wal_skip_any_corrupted_records = 3
};

/* Values for jigsaw_options_set_pmem_emulation (Options::pmem_emulation). */
enum {
  jigsaw_pmem_emulation_auto = 0, /* default */
  jigsaw_pmem_emulation_force = 1,
  jigsaw_pmem_emulation_off = 2
};

/* Values for jigsaw_options_set_compression (Options::compression). */
enum {
  jigsaw_no_compression = 0, /* default */
  jigsaw_lz4_compression = 1,
  jigsaw_zstd_compression = 2
};

JIGSAW_EXPORT jigsaw_options_t* jigsaw_options_create(void);
JIGSAW_EXPORT void jigsaw_options_destroy(jigsaw_options_t* options);
/* Booleans: 0 is false, anything else true. */
JIGSAW_EXPORT void jigsaw_options_set_create_if_missing(jigsaw_options_t* options, unsigned char v);
JIGSAW_EXPORT void jigsaw_options_set_error_if_exists(jigsaw_options_t* options, unsigned char v);
JIGSAW_EXPORT void jigsaw_options_set_paranoid_checks(jigsaw_options_t* options, unsigned char v);
JIGSAW_EXPORT void jigsaw_options_set_best_efforts_recovery(jigsaw_options_t* options, unsigned char v);
/* One of jigsaw_storage_pmem, jigsaw_storage_hybrid, jigsaw_storage_disk. */
JIGSAW_EXPORT void jigsaw_options_set_storage_mode(jigsaw_options_t* options, int mode);
/* Path of the pool file (copied); NULL or "" for "<name>/pool". */
JIGSAW_EXPORT void jigsaw_options_set_pmem_path(jigsaw_options_t* options, const char* path);
JIGSAW_EXPORT void jigsaw_options_set_pmem_emulation(jigsaw_options_t* options, int emulation);
JIGSAW_EXPORT void jigsaw_options_set_pmem_pool_size(jigsaw_options_t* options, uint64_t bytes);
JIGSAW_EXPORT void jigsaw_options_set_pmem_budget(jigsaw_options_t* options, uint64_t bytes);
JIGSAW_EXPORT void jigsaw_options_set_memtable_size(jigsaw_options_t* options, size_t bytes);
/* LevelDB's name for memtable_size (the same option), for code ported from
 * leveldb/c.h. */
JIGSAW_EXPORT void jigsaw_options_set_write_buffer_size(jigsaw_options_t* options, size_t bytes);
JIGSAW_EXPORT void jigsaw_options_set_max_immutable_memtables(jigsaw_options_t* options, int n);
/* Options::table_size: a level's table (a pmem block or an SSD table file). */
JIGSAW_EXPORT void jigsaw_options_set_table_size(jigsaw_options_t* options, size_t bytes);
/* Deprecated: table_size's old name (removed after version 0.2). Not
 * LevelDB's leveldb_options_set_block_size, whose block is
 * jigsaw_options_set_ssd_block_size's. */
JIGSAW_EXPORT void jigsaw_options_set_block_size(jigsaw_options_t* options, size_t bytes);
JIGSAW_EXPORT void jigsaw_options_set_ssd_block_size(jigsaw_options_t* options, size_t bytes);
JIGSAW_EXPORT void jigsaw_options_set_block_cache_capacity(jigsaw_options_t* options, size_t bytes);
/* One of jigsaw_no_compression, jigsaw_lz4_compression,
 * jigsaw_zstd_compression: how blocks written into SSD tables are stored. */
JIGSAW_EXPORT void jigsaw_options_set_compression(jigsaw_options_t* options, int compression);
JIGSAW_EXPORT void jigsaw_options_set_ssd_use_mmap(jigsaw_options_t* options, unsigned char v);
JIGSAW_EXPORT void jigsaw_options_set_ssd_mapped_gets(jigsaw_options_t* options, unsigned char v);
JIGSAW_EXPORT void jigsaw_options_set_reuse_log_files(jigsaw_options_t* options, unsigned char v);
JIGSAW_EXPORT void jigsaw_options_set_wal_ttl_seconds(jigsaw_options_t* options, uint64_t seconds);
JIGSAW_EXPORT void jigsaw_options_set_wal_size_limit_mb(jigsaw_options_t* options, uint64_t mb);
JIGSAW_EXPORT void jigsaw_options_set_pmem_hash_index(jigsaw_options_t* options, unsigned char v);
/* Options::pmem_read_guard: 0 auto (guarded on real pmem), 1 always,
   2 never; other values leave it unchanged. */
JIGSAW_EXPORT void jigsaw_options_set_pmem_read_guard(jigsaw_options_t* options, int v);
JIGSAW_EXPORT void jigsaw_options_set_read_triggered_compactions(jigsaw_options_t* options, unsigned char v);
JIGSAW_EXPORT void jigsaw_options_set_concurrent_memtable_writes(jigsaw_options_t* options, unsigned char v);
JIGSAW_EXPORT void jigsaw_options_set_bloom_bits_per_key(jigsaw_options_t* options, int bits);
JIGSAW_EXPORT void jigsaw_options_set_level0_compaction_trigger(jigsaw_options_t* options, int n);
JIGSAW_EXPORT void jigsaw_options_set_level0_slowdown_trigger(jigsaw_options_t* options, int n);
JIGSAW_EXPORT void jigsaw_options_set_level0_stop_trigger(jigsaw_options_t* options, int n);
JIGSAW_EXPORT void jigsaw_options_set_level1_size(jigsaw_options_t* options, uint64_t bytes);
JIGSAW_EXPORT void jigsaw_options_set_level_size_multiplier(jigsaw_options_t* options, int n);
JIGSAW_EXPORT void jigsaw_options_set_wal_recovery_mode(jigsaw_options_t* options, int mode);

/* ---- Read options ---- */

JIGSAW_EXPORT jigsaw_readoptions_t* jigsaw_readoptions_create(void);
JIGSAW_EXPORT void jigsaw_readoptions_destroy(jigsaw_readoptions_t* options);
JIGSAW_EXPORT void jigsaw_readoptions_set_verify_checksums(jigsaw_readoptions_t* options, unsigned char v);
/* Reads as of `snapshot` (NULL: the latest state). The snapshot is not
 * owned: it must stay unreleased while reads use these options. */
JIGSAW_EXPORT void jigsaw_readoptions_set_snapshot(jigsaw_readoptions_t* options,
                                                   const jigsaw_snapshot_t* snapshot);
/* Iterators made with these options show only keys in [lower, upper)
 * (ReadOptions::iterate_lower_bound and iterate_upper_bound in
 * jigsaw/options.h). The key is copied; NULL removes the bound. */
JIGSAW_EXPORT void jigsaw_readoptions_set_iterate_lower_bound(jigsaw_readoptions_t* options, const char* key,
                                                              size_t keylen);
JIGSAW_EXPORT void jigsaw_readoptions_set_iterate_upper_bound(jigsaw_readoptions_t* options, const char* key,
                                                              size_t keylen);

/* ---- Write options ---- */

JIGSAW_EXPORT jigsaw_writeoptions_t* jigsaw_writeoptions_create(void);
JIGSAW_EXPORT void jigsaw_writeoptions_destroy(jigsaw_writeoptions_t* options);
/* 1: the write is durable when the call returns (docs/durability.md). */
JIGSAW_EXPORT void jigsaw_writeoptions_set_sync(jigsaw_writeoptions_t* options, unsigned char v);

/* ---- Utility ---- */

/* Frees a buffer or message this API returned (malloc'ed). NULL is fine. */
JIGSAW_EXPORT void jigsaw_free(void* ptr);

/* JIGSAW_VERSION_MAJOR / _MINOR of the library linked (jigsaw/version.h
 * gives those of the headers compiled against). */
JIGSAW_EXPORT int jigsaw_major_version(void);
JIGSAW_EXPORT int jigsaw_minor_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* JIGSAW_INCLUDE_JIGSAW_C_H_ */
