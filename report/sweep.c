/* report/sweep.c — a sweep from grid to result files (sweep.h): which
 * points to run (shard, resume), the runner's threads (sweep_runner.h)
 * while this thread draws progress and saves every few seconds, the final
 * files; and --merge of shard directories.
 *
 * Ownership: the old table, the resume map and the runner live for one
 * ooc_sweep_run; the caller's table, when asked for, receives the final
 * rows. Cost: the points' runs (sweep_runner.h), plus composing and saving
 * every row at each flush (O(points + old rows)).
 */
#include "config.h"

#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/plansim.h"
#include "base/util.h"
#include "report/sweep.h"
#include "report/sweep_resume.h"
#include "report/sweep_runner.h"
#include "base/atomic.h"
#include "base/strv.h"
#include "base/util.h"

/* Seconds between two saves of the results while points run. */
#define FLUSH_S 5.0
/* Seconds the caller's thread waits for a point before looking again. */
#define WAIT_S 0.25

int
ooc_sweep_mkdir(const char *dir, ooc_err *err)
{
  char probe[4096];
  FILE *f;

  /* Create missing parents too (as mkdir -p): "-o out/report" in a fresh
   * clone has no out/ yet. */
  if ((size_t)snprintf(probe, sizeof probe, "%s", dir) >= sizeof probe)
    return ooc_err_set(err, OOC_EINVAL, "output directory name too long");
  for (char *q = probe + 1; *q != '\0'; q++) {
    if (*q != '/')
      continue;
    *q = '\0';
    if (mkdir(probe, 0777) != 0 && errno != EEXIST)
      return ooc_err_set(err, OOC_EIO, "cannot create output directory "
                         "'%s': %s", probe, strerror(errno));
    *q = '/';
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return ooc_err_set(err, OOC_EIO, "cannot create output directory '%s': %s",
                       dir, strerror(errno));
  snprintf(probe, sizeof probe, "%s/.oocsim-write-test", dir);
  f = fopen(probe, "w");
  if (!f)
    return ooc_err_set(err, OOC_EIO, "cannot write to output directory '%s': %s",
                       dir, strerror(errno));
  fclose(f);
  remove(probe);
  return OOC_OK;
}

/* dir/results.csv, dir/results.json and, when grid is given, dir/grid.json,
 * each replaced atomically. */
static int
write_results(const char *dir, const ooc_table *t, const char *grid,
              ooc_err *err)
{
  char path[4096];
  int rc;

  snprintf(path, sizeof path, "%s/results.csv", dir);
  rc = ooc_table_save_csv(t, path, err);
  snprintf(path, sizeof path, "%s/results.json", dir);
  if (!rc)
    rc = ooc_table_save_json(t, path, err);
  snprintf(path, sizeof path, "%s/grid.json", dir);
  if (!rc && grid)
    rc = ooc_atomic_write(path, grid, err);
  return rc;
}

/* Save the rows done so far with the old ones (ooc_sweep_resume_compose);
 * keep receives the table when non-NULL. */
static int
flush(const ooc_sweep_grid *g, const ooc_table *hdr, const ooc_table *old,
      const ooc_sweep_resume *km, ooc_sweep_runner *R, const char *dir,
      const char *grid, ooc_table *keep, ooc_err *err)
{
  ooc_table out;
  int rc;
  int64_t np = ooc_sweep_npoints(g);
  char ***snap = calloc((size_t)(np ? np : 1), sizeof *snap);

  if (!snap)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  ooc_sweep_runner_rows(R, snap);
  rc = ooc_sweep_resume_compose(g, hdr, old, km, snap, &out);
  free(snap);
  if (rc)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  rc = write_results(dir, &out, grid, err);
  if (!rc && keep)
    *keep = out;
  else
    ooc_table_fini(&out);
  return rc;
}

/* The rows of dir/results.csv when resuming (old stays empty otherwise);
 * they must have this sweep's columns, and result cells as a sweep
 * writes them (the first nc columns are the coordinates). */
static int
read_old(const ooc_sweep_opts *o, const ooc_table *hdr, int nc,
         ooc_table *old, ooc_err *err)
{
  char path[4096];
  int rc;

  snprintf(path, sizeof path, "%s/results.csv", o->dir);
  if (!o->resume || access(path, F_OK) != 0)
    return OOC_OK;
  if ((rc = ooc_table_read_csv(path, old, err)))
    return rc;
  if (!ooc_table_same_cols(hdr, old))
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: its columns differ from this sweep's (another "
                       "grid, or an older oocsim, wrote it); use another -o "
                       "directory, or --fresh to replace it", path);
  return ooc_sweep_check_results(old, nc, path, err);
}

