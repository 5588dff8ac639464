/* The C API (jigsaw/c.h) from a C99 program that sees only the public
 * headers: every call, in each storage mode, against expected contents.
 * Exits non-zero, naming the failed check, on the first failure. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include "jigsaw/c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jigsaw/version.h"

static const char* phase = "";
static int checks = 0;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    ++checks;                                                                          \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: [%s] check failed: %s\n", __FILE__, __LINE__, phase, #cond); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

/* No error reported; prints the message if there is one. */
#define CHECK_NO_ERROR(err)                                                           \
  do {                                                                                \
    ++checks;                                                                         \
    if ((err) != NULL) {                                                              \
      fprintf(stderr, "%s:%d: [%s] unexpected error: %s\n", __FILE__, __LINE__, phase, (err)); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

/* An error starting with `prefix` was reported; frees it and resets err. */
static void CheckErrorAndReset(char** err, const char* prefix, int line) {
  ++checks;
  if (*err == NULL) {
    fprintf(stderr, "%s:%d: [%s] expected an error starting with \"%s\", got none\n", __FILE__, line, phase, prefix);
    exit(1);
  }
  if (strncmp(*err, prefix, strlen(prefix)) != 0) {
    fprintf(stderr, "%s:%d: [%s] expected an error starting with \"%s\", got \"%s\"\n", __FILE__, line, phase, prefix,
            *err);
    exit(1);
  }
  jigsaw_free(*err);
  *err = NULL;
}
#define CHECK_ERROR(err, prefix) CheckErrorAndReset(&(err), (prefix), __LINE__)

/* The value of `key` equals `expected` (NULL: the key is missing). */
static void CheckGet(jigsaw_t* db, const jigsaw_readoptions_t* roptions, const char* key, size_t keylen,
                     const char* expected, size_t expected_len, int line) {
  char* err = NULL;
  size_t vallen = 12345;
  char* value = jigsaw_get(db, roptions, key, keylen, &vallen, &err);
  ++checks;
  if (err != NULL) {
    fprintf(stderr, "%s:%d: [%s] get: %s\n", __FILE__, line, phase, err);
    exit(1);
  }
  if (expected == NULL) {
    if (value != NULL || vallen != 0) {
      fprintf(stderr, "%s:%d: [%s] get of a missing key returned %zu bytes\n", __FILE__, line, phase, vallen);
      exit(1);
    }
    return;
  }
  if (value == NULL || vallen != expected_len || memcmp(value, expected, expected_len) != 0) {
    fprintf(stderr, "%s:%d: [%s] get returned %s (%zu bytes), expected %zu bytes\n", __FILE__, line, phase,
            value == NULL ? "NULL" : "other bytes", vallen, expected_len);
    exit(1);
  }
  jigsaw_free(value);
}
static size_t LengthOrZero(const char* s) { return s == NULL ? 0 : strlen(s); }
#define CHECK_GET(db, roptions, key, expected) \
  CheckGet((db), (roptions), (key), strlen(key), (expected), LengthOrZero(expected), __LINE__)

/* The iterator is at `key` -> `value`. */
static void CheckIter(const jigsaw_iterator_t* iter, const char* key, const char* value, int line) {
  size_t klen = 0;
  size_t vlen = 0;
  const char* k;
  const char* v;
  ++checks;
  if (!jigsaw_iter_valid(iter)) {
    fprintf(stderr, "%s:%d: [%s] iterator not valid, expected %s\n", __FILE__, line, phase, key);
    exit(1);
  }
  k = jigsaw_iter_key(iter, &klen);
  v = jigsaw_iter_value(iter, &vlen);
  if (klen != strlen(key) || memcmp(k, key, klen) != 0 || vlen != strlen(value) || memcmp(v, value, vlen) != 0) {
    fprintf(stderr, "%s:%d: [%s] iterator at %.*s -> %.*s, expected %s -> %s\n", __FILE__, line, phase, (int)klen, k,
            (int)vlen, v, key, value);
    exit(1);
  }
}
#define CHECK_ITER(iter, key, value) CheckIter((iter), (key), (value), __LINE__)

/* What jigsaw_writebatch_iterate reports, concatenated. */
struct BatchLog {
  char text[256];
};

static void LogPut(void* state, const char* k, size_t klen, const char* v, size_t vlen) {
  struct BatchLog* log = (struct BatchLog*)state;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "put(%.*s,%.*s)", (int)klen, k, (int)vlen, v);
}

static void LogDelete(void* state, const char* k, size_t klen) {
  struct BatchLog* log = (struct BatchLog*)state;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "delete(%.*s)", (int)klen, k);
}

