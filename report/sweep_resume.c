/* report/sweep_resume.c — the rows a sweep directory already holds, found
 * by their coordinates (sweep_resume.h): an open-addressing hash table
 * over the rows of results.csv, and the composition of the final table.
 *
 * Ownership: the map holds row numbers only, never cells. Cost: building
 * is O(rows x coordinates); a lookup hashes and compares the coordinates
 * (O(coordinates) expected); composing is O(points + old rows) lookups.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/sweep_resume.h"
#include "report/sweep_row.h"
#include "base/strv.h"
#include "base/util.h"

static uint64_t
row_key(char *const *r, int nc)
{
  uint64_t h = OOC_HASH_SEED;
  for (int i = 0; i < nc; i++)
    h = ooc_hash64(r[i], strlen(r[i]) + 1, h);
  return h;
}

static int
row_coords_equal(char *const *a, char *const *b, int nc)
{
  for (int i = 0; i < nc; i++)
    if (strcmp(a[i], b[i]) != 0)
      return 0;
  return 1;
}

int
ooc_sweep_resume_build(ooc_sweep_resume *km, const ooc_table *t, int nc)
{
  km->cap = 16;
  while (km->cap < 2 * t->nrows + 16)
    km->cap *= 2;
  km->slot = malloc((size_t)km->cap * sizeof *km->slot);
  km->hash = malloc((size_t)km->cap * sizeof *km->hash);
  if (!km->slot || !km->hash)
    return OOC_ENOMEM;
  for (int64_t i = 0; i < km->cap; i++)
    km->slot[i] = -1;
  for (int64_t r = 0; r < t->nrows; r++) {
    uint64_t h = row_key(t->rows[r], nc);
    int64_t s = (int64_t)(h & (uint64_t)(km->cap - 1));
    int dup = 0;
    while (km->slot[s] >= 0) {
      if (km->hash[s] == h &&
          row_coords_equal(t->rows[km->slot[s]], t->rows[r], nc)) {
        dup = 1;
        break;
      }
      s = (s + 1) & (km->cap - 1);
    }
    if (!dup) {
      km->slot[s] = r;
      km->hash[s] = h;
    }
  }
  return OOC_OK;
}

int64_t
ooc_sweep_resume_find(const ooc_sweep_resume *km, const ooc_table *t,
                      char *const *coords, int nc)
{
  uint64_t h = row_key(coords, nc);
  int64_t s = (int64_t)(h & (uint64_t)(km->cap - 1));
  while (km->slot[s] >= 0) {
    if (km->hash[s] == h && row_coords_equal(t->rows[km->slot[s]], coords, nc))
      return km->slot[s];
    s = (s + 1) & (km->cap - 1);
  }
  return -1;
}

void
ooc_sweep_resume_free(ooc_sweep_resume *km)
{
  free(km->slot);
  free(km->hash);
}

int
ooc_sweep_resume_compose(const ooc_sweep_grid *g, const ooc_table *hdr,
                         const ooc_table *old, const ooc_sweep_resume *km,
                         char ***new_rows, ooc_table *out)
{
  int nc = ooc_sweep_ncoords(g);
  int64_t np = ooc_sweep_npoints(g);
  char *coords[64];
  char *used = old->nrows ? calloc((size_t)old->nrows, 1) : NULL;
  int rc = OOC_OK;

  if (old->nrows && !used)
    return OOC_ENOMEM;
  ooc_table_init(out);
  if (!(out->cols = ooc_strv_dup(hdr->cols, hdr->ncols))) {
    free(used);
    return OOC_ENOMEM;
  }
  out->ncols = hdr->ncols;
  for (int64_t i = 0; i < np && !rc; i++) {
    char **src = NULL, **r;
    if (new_rows && new_rows[i]) {
      src = new_rows[i];
    } else if (old->nrows) {
      int64_t o;
      memset(coords, 0, sizeof coords);
      if (ooc_sweep_point_coords(g, i, coords)) {
        for (int j = 0; j < nc; j++)
          free(coords[j]);
        rc = OOC_ENOMEM;
        break;
      }
      o = ooc_sweep_resume_find(km, old, coords, nc);
      for (int j = 0; j < nc; j++)
        free(coords[j]);
      if (o >= 0) {
        src = old->rows[o];
        used[o] = 1;
      }
    }
    if (!src)
      continue;
    if (!(r = ooc_strv_dup(src, out->ncols)) || ooc_table_push(out, r)) {
      ooc_strv_free(r, out->ncols);
      rc = OOC_ENOMEM;
    }
  }
  for (int64_t o = 0; o < old->nrows && !rc; o++) {
    char **r;
    if (used[o])
      continue;
    /* A duplicate of a row already placed is dropped. */
    if (ooc_sweep_resume_find(km, old, old->rows[o], nc) != o)
      continue;
    if (!(r = ooc_strv_dup(old->rows[o], out->ncols)) || ooc_table_push(out, r)) {
      ooc_strv_free(r, out->ncols);
      rc = OOC_ENOMEM;
    }
  }
  free(used);
  if (rc)
    ooc_table_fini(out);
  return rc;
}