/* Rows kept by a resume must have been simulated as this sweep simulates:
 * the same --iterations and --steady as dir/grid.json records (no
 * grid.json, or one that does not read, leaves nothing to compare: the
 * resume rewrites it). */
static int
check_old_settings(const ooc_sweep_grid *g, const char *dir, ooc_err *err)
{
  char path[4096], *text = NULL, was[64], now[64];
  ooc_sweep_grid old;
  size_t len;
  int rc = OOC_OK;

  snprintf(path, sizeof path, "%s/grid.json", dir);
  if (access(path, F_OK) != 0)
    return OOC_OK;
  if ((rc = ooc_read_file(path, &text, &len, err)))
    return rc;
  /* (0 is the default, which older grid files wrote as 0.) */
  if (ooc_sweep_grid_from_json(text, path, &old, NULL) == OOC_OK &&
      ((old.iterations > 0 ? old.iterations : OOC_PLANSIM_ITERATIONS) !=
           (g->iterations > 0 ? g->iterations : OOC_PLANSIM_ITERATIONS) ||
       old.steady != (g->steady != 0))) {
    snprintf(was, sizeof was, "%s--iterations %d",
             old.steady ? "--steady, " : "",
             old.iterations > 0 ? old.iterations : OOC_PLANSIM_ITERATIONS);
    snprintf(now, sizeof now, "%s--iterations %d",
             g->steady ? "--steady, " : "",
             g->iterations > 0 ? g->iterations : OOC_PLANSIM_ITERATIONS);
    rc = ooc_err_set(err, OOC_EINVAL, "%s: its rows were simulated with %s, "
                     "this sweep with %s; resume with the same options, or "
                     "use --fresh to replace them", path, was, now);
  }
  ooc_sweep_grid_fini(&old);
  free(text);
  return rc;
}

/* Which rows of t are points of g, and which points t holds: rows
 * outside the grid (not a duplicate of a row of it) are counted in
 * *outside, the first in *first_out; the points t does not hold in
 * *missing, the first in *first_miss (-1: none). O(points + rows);
 * OOC_ENOMEM. */
static int
grid_cover(const ooc_sweep_grid *g, const ooc_table *t,
           const ooc_sweep_resume *km, int64_t *outside, int64_t *first_out,
           int64_t *missing, int64_t *first_miss)
{
  int nc = ooc_sweep_ncoords(g);
  int64_t np = ooc_sweep_npoints(g);
  char *mark = NULL;

  *outside = *missing = 0;
  *first_out = *first_miss = -1;
  if (t->nrows > 0 && !(mark = calloc((size_t)t->nrows, 1)))
    return OOC_ENOMEM;
  for (int64_t i = 0; i < np; i++) {
    char *coords[64] = { 0 };
    int64_t r = -1;
    if (ooc_sweep_point_coords(g, i, coords)) {
      for (int j = 0; j < nc; j++)
        free(coords[j]);
      free(mark);
      return OOC_ENOMEM;
    }
    if (t->nrows > 0)
      r = ooc_sweep_resume_find(km, t, coords, nc);
    for (int j = 0; j < nc; j++)
      free(coords[j]);
    if (r >= 0) {
      mark[r] = 1;
    } else if ((*missing)++ == 0) {
      *first_miss = i;
    }
  }
  for (int64_t r = 0; r < t->nrows; r++) {
    int64_t f;
    if (mark[r])
      continue;
    f = ooc_sweep_resume_find(km, t, t->rows[r], nc);
    if (f >= 0 && mark[f])
      continue;               /* a duplicate of a point of the grid */
    if ((*outside)++ == 0)
      *first_out = r;
  }
  free(mark);
  return OOC_OK;
}