static void LogDeleteRange(void* state, const char* b, size_t blen, const char* e, size_t elen) {
  struct BatchLog* log = (struct BatchLog*)state;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "delete_range(%.*s,%.*s)", (int)blen, b, (int)elen, e);
}

/* Options small enough that a few thousand writes flush and compact. */
static jigsaw_options_t* SmallOptions(int mode) {
  jigsaw_options_t* options = jigsaw_options_create();
  CHECK(options != NULL);
  jigsaw_options_set_create_if_missing(options, 1);
  jigsaw_options_set_storage_mode(options, mode);
  jigsaw_options_set_pmem_emulation(options, jigsaw_pmem_emulation_force);
  jigsaw_options_set_pmem_pool_size(options, (uint64_t)128 << 20);
  jigsaw_options_set_memtable_size(options, 160 << 10);
  jigsaw_options_set_table_size(options, 200 << 10);
  jigsaw_options_set_level1_size(options, (uint64_t)1 << 20);
  jigsaw_options_set_level0_compaction_trigger(options, 2);
  if (mode == jigsaw_storage_hybrid) jigsaw_options_set_pmem_budget(options, (uint64_t)2 << 20);
  /* Disk mode's tables compressed: every call below reads them. */
  if (mode == jigsaw_storage_disk) jigsaw_options_set_compression(options, jigsaw_lz4_compression);
  return options;
}

