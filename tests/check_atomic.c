/* tests/check_atomic.c — base/atomic.c: a committed file holds exactly what
 * was written, an aborted one leaves the target as it was, no temporary
 * file stays behind either way, and a target that cannot be written gives
 * an error naming the path and the system's reason.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/util.h"

/* A fresh directory in the current one (caller frees). */
static char *
scratch_dir(void)
{
  char *d = strdup("atomic-XXXXXX");
  ck_assert_ptr_nonnull(d);
  ck_assert_ptr_nonnull(mkdtemp(d));
  return d;
}

static int
entries(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;

  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      n++;
  closedir(d);
  return n;
}

static char *
slurp(const char *path)
{
  char *text = NULL;
  size_t len;
  ooc_err err = { 0 };
  ck_assert_msg(ooc_read_file(path, &text, &len, &err) == 0, "%s", err.msg);
  return text;
}

START_TEST(commit_and_abort)
{
  char *dir = scratch_dir(), path[256], *text;
  ooc_atomic_file af;
  ooc_err err = { 0 };

  snprintf(path, sizeof path, "%s/out.csv", dir);
  ck_assert_int_eq(ooc_atomic_open(&af, path, &err), OOC_OK);
  fputs("a,b\n1,2\n", af.f);
  ck_assert_int_eq(access(path, F_OK), -1);   /* nothing there until commit */
  ck_assert_int_eq(ooc_atomic_commit(&af, &err), OOC_OK);
  text = slurp(path);
  ck_assert_str_eq(text, "a,b\n1,2\n");
  free(text);

  ck_assert_int_eq(ooc_atomic_open(&af, path, &err), OOC_OK);
  fputs("half a fi", af.f);
  ooc_atomic_abort(&af);
  text = slurp(path);
  ck_assert_str_eq(text, "a,b\n1,2\n");
  free(text);

  ck_assert_int_eq(ooc_atomic_write(path, "new\n", &err), OOC_OK);
  text = slurp(path);
  ck_assert_str_eq(text, "new\n");
  free(text);
  ck_assert_int_eq(entries(dir), 1);         /* no temporary file left */
  unlink(path);
  rmdir(dir);
  free(dir);
}
END_TEST

START_TEST(errors_name_the_path)
{
  ooc_atomic_file af;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_atomic_open(&af, "no-such-dir/x/out.csv", &err),
                   OOC_EIO);
  ck_assert_str_eq(err.msg, "cannot write 'no-such-dir/x/out.csv': No such "
                   "file or directory");
  ck_assert_int_eq(ooc_atomic_write("no-such-dir/out.csv", "x", &err),
                   OOC_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "'no-such-dir/out.csv'"));
}
END_TEST

/* The target is a directory: refused before anything is written. */
START_TEST(rename_failure_cleans_up)
{
  char *dir = scratch_dir(), path[256], link[300], buf[8] = { 0 };
  ooc_atomic_file af;
  ooc_err err = { 0 };
  FILE *f;

  snprintf(path, sizeof path, "%s/target", dir);
  ck_assert_int_eq(mkdir(path, 0777), 0);
  ck_assert_int_eq(ooc_atomic_open(&af, path, &err), OOC_EIO);
  ck_assert_msg(strstr(err.msg, "/target': is a directory") != NULL, "%s",
                err.msg);
  ck_assert_int_eq(entries(dir), 1);         /* only the directory */
  rmdir(path);
  /* A symbolic link: the file it names is replaced, the link kept. */
  snprintf(link, sizeof link, "%s/link", dir);
  ck_assert_int_eq(symlink("target", link), 0);
  ck_assert_int_eq(ooc_atomic_write(link, "x", &err), OOC_EIO);
  ck_assert_msg(strstr(err.msg, "/link': a symbolic link to a missing "
                       "file") != NULL, "%s", err.msg);
  ck_assert_int_eq(ooc_atomic_write(path, "old", &err), OOC_OK);
  ck_assert_int_eq(ooc_atomic_write(link, "new", &err), OOC_OK);
  ck_assert_ptr_nonnull(f = fopen(path, "r"));
  ck_assert_int_eq(fread(buf, 1, sizeof buf - 1, f), 3);
  fclose(f);
  ck_assert_str_eq(buf, "new");
  ck_assert_int_eq(readlink(link, buf, sizeof buf - 1), 6);
  unlink(link);
  unlink(path);
  rmdir(dir);
  free(dir);
}
END_TEST

static Suite *
atomic_suite(void)
{
  Suite *s = suite_create("atomic");
  TCase *tc = tcase_create("files");

  tcase_add_test(tc, commit_and_abort);
  tcase_add_test(tc, errors_name_the_path);
  tcase_add_test(tc, rename_failure_cleans_up);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(atomic_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