/* "planner, hw, batch N" of row r of t, for messages. */
static const char *
row_name(const ooc_table *t, int64_t r, char *buf, size_t cap)
{
  int p = ooc_table_col(t, "planner"), h = ooc_table_col(t, "hw"),
      b = ooc_table_col(t, "batch");

  snprintf(buf, cap, "%s, %s, batch %s", p >= 0 ? t->rows[r][p] : "-",
           h >= 0 ? t->rows[r][h] : "-", b >= 0 ? t->rows[r][b] : "-");
  return buf;
}

/* Refuse old rows that are not points of g (another sweep wrote them):
 * mixing them in would leave results.csv holding rows grid.json does not
 * describe. A duplicate of a row of the grid is not counted (the final
 * table drops it). O(points + rows). */
static int
check_old_in_grid(const ooc_sweep_grid *g, const char *dir,
                  const ooc_table *old, const ooc_sweep_resume *km,
                  ooc_err *err)
{
  int64_t outside, first, missing, first_miss;
  char name[256];

  if (old->nrows == 0)
    return OOC_OK;
  if (grid_cover(g, old, km, &outside, &first, &missing, &first_miss))
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  if (outside == 0)
    return OOC_OK;
  return ooc_err_set(err, OOC_EINVAL, "%s/results.csv holds %" PRId64
                     " row%s outside this sweep's grid (line %" PRId64 ": "
                     "%s; another sweep wrote them): use "
                     "another -o directory, or --fresh to replace them",
                     dir, outside, outside == 1 ? "" : "s",
                     ooc_table_row_line(old, first),
                     row_name(old, first, name, sizeof name));
}

/* Queue the points of this shard that old does not hold yet, in the
 * runner's order; count them in st. */
static int
queue_points(const ooc_sweep_grid *g, const ooc_sweep_opts *o,
             const ooc_table *old, const ooc_sweep_resume *km,
             ooc_sweep_runner *R, ooc_sweep_stats *st, ooc_err *err)
{
  int nc = ooc_sweep_ncoords(g);
  int64_t np = ooc_sweep_npoints(g);

  for (int64_t k = 0; k < np; k++) {
    char *coords[64] = { 0 };
    int64_t found, i = ooc_sweep_runner_order(g, k);
    if (o->shard_n > 0 && i % o->shard_n != o->shard_k - 1)
      continue;
    st->points++;
    if (old->nrows) {
      if (ooc_sweep_point_coords(g, i, coords)) {
        for (int j = 0; j < nc; j++)
          free(coords[j]);
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      }
      found = ooc_sweep_resume_find(km, old, coords, nc);
      for (int j = 0; j < nc; j++)
        free(coords[j]);
      if (found >= 0) {
        st->skipped++;
        continue;
      }
    }
    ooc_sweep_runner_add(R, i);
  }
  return OOC_OK;
}

/* While the runner works: redraw progress at most five times a second and
 * save every FLUSH_S seconds. A failed save stops the claiming of new
 * points; its error is returned once those claimed are done. */
static int
watch(const ooc_sweep_grid *g, const ooc_sweep_opts *o, const ooc_table *hdr,
      const ooc_table *old, const ooc_sweep_resume *km, ooc_sweep_runner *R,
      ooc_err *err)
{
  double last_flush = ooc_wall_s();
  int64_t d, total;
  int rc = OOC_OK;

  while (ooc_sweep_runner_wait(R, WAIT_S, &d, &total)) {
    /* The last redraw comes after the points are done. */
    if (d < total)
      ooc_progress_show(o->progress, d, total, "points", o->progress_note);
    if (!rc && ooc_wall_s() - last_flush > FLUSH_S) {
      if ((rc = flush(g, hdr, old, km, R, o->dir, NULL, NULL, err)))
        ooc_sweep_runner_stop(R);
      last_flush = ooc_wall_s();
    }
  }
  return rc;
}