static void TestMode(int mode, const char* mode_name, const char* base) {
  char dbname[512];
  char copyname[512];
  char* err = NULL;
  jigsaw_options_t* options = SmallOptions(mode);
  jigsaw_readoptions_t* roptions = jigsaw_readoptions_create();
  jigsaw_writeoptions_t* woptions = jigsaw_writeoptions_create();
  jigsaw_t* db;
  CHECK(roptions != NULL && woptions != NULL);
  snprintf(dbname, sizeof(dbname), "%s/%s", base, mode_name);
  snprintf(copyname, sizeof(copyname), "%s/%s-copy", base, mode_name);

  phase = "open";
  db = jigsaw_open(options, dbname, &err);
  CHECK_NO_ERROR(err);
  CHECK(db != NULL);

  phase = "a second open is refused";
  {
    jigsaw_t* second = jigsaw_open(options, dbname, &err);
    CHECK(second == NULL);
    CHECK_ERROR(err, "IO error");
  }

  phase = "put/get/delete";
  jigsaw_writeoptions_set_sync(woptions, 1);
  jigsaw_put(db, woptions, "foo", 3, "hello", 5, &err);
  CHECK_NO_ERROR(err);
  jigsaw_writeoptions_set_sync(woptions, 0);
  CHECK_GET(db, roptions, "foo", "hello");
  CHECK_GET(db, roptions, "bar", NULL);
  jigsaw_put(db, woptions, "empty", 5, "", 0, &err);
  CHECK_NO_ERROR(err);
  {
    size_t vallen = 99;
    char* value = jigsaw_get(db, roptions, "empty", 5, &vallen, &err);
    CHECK_NO_ERROR(err);
    CHECK(value != NULL); /* found, with no bytes */
    CHECK(vallen == 0);
    jigsaw_free(value);
  }
  /* Keys and values with NUL bytes. */
  jigsaw_put(db, woptions, "n\0ul", 4, "v\0v", 3, &err);
  CHECK_NO_ERROR(err);
  CheckGet(db, roptions, "n\0ul", 4, "v\0v", 3, __LINE__);
  CheckGet(db, roptions, "n", 1, NULL, 0, __LINE__);
  jigsaw_delete(db, woptions, "empty", 5, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, roptions, "empty", NULL);
  jigsaw_delete(db, woptions, "n\0ul", 4, &err);
  CHECK_NO_ERROR(err);

  phase = "write batch";
  {
    jigsaw_writebatch_t* batch = jigsaw_writebatch_create();
    jigsaw_writebatch_t* more = jigsaw_writebatch_create();
    struct BatchLog log;
    CHECK(batch != NULL && more != NULL);
    jigsaw_writebatch_put(batch, "foo", 3, "a", 1);
    jigsaw_writebatch_clear(batch);
    CHECK(jigsaw_writebatch_count(batch) == 0);
    jigsaw_writebatch_put(batch, "bar", 3, "b", 1);
    jigsaw_writebatch_put(batch, "box", 3, "c", 1);
    jigsaw_writebatch_delete(batch, "bar", 3);
    jigsaw_writebatch_put(more, "baz", 3, "d", 1);
    jigsaw_writebatch_append(batch, more);
    CHECK(jigsaw_writebatch_count(batch) == 4);
    CHECK(jigsaw_writebatch_count(more) == 1);
    log.text[0] = '\0';
    jigsaw_writebatch_iterate(batch, &log, LogPut, LogDelete);
    CHECK(strcmp(log.text, "put(bar,b)put(box,c)delete(bar)put(baz,d)") == 0);
    jigsaw_write(db, woptions, batch, &err);
    CHECK_NO_ERROR(err);
    CHECK_GET(db, roptions, "foo", "hello");
    CHECK_GET(db, roptions, "bar", NULL);
    CHECK_GET(db, roptions, "box", "c");
    CHECK_GET(db, roptions, "baz", "d");
    jigsaw_writebatch_destroy(batch);
    jigsaw_writebatch_destroy(more);
  }

  phase = "delete_range";
  {
    jigsaw_writebatch_t* batch = jigsaw_writebatch_create();
    struct BatchLog log = {{0}};
    CHECK(batch != NULL);
    jigsaw_put(db, woptions, "rng1", 4, "x", 1, &err);
    CHECK_NO_ERROR(err);
    jigsaw_put(db, woptions, "rng2", 4, "x", 1, &err);
    CHECK_NO_ERROR(err);
    jigsaw_put(db, woptions, "rng3", 4, "x", 1, &err);
    CHECK_NO_ERROR(err);
    jigsaw_delete_range(db, woptions, "rng1", 4, "rng3", 4, &err);
    CHECK_NO_ERROR(err);
    CHECK_GET(db, roptions, "rng1", NULL);
    CHECK_GET(db, roptions, "rng2", NULL);
    CHECK_GET(db, roptions, "rng3", "x");
    jigsaw_delete_range(db, woptions, "z", 1, "a", 1, &err);
    CHECK(err != NULL); /* begin after end */
    jigsaw_free(err);
    err = NULL;
    jigsaw_writebatch_put(batch, "rng0", 4, "y", 1);
    jigsaw_writebatch_delete_range(batch, "rng", 3, "rnh", 3);
    jigsaw_writebatch_delete(batch, "rng9", 4);
    CHECK(jigsaw_writebatch_count(batch) == 3);
    jigsaw_writebatch_iterate_ranges(batch, &log, LogPut, LogDelete, LogDeleteRange);
    CHECK(strcmp(log.text, "put(rng0,y)delete_range(rng,rnh)delete(rng9)") == 0);
    log.text[0] = '\0';
    jigsaw_writebatch_iterate(batch, &log, LogPut, LogDelete); /* stops at the range delete */
    CHECK(strcmp(log.text, "put(rng0,y)") == 0);
    jigsaw_write(db, woptions, batch, &err);
    CHECK_NO_ERROR(err);
    CHECK_GET(db, roptions, "rng0", NULL);
    CHECK_GET(db, roptions, "rng3", NULL);
    CHECK_GET(db, roptions, "box", "c");
    jigsaw_writebatch_destroy(batch);
  }

  phase = "iterator";
  {
    jigsaw_iterator_t* iter = jigsaw_create_iterator(db, roptions);
    CHECK(iter != NULL);
    CHECK(!jigsaw_iter_valid(iter));
    jigsaw_iter_seek_to_first(iter);
    CHECK_ITER(iter, "baz", "d");
    jigsaw_iter_next(iter);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_next(iter);
    CHECK_ITER(iter, "foo", "hello");
    jigsaw_iter_next(iter);
    CHECK(!jigsaw_iter_valid(iter));
    jigsaw_iter_seek_to_last(iter);
    CHECK_ITER(iter, "foo", "hello");
    jigsaw_iter_prev(iter);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_seek(iter, "bb", 2);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_seek(iter, "zzz", 3);
    CHECK(!jigsaw_iter_valid(iter));
    jigsaw_iter_get_error(iter, &err);
    CHECK_NO_ERROR(err);
    /* A write after the iterator was made: seen once it is refreshed. */
    jigsaw_put(db, woptions, "bz", 2, "e", 1, &err);
    CHECK_NO_ERROR(err);
    jigsaw_iter_seek(iter, "bb", 2);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_refresh(iter, &err);
    CHECK_NO_ERROR(err);
    CHECK(!jigsaw_iter_valid(iter));
    jigsaw_iter_seek(iter, "bb", 2);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_next(iter);
    CHECK_ITER(iter, "bz", "e");
    jigsaw_delete(db, woptions, "bz", 2, &err);
    CHECK_NO_ERROR(err);
    jigsaw_iter_destroy(iter);
  }

  phase = "iterator bounds";
  {
    /* [bb, foo): box only; the options' copies of the bounds outlive the
     * caller's buffer. */
    char lower[3] = "bb";
    jigsaw_iterator_t* iter;
    jigsaw_readoptions_set_iterate_lower_bound(roptions, lower, 2);
    jigsaw_readoptions_set_iterate_upper_bound(roptions, "foo", 3);
    lower[0] = 'z';
    iter = jigsaw_create_iterator(db, roptions);
    CHECK(iter != NULL);
    jigsaw_iter_seek_to_first(iter);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_next(iter);
    CHECK(!jigsaw_iter_valid(iter));
    jigsaw_iter_seek_to_last(iter);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_prev(iter);
    CHECK(!jigsaw_iter_valid(iter));
    jigsaw_iter_seek(iter, "a", 1);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_get_error(iter, &err);
    CHECK_NO_ERROR(err);
    jigsaw_iter_destroy(iter);
    jigsaw_readoptions_set_iterate_lower_bound(roptions, NULL, 0);
    jigsaw_readoptions_set_iterate_upper_bound(roptions, NULL, 0);
    iter = jigsaw_create_iterator(db, roptions);
    jigsaw_iter_seek_to_first(iter);
    CHECK_ITER(iter, "baz", "d");
    jigsaw_iter_destroy(iter);
  }

  phase = "snapshot";
  {
    const jigsaw_snapshot_t* snapshot = jigsaw_create_snapshot(db);
    const uint64_t at_snapshot = jigsaw_get_latest_sequence_number(db);
    jigsaw_iterator_t* iter;
    CHECK(snapshot != NULL);
    CHECK(at_snapshot > 0);
    CHECK(jigsaw_snapshot_get_sequence_number(snapshot) == at_snapshot);
    jigsaw_put(db, woptions, "foo", 3, "world", 5, &err);
    CHECK_NO_ERROR(err);
    CHECK(jigsaw_get_latest_sequence_number(db) == at_snapshot + 1);
    CHECK(jigsaw_snapshot_get_sequence_number(snapshot) == at_snapshot);
    jigsaw_delete(db, woptions, "box", 3, &err);
    CHECK_NO_ERROR(err);
    CHECK_GET(db, roptions, "foo", "world");
    jigsaw_readoptions_set_snapshot(roptions, snapshot);
    CHECK_GET(db, roptions, "foo", "hello");
    CHECK_GET(db, roptions, "box", "c");
    iter = jigsaw_create_iterator(db, roptions);
    CHECK(iter != NULL);
    jigsaw_iter_seek(iter, "box", 3);
    CHECK_ITER(iter, "box", "c");
    jigsaw_iter_destroy(iter);
    jigsaw_readoptions_set_snapshot(roptions, NULL);
    CHECK_GET(db, roptions, "box", NULL);
    jigsaw_release_snapshot(db, snapshot);
  }

  phase = "enough writes to flush and compact";
  {
    char key[32];
    char value[128];
    int i;
    memset(value, 'v', sizeof(value));
    for (i = 0; i < 20000; ++i) {
      snprintf(key, sizeof(key), "key%06d", i);
      snprintf(value, sizeof(value), "value%06d-", i);
      value[strlen(value)] = 'v'; /* 100 bytes: the number then 'v's */
      jigsaw_put(db, woptions, key, strlen(key), value, 100, &err);
      CHECK_NO_ERROR(err);
    }
    jigsaw_compact_range(db, NULL, 0, NULL, 0, &err);
    CHECK_NO_ERROR(err);
    jigsaw_verify_integrity(db, &err);
    CHECK_NO_ERROR(err);
    snprintf(key, sizeof(key), "key%06d", 12345);
    {
      size_t vallen = 0;
      char* got = jigsaw_get(db, roptions, key, strlen(key), &vallen, &err);
      CHECK_NO_ERROR(err);
      CHECK(got != NULL && vallen == 100);
      CHECK(memcmp(got, "value012345-vvv", 15) == 0);
      jigsaw_free(got);
    }
  }

  phase = "approximate sizes and properties";
  {
    const char* starts[2] = {"key000000", "zz"};
    const size_t start_lens[2] = {9, 2};
    const char* limits[2] = {"key020000", "zzz"};
    const size_t limit_lens[2] = {9, 3};
    uint64_t sizes[2] = {0, 12345};
    char* stats;
    jigsaw_approximate_sizes(db, 2, starts, start_lens, limits, limit_lens, sizes);
    /* 20000 entries of ~110 bytes: compacted, they are in tables (in disk
     * mode compressed, their values being mostly one letter). */
    CHECK(sizes[0] > (mode == jigsaw_storage_disk ? (uint64_t)128 << 10 : (uint64_t)1 << 20));
    CHECK(sizes[1] == 0);
    stats = jigsaw_property_value(db, "jigsaw.stats");
    CHECK(stats != NULL);
    CHECK(strstr(stats, "Level") != NULL || strstr(stats, "level") != NULL);
    jigsaw_free(stats);
    CHECK(jigsaw_property_value(db, "jigsaw.no-such-property") == NULL);
  }

  phase = "destroying an open database is refused";
  jigsaw_destroy_db(options, dbname, &err);
  CHECK(err != NULL);
  jigsaw_free(err);
  err = NULL;

  phase = "close and reopen";
  jigsaw_close(db);
  jigsaw_options_set_error_if_exists(options, 1);
  db = jigsaw_open(options, dbname, &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "Invalid argument");
  jigsaw_options_set_error_if_exists(options, 0);
  jigsaw_options_set_create_if_missing(options, 0);
  db = jigsaw_open(options, dbname, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, roptions, "foo", "world");
  CHECK_GET(db, roptions, "box", NULL);
  {
    size_t vallen = 0;
    char* got = jigsaw_get(db, roptions, "key019999", 9, &vallen, &err);
    CHECK_NO_ERROR(err);
    CHECK(got != NULL && vallen == 100 && memcmp(got, "value019999-vvv", 15) == 0);
    jigsaw_free(got);
  }
  jigsaw_close(db);

  phase = "reopen without the pmem hash index, read-triggered compactions and concurrent memtable writes, with guarded pmem reads";
  jigsaw_options_set_pmem_hash_index(options, 0);
  jigsaw_options_set_pmem_read_guard(options, 1);
  jigsaw_options_set_read_triggered_compactions(options, 0);
  jigsaw_options_set_concurrent_memtable_writes(options, 0);
  db = jigsaw_open(options, dbname, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, roptions, "foo", "world");
  CHECK_GET(db, roptions, "baz", "d");
  jigsaw_put(db, woptions, "serial", 6, "write", 5, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, roptions, "serial", "write");

  phase = "checkpoint";
  {
    jigsaw_options_t* disk = SmallOptions(jigsaw_storage_disk);
    char checkpoint[600];
    uint64_t sequence = 0;
    jigsaw_t* copy;
    snprintf(checkpoint, sizeof(checkpoint), "%s-checkpoint", dbname);
    jigsaw_create_checkpoint(db, checkpoint, &sequence, &err);
    CHECK_NO_ERROR(err);
    CHECK(sequence == jigsaw_get_latest_sequence_number(db));
    jigsaw_create_checkpoint(db, checkpoint, NULL, &err);
    CHECK_ERROR(err, "Invalid argument");
    jigsaw_put(db, woptions, "after", 5, "checkpoint", 10, &err);
    CHECK_NO_ERROR(err);
    jigsaw_options_set_create_if_missing(disk, 0);
    copy = jigsaw_open(disk, checkpoint, &err);
    CHECK_NO_ERROR(err);
    CHECK(jigsaw_get_latest_sequence_number(copy) == sequence);
    CHECK_GET(copy, roptions, "serial", "write");
    CHECK_GET(copy, roptions, "foo", "world");
    CHECK_GET(copy, roptions, "after", NULL);
    /* The change feed since the checkpoint brings the copy up to date. */
    {
      jigsaw_updates_t* updates;
      uint64_t batch_sequence = 0;
      struct BatchLog log = {{0}};
      jigsaw_writebatch_t* batch;
      jigsaw_delete(db, woptions, "nokey", 5, &err);
      CHECK_NO_ERROR(err);
      updates = jigsaw_get_updates_since(db, sequence + 1, &err);
      CHECK_NO_ERROR(err);
      CHECK(jigsaw_updates_valid(updates));
      batch = jigsaw_updates_get_batch(updates, &batch_sequence);
      CHECK(batch != NULL && batch_sequence == sequence + 1);
      jigsaw_writebatch_iterate(batch, &log, LogPut, LogDelete);
      CHECK(strcmp(log.text, "put(after,checkpoint)") == 0);
      jigsaw_write(copy, woptions, batch, &err);
      CHECK_NO_ERROR(err);
      jigsaw_writebatch_destroy(batch);
      jigsaw_updates_next(updates);
      CHECK(jigsaw_updates_valid(updates));
      batch = jigsaw_updates_get_batch(updates, &batch_sequence);
      CHECK(batch != NULL && batch_sequence == sequence + 2);
      jigsaw_write(copy, woptions, batch, &err);
      CHECK_NO_ERROR(err);
      jigsaw_writebatch_destroy(batch);
      jigsaw_updates_next(updates);
      CHECK(!jigsaw_updates_valid(updates));
      jigsaw_updates_get_error(updates, &err);
      CHECK_NO_ERROR(err);
      jigsaw_updates_destroy(updates);
      CHECK_GET(copy, roptions, "after", "checkpoint");
      CHECK_GET(copy, roptions, "nokey", NULL);
      CHECK(jigsaw_get_latest_sequence_number(copy) == jigsaw_get_latest_sequence_number(db));
      /* A table file ingested: its keys read back. */
      {
        char path[600];
        const char* files[1];
        jigsaw_tablefilewriter_t* writer = jigsaw_tablefilewriter_create(options);
        CHECK(writer != NULL);
        snprintf(path, sizeof(path), "%s-ingest.jst", dbname);
        files[0] = path;
        jigsaw_tablefilewriter_open(writer, path, &err);
        CHECK_NO_ERROR(err);
        jigsaw_tablefilewriter_put(writer, "ing1", 4, "x", 1, &err);
        CHECK_NO_ERROR(err);
        jigsaw_tablefilewriter_put(writer, "ing0", 4, "y", 1, &err);
        CHECK_ERROR(err, "Invalid argument");
        jigsaw_tablefilewriter_delete(writer, "ing2", 4, &err);
        CHECK_NO_ERROR(err);
        jigsaw_tablefilewriter_finish(writer, &err);
        CHECK_NO_ERROR(err);
        jigsaw_tablefilewriter_destroy(writer);
        jigsaw_ingest_external_files(copy, files, 1, 1, &err);
        CHECK_NO_ERROR(err);
        CHECK_GET(copy, roptions, "ing1", "x");
        CHECK_GET(copy, roptions, "ing2", NULL);
        CHECK(access(path, F_OK) != 0); /* moved */
        jigsaw_ingest_external_files(copy, files, 1, 0, &err);
        CHECK(err != NULL);
        jigsaw_free(err);
        err = NULL;
      }
      /* Without retention, the first writes' logs are gone. */
      CHECK(jigsaw_get_updates_since(db, 1, &err) == NULL);
      CHECK_ERROR(err, "NotFound");
    }
    jigsaw_close(copy);
    /* The checkpoint read-only: every key, and writes refused. */
    copy = jigsaw_open_for_read_only(disk, checkpoint, &err);
    CHECK_NO_ERROR(err);
    CHECK_GET(copy, roptions, "after", "checkpoint");
    jigsaw_put(copy, woptions, "k", 1, "v", 1, &err);
    CHECK_ERROR(err, "Not supported");
    jigsaw_close(copy);
    /* A secondary beside a writer catches up with its writes. */
    {
      jigsaw_t* secondary;
      copy = jigsaw_open(disk, checkpoint, &err);
      CHECK_NO_ERROR(err);
      secondary = jigsaw_open_as_secondary(disk, checkpoint, &err);
      CHECK_NO_ERROR(err);
      jigsaw_put(copy, woptions, "followed", 8, "yes", 3, &err);
      CHECK_NO_ERROR(err);
      CHECK_GET(secondary, roptions, "followed", NULL);
      jigsaw_try_catch_up_with_primary(secondary, &err);
      CHECK_NO_ERROR(err);
      CHECK_GET(secondary, roptions, "followed", "yes");
      jigsaw_try_catch_up_with_primary(copy, &err);
      CHECK_ERROR(err, "Not supported");
      jigsaw_close(secondary);
      jigsaw_close(copy);
    }
    jigsaw_destroy_db(disk, checkpoint, &err);
    CHECK_NO_ERROR(err);
    CHECK(rmdir(checkpoint) == 0 || errno == ENOENT);
    jigsaw_options_destroy(disk);
  }
  jigsaw_close(db);
  jigsaw_options_set_pmem_hash_index(options, 1);
  jigsaw_options_set_read_triggered_compactions(options, 1);
  jigsaw_options_set_concurrent_memtable_writes(options, 1);

  phase = "copy into a disk-mode database";
  {
    jigsaw_options_t* to = SmallOptions(jigsaw_storage_disk);
    jigsaw_t* copy;
    jigsaw_copy_db(options, dbname, to, copyname, &err);
    CHECK_NO_ERROR(err);
    jigsaw_options_set_create_if_missing(to, 0);
    copy = jigsaw_open(to, copyname, &err);
    CHECK_NO_ERROR(err);
    CHECK_GET(copy, roptions, "foo", "world");
    CHECK_GET(copy, roptions, "baz", "d");
    jigsaw_close(copy);
    jigsaw_destroy_db(to, copyname, &err);
    CHECK_NO_ERROR(err);
    jigsaw_options_destroy(to);
  }

  phase = "repair";
  {
    char* report = NULL;
    char lostname[600];
    jigsaw_options_set_best_efforts_recovery(options, 1); /* nothing to set aside here: opens as usual */
    db = jigsaw_open(options, dbname, &err);
    CHECK_NO_ERROR(err);
    jigsaw_close(db);
    jigsaw_options_set_best_efforts_recovery(options, 0);
    jigsaw_repair_db(options, dbname, &report, &err);
    CHECK_NO_ERROR(err);
    CHECK(report != NULL && strstr(report, "kept") != NULL);
    jigsaw_free(report);
    db = jigsaw_open(options, dbname, &err);
    CHECK_NO_ERROR(err);
    CHECK_GET(db, roptions, "foo", "world");
    jigsaw_close(db);
    snprintf(lostname, sizeof(lostname), "%s.lost", dbname); /* the database before the repair */
    jigsaw_destroy_db(options, lostname, &err);
    CHECK_NO_ERROR(err);
    CHECK(rmdir(lostname) == 0 || errno == ENOENT);
  }

  phase = "destroy";
  jigsaw_destroy_db(options, dbname, &err);
  CHECK_NO_ERROR(err);
  db = jigsaw_open(options, dbname, &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "Invalid argument");

  jigsaw_readoptions_destroy(roptions);
  jigsaw_writeoptions_destroy(woptions);
  jigsaw_options_destroy(options);
}