/* Does cell read as kind k? */
static int
cell_ok(const char *c, int k)
{
  char *end;
  double v;

  if (k == OOC_CELL_TEXT)
    return 1;
  if (k == OOC_CELL_FLAG)
    return strcmp(c, "0") == 0 || strcmp(c, "1") == 0;
  if (c[0] == '\0')
    return 1;                   /* a value that does not exist */
  if (k == OOC_SWEEP_CELL_LIMIT)
    return strcmp(c, ooc_limit_kind_name(OOC_LIMIT_WORKING_SET)) == 0 ||
           strcmp(c, ooc_limit_kind_name(OOC_LIMIT_LARGEST_STEP)) == 0 ||
           strcmp(c, ooc_limit_kind_name(OOC_LIMIT_OOM)) == 0;
  if (k == OOC_CELL_COUNT) {
    for (const char *p = c; *p; p++)
      if (*p < '0' || *p > '9')
        return 0;
    return 1;
  }
  /* As %.9f and %.9g write one: a digit first, no hexadecimal. */
  if (!isdigit((unsigned char)c[0]) || strpbrk(c, "xX") != NULL)
    return 0;
  errno = 0;
  v = strtod(c, &end);
  return *end == '\0' && errno == 0 && isfinite(v) && v >= 0;
}

int
ooc_sweep_check_results(const ooc_table *t, int nc, const char *path,
                        ooc_err *err)
{
  unsigned char *kind;
  int rc = OOC_OK;

  if (nc >= t->ncols)
    return OOC_OK;
  if ((kind = malloc((size_t)(t->ncols - nc))) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (int j = nc; j < t->ncols; j++)
    kind[j - nc] = (unsigned char)ooc_sweep_col_kind(t->cols[j]);
  /* Row by row, so that the cell named is the first in the file. */
  for (int64_t r = 0; r < t->nrows && rc == OOC_OK; r++)
    for (int j = nc; j < t->ncols; j++) {
      int k = kind[j - nc];
      if (cell_ok(t->rows[r][j], k))
        continue;
      rc = ooc_err_set(err, OOC_EPARSE, "%s: line %" PRId64 ", column "
                       "'%s': '%.40s' is not %s", path,
                       ooc_table_row_line(t, r), t->cols[j], t->rows[r][j],
                       k == OOC_CELL_FLAG ? "0 or 1"
                       : k == OOC_CELL_COUNT ? "a count (an integer >= 0)"
                       : k == OOC_SWEEP_CELL_LIMIT
                           ? "working_set, largest_step or oom"
                           : "a number >= 0");
      break;
    }
  free(kind);
  return rc;
}