int
ooc_sweep_run(const ooc_sweep_grid *g, const ooc_sweep_opts *o,
              ooc_sweep_stats *st, ooc_table *table, ooc_err *err)
{
  ooc_table hdr, old;
  ooc_sweep_resume km = { 0 };
  ooc_sweep_runner *R = NULL;
  char *grid = NULL;
  const char *first_error;
  int rc, nc = ooc_sweep_ncoords(g);
  int64_t n;
  double t0 = ooc_wall_s();
  int lock = -1;

  *st = (ooc_sweep_stats){ .points = 0 };
  ooc_table_init(&hdr);
  ooc_table_init(&old);
  if (nc > 64 || g->n_hwsets > OOC_SWEEP_MAX_HWSETS)
    return ooc_err_set(err, OOC_EINVAL, "too many --hw-set axes (max 32)");
  /* One sweep per folder at a time: from reading the old rows to the last
   * save (another would overwrite them with its own). */
  if ((rc = ooc_sweep_mkdir(o->dir, err)) ||
      (rc = ooc_dir_lock(o->dir, &lock, err)))
    return rc;
  if ((rc = ooc_sweep_header(g, &hdr, err)))
    goto out;
  if ((rc = read_old(o, &hdr, nc, &old, err)))
    goto out;
  if (old.nrows > 0 && (rc = check_old_settings(g, o->dir, err)))
    goto out;
  if (ooc_sweep_resume_build(&km, &old, nc) ||
      !(grid = ooc_sweep_grid_to_json(g))) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = check_old_in_grid(g, o->dir, &old, &km, err)))
    goto out;
  if ((rc = ooc_sweep_runner_alloc(g, hdr.ncols, &R, err)) ||
      (rc = queue_points(g, o, &old, &km, R, st, err)))
    goto out;
  /* Write the grid (and the kept rows) first: a bad directory fails now. */
  if ((rc = flush(g, &hdr, &old, &km, R, o->dir, grid, NULL, err)) ||
      (rc = ooc_sweep_runner_start(R, o->jobs > 0 ? o->jobs : 1, err)))
    goto out;
  rc = watch(g, o, &hdr, &old, &km, R, err);
  ooc_sweep_runner_join(R);
  if (rc)
    goto out;
  n = ooc_sweep_runner_count(R);
  if (n > 0)
    ooc_progress_show(o->progress, n, n, "points", o->progress_note);
  if ((rc = flush(g, &hdr, &old, &km, R, o->dir, NULL, table, err)))
    goto out;
  ooc_sweep_runner_result(R, &st->ran, &st->failed, &first_error);
  snprintf(st->first_error, sizeof st->first_error, "%s", first_error);
  st->wall_s = ooc_wall_s() - t0;
out:
  ooc_sweep_runner_free(R);
  free(grid);
  ooc_sweep_resume_free(&km);
  ooc_table_fini(&old);
  ooc_table_fini(&hdr);
  ooc_dir_unlock(o->dir, lock);
  return rc;
}

/* "col=value, ..." of grid point i's coordinates (t's first nc columns),
 * into buf. */
static void
point_name(const ooc_sweep_grid *g, const ooc_table *t, int64_t i, char *buf,
           size_t cap)
{
  int nc = ooc_sweep_ncoords(g);
  char *coords[64] = { 0 };
  size_t at = 0;

  buf[0] = '\0';
  if (ooc_sweep_point_coords(g, i, coords) == OOC_OK)
    for (int j = 0; j < nc && at < cap; j++) {
      int w = snprintf(buf + at, cap - at, "%s%s=%s", j ? ", " : "",
                       t->cols[j], coords[j]);
      if (w < 0)
        break;
      at += (size_t)w;
    }
  for (int j = 0; j < nc; j++)
    free(coords[j]);
}