/* Options a setter could not take fail the open, destroy and copy that use
 * them, with a message that names the setter. */
static void TestInvalidOptions(const char* base) {
  char dbname[512];
  char* err = NULL;
  jigsaw_options_t* options = SmallOptions(jigsaw_storage_disk);
  snprintf(dbname, sizeof(dbname), "%s/invalid", base);

  phase = "invalid storage mode";
  jigsaw_options_set_storage_mode(options, 7);
  CHECK(jigsaw_open(options, dbname, &err) == NULL);
  CHECK(err != NULL && strstr(err, "jigsaw_options_set_storage_mode") != NULL);
  /* A second failure replaces the message (the first is freed: ASan's leak
   * check sees it). */
  jigsaw_destroy_db(options, dbname, &err);
  CHECK_ERROR(err, "Invalid argument");
  jigsaw_options_destroy(options);

  phase = "invalid recovery mode and emulation";
  options = SmallOptions(jigsaw_storage_disk);
  jigsaw_options_set_wal_recovery_mode(options, -1);
  CHECK(jigsaw_open(options, dbname, &err) == NULL);
  CHECK_ERROR(err, "Invalid argument");
  jigsaw_options_destroy(options);
  options = SmallOptions(jigsaw_storage_disk);
  jigsaw_options_set_pmem_emulation(options, 3);
  CHECK(jigsaw_open(options, dbname, &err) == NULL);
  CHECK_ERROR(err, "Invalid argument");
  jigsaw_options_destroy(options);
  options = SmallOptions(jigsaw_storage_disk);
  jigsaw_options_set_compression(options, 3);
  CHECK(jigsaw_open(options, dbname, &err) == NULL);
  CHECK(err != NULL && strstr(err, "jigsaw_options_set_compression") != NULL);
  jigsaw_free(err);
  err = NULL;
  jigsaw_options_destroy(options);

  phase = "an option out of range is the engine's InvalidArgument";
  options = SmallOptions(jigsaw_storage_disk);
  jigsaw_options_set_memtable_size(options, 10);
  CHECK(jigsaw_open(options, dbname, &err) == NULL);
  CHECK(err != NULL && strstr(err, "memtable_size") != NULL);
  jigsaw_free(err);
  err = NULL;
  jigsaw_options_destroy(options);

  phase = "write_buffer_size is memtable_size";
  options = SmallOptions(jigsaw_storage_disk);
  jigsaw_options_set_write_buffer_size(options, 10);
  CHECK(jigsaw_open(options, dbname, &err) == NULL);
  CHECK(err != NULL && strstr(err, "memtable_size") != NULL);
  jigsaw_free(err);
  err = NULL;
  jigsaw_options_destroy(options);

  phase = "NULL is accepted by every release call";
  jigsaw_close(NULL);
  jigsaw_free(NULL);
  jigsaw_options_destroy(NULL);
  jigsaw_readoptions_destroy(NULL);
  jigsaw_writeoptions_destroy(NULL);
  jigsaw_writebatch_destroy(NULL);
  jigsaw_iter_destroy(NULL);
}

int main(void) {
  char base[] = "/tmp/jigsaw-c-test-XXXXXX";
  char shm_base[] = "/dev/shm/jigsaw-c-test-XXXXXX";
  const char* dir;
  phase = "version";
  CHECK(jigsaw_major_version() == JIGSAW_VERSION_MAJOR);
  CHECK(jigsaw_minor_version() == JIGSAW_VERSION_MINOR);

  /* Databases (and their pools) in /dev/shm when there is one. */
  dir = access("/dev/shm", W_OK) == 0 ? mkdtemp(shm_base) : mkdtemp(base);
  CHECK(dir != NULL);
  TestMode(jigsaw_storage_pmem, "pmem", dir);
  TestMode(jigsaw_storage_hybrid, "hybrid", dir);
  TestMode(jigsaw_storage_disk, "disk", dir);
  TestInvalidOptions(dir);
  CHECK(rmdir(dir) == 0);
  printf("c_test: %d checks passed\n", checks);
  return 0;
}
