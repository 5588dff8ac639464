/* A C program using an installed JigsawDB through jigsaw/c.h, built by
 * scripts/check-install.sh with pkg-config: a disk-mode database in a new
 * temporary directory, one put and get, destroyed. Exit status 0 only if
 * the value read equals the value written. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <jigsaw/c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int Fail(const char* what, char* err) {
  fprintf(stderr, "c consumer: %s%s%s\n", what, err != NULL ? ": " : "", err != NULL ? err : "");
  jigsaw_free(err);
  return 1;
}

int main(void) {
  char dir_template[] = "/tmp/jigsaw-c-consumer-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  char name[256];
  char* err = NULL;
  jigsaw_options_t* options = jigsaw_options_create();
  jigsaw_readoptions_t* roptions = jigsaw_readoptions_create();
  jigsaw_writeoptions_t* woptions = jigsaw_writeoptions_create();
  jigsaw_t* db;
  char* value;
  size_t value_len = 0;
  int ok;
  if (dir == NULL) return Fail("mkdtemp failed", NULL);
  snprintf(name, sizeof(name), "%s/db", dir);
  jigsaw_options_set_create_if_missing(options, 1);
  jigsaw_options_set_storage_mode(options, jigsaw_storage_disk);
  db = jigsaw_open(options, name, &err);
  if (err != NULL) return Fail("open", err);
  jigsaw_put(db, woptions, "key", 3, "value", 5, &err);
  if (err != NULL) return Fail("put", err);
  value = jigsaw_get(db, roptions, "key", 3, &value_len, &err);
  if (err != NULL) return Fail("get", err);
  ok = value != NULL && value_len == 5 && memcmp(value, "value", 5) == 0;
  jigsaw_free(value);
  jigsaw_close(db);
  jigsaw_destroy_db(options, name, &err);
  if (err != NULL) return Fail("destroy", err);
  jigsaw_options_destroy(options);
  jigsaw_readoptions_destroy(roptions);
  jigsaw_writeoptions_destroy(woptions);
  rmdir(dir);
  if (!ok) return Fail("the value read differs from the value written", NULL);
  printf("c consumer: JigsawDB %d.%d through the C API: ok\n", jigsaw_major_version(), jigsaw_minor_version());
  return 0;
}