int
ooc_sweep_merge(const char *const *dirs, int n, const char *dir,
                ooc_sweep_merged *ms, ooc_err *err)
{
  char path[4096], *grid_text = NULL, *other = NULL;
  size_t len;
  ooc_sweep_grid g;
  ooc_table all, part, out;
  ooc_sweep_resume km = { 0 };
  int rc, nc, lock = -1;
  int64_t *ends = NULL, outside, first_out, missing, first_miss;

  memset(ms, 0, sizeof *ms);
  ooc_sweep_grid_init(&g);
  ooc_table_init(&all);
  ooc_table_init(&out);
  if (n < 1)
    return ooc_err_set(err, OOC_EINVAL, "--merge needs at least one directory");
  if (!(ends = calloc((size_t)n, sizeof *ends)))
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  snprintf(path, sizeof path, "%s/grid.json", dirs[0]);
  if ((rc = ooc_read_file(path, &grid_text, &len, err)))
    goto out;
  if ((rc = ooc_sweep_grid_from_json(grid_text, path, &g, err)))
    goto out;
  nc = ooc_sweep_ncoords(&g);
  for (int d = 0; d < n; d++) {
    snprintf(path, sizeof path, "%s/grid.json", dirs[d]);
    if (d > 0) {
      if ((rc = ooc_read_file(path, &other, &len, err)))
        goto out;
      if (strcmp(other, grid_text) != 0) {
        rc = ooc_err_set(err, OOC_EINVAL,
                         "%s: another grid than %s/grid.json; shards to merge "
                         "must come from the same sweep", path, dirs[0]);
        goto out;
      }
      free(other);
      other = NULL;
    }
    snprintf(path, sizeof path, "%s/results.csv", dirs[d]);
    if ((rc = ooc_table_read_csv(path, &part, err)))
      goto out;
    if (part.ncols >= nc &&
        (rc = ooc_sweep_check_results(&part, nc, path, err))) {
      ooc_table_fini(&part);
      goto out;
    }
    if (d == 0) {
      all.cols = part.cols;
      all.ncols = part.ncols;
      part.cols = NULL;
      part.ncols = 0;
    } else if (!ooc_table_same_cols(&all, &part)) {
      ooc_table_fini(&part);
      rc = ooc_err_set(err, OOC_EINVAL, "%s: columns differ from %s/results.csv",
                       path, dirs[0]);
      goto out;
    }
    for (int64_t r = 0; r < part.nrows; r++) {
      if (ooc_table_push_line(&all, part.rows[r],
                              ooc_table_row_line(&part, r))) {
        for (int64_t q = r; q < part.nrows; q++)
          ooc_strv_free(part.rows[q], part.ncols ? part.ncols : all.ncols);
        part.nrows = 0;
        ooc_table_fini(&part);
        rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
        goto out;
      }
    }
    part.nrows = 0;
    ooc_table_fini(&part);
    ends[d] = all.nrows;
  }
  if (nc > all.ncols) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s/results.csv: too few columns",
                     dirs[0]);
    goto out;
  }
  /* Every row must be a point of the grid (a results.csv edited, or
   * copied from another sweep beside this grid.json); the points no shard
   * holds are counted for the caller (a shard unfinished, a point that
   * failed), as are rows two shards both hold (the first one's is kept). */
  if (ooc_sweep_resume_build(&km, &all, nc) ||
      grid_cover(&g, &all, &km, &outside, &first_out, &missing,
                 &first_miss)) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  if (outside > 0) {
    char name[256];
    int d = 0;
    while (ends[d] <= first_out)
      d++;
    rc = ooc_err_set(err, OOC_EINVAL, "%s/results.csv: line %" PRId64
                     " (%s) is not a point of its grid.json; shards to "
                     "merge must come from the same sweep", dirs[d],
                     ooc_table_row_line(&all, first_out),
                     row_name(&all, first_out, name, sizeof name));
    goto out;
  }
  ms->points = ooc_sweep_npoints(&g);
  ms->present = ms->points - missing;
  ms->dups = all.nrows - ms->present;
  if (missing > 0)
    point_name(&g, &all, first_miss, ms->first_missing,
               sizeof ms->first_missing);
  if ((rc = ooc_sweep_mkdir(dir, err)) ||
      (rc = ooc_dir_lock(dir, &lock, err)))
    goto out;
  if (ooc_sweep_resume_compose(&g, &all, &all, &km, NULL, &out)) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  rc = write_results(dir, &out, grid_text, err);
out:
  free(ends);
  ooc_dir_unlock(dir, lock);
  ooc_sweep_resume_free(&km);
  ooc_table_fini(&out);
  ooc_table_fini(&all);
  ooc_sweep_grid_fini(&g);
  free(grid_text);
  free(other);
  return rc;
}
