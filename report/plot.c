/* report/plot.c — data files for the plots/ gnuplot scripts, and running them.
 *
 * Each kind reads its input (a sweep's results.csv, a memory CSV or a
 * timeline CSV), writes a gnuplot data file of plain blocks (one per line of
 * the plot, separated by two blank lines so the scripts select them with
 * `index`) and passes titles and marks as gnuplot variables. gnuplot runs as
 * a child process (posix_spawn, no shell) with its stderr captured, so a
 * failure comes back as one message instead of being printed here.
 *
 * Owner: report helper. Cost: linear in the input rows; the timeline sorts
 * its spans, O(n log n).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/hw.h"
#include "base/atomic.h"
#include "base/util.h"
#include "report/plot.h"
#include "report/table.h"

extern char **environ;

static const char *const kind_names[OOC_PLOT_COUNT] = {
  "throughput", "bandwidth", "maxbatch", "memory", "gantt"
};

int
ooc_plot_kind_parse(const char *s, ooc_plot_kind *k, ooc_err *err)
{
  for (int i = 0; i < OOC_PLOT_COUNT; i++)
    if (strcmp(s, kind_names[i]) == 0) {
      *k = (ooc_plot_kind)i;
      return OOC_OK;
    }
  return ooc_err_set(err, OOC_ENOTFOUND,
                     "unknown plot kind '%s' (valid: throughput, bandwidth, "
                     "maxbatch, memory, gantt)", s);
}

/* ---- gnuplot ------------------------------------------------------------- */

static int
runnable(const char *prog)
{
  const char *path, *p;
  char buf[4096];

  if (!prog || !*prog)
    return 0;
  if (strchr(prog, '/'))
    return access(prog, X_OK) == 0;
  path = getenv("PATH");
  if (!path)
    return 0;
  for (p = path;;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    struct stat st;
    snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? p : ".", prog);
    if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
      return 1;
    if (!e)
      return 0;
    p = e + 1;
  }
}

int
ooc_plot_gnuplot(const char **path)
{
  const char *g = getenv("OOCSIM_GNUPLOT");
  if (!g || !*g)
    g = OOC_GNUPLOT;
  *path = g;
  return runnable(g);
}

/* gnuplot string literal: single-quoted pieces, in which gnuplot expands
 * nothing (a double-quoted string would run `backquoted` text as a shell
 * command), joined by "." with a double-quoted "'" for each quote and
 * "\n" for each newline (the doubled quote of the single-quoted form is
 * misread by gnuplot 5.4's -e when two come together). Other control
 * characters are dropped; a value too long for dst is cut between
 * characters, never inside a piece. */
void
ooc_plot_quote(char *dst, size_t n, const char *s)
{
  size_t k = 0;
  if (n < 3)
    return;
  dst[k++] = '\'';
  for (; *s && k + 10 < n; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\'' || c == '\n') {
      const char *piece = c == '\'' ? "'.\"'\".'" : "'.\"\\n\".'";
      size_t len = strlen(piece);
      memcpy(dst + k, piece, len);
      k += len;
    } else if (c >= 0x20 && c != 0x7f) {
      dst[k++] = (char)c;
    }
  }
  /* A multibyte character cut short by the size is cut whole. */
  while (*s && k > 1 && ((unsigned char)dst[k - 1] & 0xC0) == 0x80)
    k--;
  if (*s && k > 1 && ((unsigned char)dst[k - 1] & 0xC0) == 0xC0)
    k--;
  dst[k++] = '\'';
  dst[k] = '\0';
}

/* Variables passed with -e, built up as "name='value'; ". */
typedef struct gpvars {
  char buf[32768];
  size_t len;
} gpvars;

static void
var_s(gpvars *v, const char *name, const char *value)
{
  char q[4096];
  ooc_plot_quote(q, sizeof q, value);
  v->len += (size_t)snprintf(v->buf + v->len, sizeof v->buf - v->len,
                             "%s=%s; ", name, q);
  if (v->len >= sizeof v->buf)
    v->len = sizeof v->buf - 1;
}

static void
var_d(gpvars *v, const char *name, double value)
{
  v->len += (size_t)snprintf(v->buf + v->len, sizeof v->buf - v->len,
                             "%s=%.9g; ", name, value);
  if (v->len >= sizeof v->buf)
    v->len = sizeof v->buf - 1;
}

static int
script_path(ooc_plot_kind k, char *buf, size_t n, ooc_err *err)
{
  const char *dirs[2] = { ooc_data_dir(), OOC_SRCDIR };
  for (int i = 0; i < 2; i++) {
    if (!dirs[i] || !*dirs[i])
      continue;
    snprintf(buf, n, "%s/plots/%s.gp", dirs[i], kind_names[k]);
    if (access(buf, R_OK) == 0)
      return OOC_OK;
  }
  return ooc_err_set(err, OOC_ENOTFOUND, "plot script plots/%s.gp not found "
                     "under '%s'", kind_names[k], ooc_data_dir());
}

/* Run gnuplot -e VARS SCRIPT; on failure err gets its last stderr line. */
static int
run_gnuplot(const char *gp, const gpvars *v, const char *script,
            const char *out, ooc_err *err)
{
  int pfd[2], status = 0, rc;
  pid_t pid;
  posix_spawn_file_actions_t fa;
  char *argv[5], msg[2048];
  size_t ml = 0;

  if (pipe(pfd) != 0)
    return ooc_err_set(err, OOC_EIO, "pipe: %s", strerror(errno));
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&fa, pfd[0]);
  posix_spawn_file_actions_addclose(&fa, pfd[1]);
  argv[0] = (char *)gp;
  argv[1] = (char *)"-e";
  argv[2] = (char *)v->buf;
  argv[3] = (char *)script;
  argv[4] = NULL;
  rc = posix_spawnp(&pid, gp, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pfd[1]);
  if (rc != 0) {
    close(pfd[0]);
    return ooc_err_set(err, OOC_EUNSUP, "gnuplot is missing: cannot run '%s' "
                       "(%s); install gnuplot or set OOCSIM_GNUPLOT", gp,
                       strerror(rc));
  }
  for (;;) {
    char tmp[512];
    ssize_t r = read(pfd[0], tmp, sizeof tmp);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    for (ssize_t i = 0; i < r; i++)
      if (ml + 1 < sizeof msg)
        msg[ml++] = tmp[i];
  }
  close(pfd[0]);
  msg[ml] = '\0';
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    /* The last non-warning line of gnuplot's stderr, on one line. */
    char *line = NULL, *save = NULL, *tok;
    for (tok = strtok_r(msg, "\n", &save); tok; tok = strtok_r(NULL, "\n",
                                                                 &save))
      if (!strstr(tok, "warning:") && strspn(tok, " ^") != strlen(tok))
        line = tok;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      return ooc_err_set(err, OOC_EUNSUP, "gnuplot is missing: cannot run "
                         "'%s'; install gnuplot or set OOCSIM_GNUPLOT", gp);
    return ooc_err_set(err, OOC_EIO, "gnuplot failed on %s (%s): %s", script,
                       out, line ? line : "no message");
  }
  return OOC_OK;
}

/* ---- helpers --------------------------------------------------------------- */

static double
cell_d(const char *s)
{
  char *e;
  double v;
  if (!*s)
    return NAN;
  v = strtod(s, &e);
  return *e ? NAN : v;
}

/* The cells of the columns cols[0 .. n) (-1: absent, skipped) are
 * empty or finite numbers >= 0 (times, rates, batches and bytes all are):
 * else an error naming the file, row and column, since a cell that is no
 * number would otherwise reach gnuplot's data as "nan" or as it is. */
static int
check_numbers(const ooc_table *t, const char *in, const int *cols, int n,
              ooc_err *err)
{
  for (int64_t r = 0; r < t->nrows; r++)
    for (int k = 0; k < n; k++) {
      const char *cell;
      double x;
      if (cols[k] < 0)
        continue;
      cell = t->rows[r][cols[k]];
      if (!*cell)
        continue;
      x = cell_d(cell);
      if (!isfinite(x) || x < 0)
        return ooc_err_set(err, OOC_EPARSE, "%s: line %" PRId64 ", column "
                           "'%s': '%s' is not a number >= 0", in,
                           ooc_table_row_line(t, r), t->cols[cols[k]], cell);
    }
  return OOC_OK;
}

/* The time columns cols[0 .. n), already numbers >= 0 (check_numbers),
 * in seconds: at most 1e9 (31 years; the plots draw milliseconds, and a
 * time near DBL_MAX would reach gnuplot as "inf"). */
static int
check_times(const ooc_table *t, const char *in, const int *cols, int n,
            ooc_err *err)
{
  for (int64_t r = 0; r < t->nrows; r++)
    for (int k = 0; k < n; k++) {
      const char *cell = t->rows[r][cols[k]];
      if (*cell && cell_d(cell) > 1e9)
        return ooc_err_set(err, OOC_EPARSE, "%s: line %" PRId64 ", column "
                           "'%s': '%s' is not a time from 0 to 1e9 s", in,
                           ooc_table_row_line(t, r), t->cols[cols[k]], cell);
    }
  return OOC_OK;
}

/* Column index or an error naming the file. */
static int
need_col(const ooc_table *t, const char *name, const char *in, int *c,
         ooc_err *err)
{
  *c = ooc_table_col(t, name);
  if (*c < 0)
    return ooc_err_set(err, OOC_EPARSE, "%s: no column '%s' (is it a sweep's "
                       "results.csv?)", in, name);
  return OOC_OK;
}

/* Coordinate columns of a sweep table: everything up to "optimizer" (the
 * dtype, precision and optimizer axes included: fp32 and fp16 points are
 * two lines, not one zigzag), or before "max_batch" in a maxbatch table
 * written before those axes existed. */
static int
n_coords(const ooc_table *t)
{
  int d = ooc_table_col(t, "dtype"), m = ooc_table_col(t, "max_batch");
  int o = ooc_table_col(t, "optimizer");
  if (d < 0)
    return 0;
  if (o > d && (m < 0 || o < m))
    return o + 1;
  if (m >= 0 && m < d)
    return m;
  return d;
}

/* Does column c hold more than one distinct value? */
static int
varies(const ooc_table *t, int c)
{
  for (int64_t r = 1; r < t->nrows; r++)
    if (strcmp(t->rows[r][c], t->rows[0][c]) != 0)
      return 1;
  return 0;
}

/* Group label of row r: the varying coordinate columns except `skip`
 * columns, joined with '/'; planner first. Spaces become '_' (titles are
 * gnuplot words). */
static void
group_label(const ooc_table *t, int64_t r, const int *skip, int nskip,
            int by_planner, char *buf, size_t n)
{
  int nc = n_coords(t), pc = ooc_table_col(t, "planner");
  /* With a precision axis the dtype column only repeats it. */
  int dc = ooc_table_col(t, "precision") >= 0 ? ooc_table_col(t, "dtype")
                                               : -1;
  size_t k = 0;
  buf[0] = '\0';
  for (int pass = 0; pass < 2; pass++)
    for (int c = 0; c < nc; c++) {
      int s = 0;
      if ((pass == 0) != (c == pc))
        continue;
      for (int i = 0; i < nskip; i++)
        s |= skip[i] == c;
      if (s || c == dc || !varies(t, c))
        continue;
      k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s",
                            k ? "/" : "", t->rows[r][c]);
    }
  if (!buf[0])
    snprintf(buf, n, "%s", by_planner && pc >= 0 ? t->rows[r][pc] : "all");
  for (char *p = buf; *p; p++)
    if (*p == ' ')
      *p = '_';
}

/* Distinct groups in first-appearance order. */
typedef struct groups {
  int n;
  char (*label)[160];
  int *of_row;                /* group of each row */
} groups;

static int
make_groups(const ooc_table *t, const int *skip, int nskip, int by_planner,
            groups *g)
{
  g->n = 0;
  g->label = calloc((size_t)(t->nrows + 1), sizeof *g->label);
  g->of_row = calloc((size_t)(t->nrows + 1), sizeof *g->of_row);
  if (!g->label || !g->of_row)
    return OOC_ENOMEM;
  for (int64_t r = 0; r < t->nrows; r++) {
    char lab[160];
    int i;
    group_label(t, r, skip, nskip, by_planner, lab, sizeof lab);
    for (i = 0; i < g->n; i++)
      if (strcmp(g->label[i], lab) == 0)
        break;
    if (i == g->n)
      memcpy(g->label[g->n++], lab, sizeof lab);
    g->of_row[r] = i;
  }
  return OOC_OK;
}

static void
groups_free(groups *g)
{
  free(g->label);
  free(g->of_row);
}

static void
titles_var(gpvars *v, const char *name, const groups *g)
{
  char buf[4000];
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < g->n; i++)
    k += (size_t)snprintf(buf + k, k < sizeof buf ? sizeof buf - k : 0,
                          "%s%s", i ? " " : "", g->label[i]);
  var_s(v, name, buf);
}

/* "resnet50 b=256 on v100-nvlink2" style context for titles. */
static void
context(const ooc_table *t, char *buf, size_t n)
{
  int mc = ooc_table_col(t, "model"), hc = ooc_table_col(t, "hw");
  int sc = ooc_table_col(t, "set");
  size_t k = 0;
  buf[0] = '\0';
  if (t->nrows == 0)
    return;
  if (mc >= 0)
    k += (size_t)snprintf(buf + k, n - k, "%s", t->rows[0][mc]);
  if (sc >= 0 && t->rows[0][sc][0] && k < n)
    k += (size_t)snprintf(buf + k, n - k, " (%s)", t->rows[0][sc]);
  if (hc >= 0 && !varies(t, hc) && k < n)
    snprintf(buf + k, n - k, " on %s", t->rows[0][hc]);
}

/* ---- kinds ------------------------------------------------------------------ */

/* End a data block; an empty one gets an undefined point so that the
 * blocks after it keep their index. */
static void
block_end(FILE *f, int any)
{
  if (!any)
    fputs("NaN NaN\n", f);
  fputs("\n\n", f);
}

static int
sort_rows_by(const ooc_table *t, int col, int64_t *idx)
{
  /* insertion sort by numeric col (stable); tables are small */
  for (int64_t i = 0; i < t->nrows; i++)
    idx[i] = i;
  for (int64_t i = 1; i < t->nrows; i++) {
    int64_t x = idx[i], j = i;
    double vx = cell_d(t->rows[x][col]);
    while (j > 0 && cell_d(t->rows[idx[j - 1]][col]) > vx) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = x;
  }
  return OOC_OK;
}

/* throughput: per group, block 2g = feasible (batch samples/s), block 2g+1 =
 * OOM points (batch, row in the OOM strip), both empty for a group drawn
 * as part of an earlier one; last block(s) = in-core (batch,
 * batch/incore_s), one per panel. */
static int
data_throughput(const char *in, FILE *f, gpvars *v, const ooc_plot_opts *o,
                ooc_err *err)
{
  ooc_table t;
  groups g = { 0 }, ic = { 0 }, ln = { 0 };
  int bc, sc, fc, ic_col, pc, ac, uc, rc;
  int *skip3 = NULL, ns3 = 0, *merged = NULL, *row_of = NULL, nrows = 0;
  int64_t *idx = NULL;
  char ctx[512], title[700], **sig = NULL;

  if ((rc = ooc_table_read_csv(in, &t, err)))
    return rc;
  if ((rc = need_col(&t, "batch", in, &bc, err)) ||
      (rc = need_col(&t, "samples_per_s", in, &sc, err)) ||
      (rc = need_col(&t, "feasible", in, &fc, err)) ||
      (rc = need_col(&t, "incore_iteration_s", in, &ic_col, err)) ||
      (rc = need_col(&t, "planner", in, &pc, err)) ||
      (rc = need_col(&t, "allocator", in, &ac, err)) ||
      (rc = need_col(&t, "budget", in, &uc, err)))
    goto out;
  if ((rc = check_numbers(&t, in, (const int[]){ bc, sc, ic_col }, 3,
                          err)))
    goto out;
  if (t.nrows == 0) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: no rows to plot", in);
    goto out;
  }
  {
    /* g: one line per group of every varying coordinate but the batch;
     * ic: one panel (with its in-core line) per profile and --hw-set
     * value; ln: the line's identity within a panel (planner, allocator,
     * budget), which picks its colour and key title. */
    int skip1[1] = { bc }, skip2[4] = { bc, pc, ac, uc };
    idx = malloc((size_t)t.nrows * sizeof *idx);
    skip3 = malloc((size_t)(t.ncols + 1) * sizeof *skip3);
    if (!idx || !skip3) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto out;
    }
    for (int c = 0; c < n_coords(&t); c++)
      if (c != pc && c != ac && c != uc)
        skip3[ns3++] = c;
    if (make_groups(&t, skip1, 1, 1, &g) ||
        make_groups(&t, skip2, 4, 0, &ic) ||
        make_groups(&t, skip3, ns3, 1, &ln)) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto out;
    }
  }
  sort_rows_by(&t, bc, idx);
  /* Groups whose points are all the same (planners that reach the same
   * speed at every batch, and fail at the same ones) are one line keyed
   * "lms = capacity = window", drawn in the first one's colour: drawn
   * apart, they would hide one another. */
  merged = malloc((size_t)g.n * sizeof *merged);
  sig = calloc((size_t)g.n, sizeof *sig);
  if (!merged || !sig) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  for (int gi = 0; gi < g.n; gi++) {
    size_t len = 1, k = 0;
    for (int64_t q = 0; q < t.nrows; q++)
      if (g.of_row[idx[q]] == gi)
        len += strlen(t.rows[idx[q]][bc]) + strlen(t.rows[idx[q]][sc]) + 4;
    if (!(sig[gi] = malloc(len))) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto out;
    }
    sig[gi][0] = '\0';
    for (int64_t q = 0; q < t.nrows; q++) {
      char **r = t.rows[idx[q]];
      int feas = strcmp(r[fc], "1") == 0;
      if (g.of_row[idx[q]] == gi)
        k += (size_t)snprintf(sig[gi] + k, len - k, "%s:%s;", r[bc],
                              feas ? r[sc] : "oom");
    }
    merged[gi] = -1;
    for (int gj = 0; gj < gi && merged[gi] < 0; gj++) {
      int64_t ri = 0, rj = 0;
      while (g.of_row[ri] != gi)
        ri++;
      while (g.of_row[rj] != gj)
        rj++;
      if (merged[gj] < 0 && ic.of_row[ri] == ic.of_row[rj] &&
          strcmp(sig[gi], sig[gj]) == 0)
        merged[gi] = gj;
    }
  }
  /* The OOM strip under the plot: one row per colour that has an OOM
   * point on a drawn line. */
  row_of = calloc((size_t)ln.n + 1, sizeof *row_of);
  if (!row_of) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  for (int64_t q = 0; q < t.nrows; q++)
    if (strcmp(t.rows[q][fc], "1") != 0 && merged[g.of_row[q]] < 0)
      row_of[ln.of_row[q]] = 1;
  for (int c = 0; c < ln.n; c++)
    if (row_of[c])
      row_of[c] = ++nrows;
  for (int gi = 0; gi < g.n; gi++) {
    for (int pass = 0; pass < 2; pass++) {
      int any = 0;
      fprintf(f, "# %s %s\n", g.label[gi], pass ? "oom" : "feasible");
      for (int64_t k = 0; k < t.nrows && merged[gi] < 0; k++) {
        char **r = t.rows[idx[k]];
        int feas = strcmp(r[fc], "1") == 0;
        if (g.of_row[idx[k]] != gi || feas == pass)
          continue;
        any = 1;
        if (pass)
          fprintf(f, "%s %d\n", r[bc], row_of[ln.of_row[idx[k]]]);
        else
          fprintf(f, "%s %s\n", r[bc], r[sc]);
      }
      block_end(f, any);
    }
  }
  for (int gi = 0; gi < ic.n; gi++) {
    double last_b = -1;
    int any = 0;
    fprintf(f, "# in-core %s\n", ic.label[gi]);
    for (int64_t k = 0; k < t.nrows; k++) {
      char **r = t.rows[idx[k]];
      double b = cell_d(r[bc]), s = cell_d(r[ic_col]);
      if (ic.of_row[idx[k]] != gi || b == last_b || !(s > 0))
        continue;
      fprintf(f, "%s %.9g\n", r[bc], b / s);
      last_b = b;
      any = 1;
    }
    block_end(f, any);
  }
  {
    /* One x tic per batch size when there are few of them; the x range is
     * that of the batches, nothing past them. */
    char xt[400] = "";
    size_t kx = 0;
    int nb = 0;
    double last = NAN;
    for (int64_t k = 0; k < t.nrows; k++) {
      double b = cell_d(t.rows[idx[k]][bc]);
      if (b == last)
        continue;
      last = b;
      nb++;
      kx += (size_t)snprintf(xt + kx, kx < sizeof xt ? sizeof xt - kx : 0,
                             "%s%s", kx ? " " : "", t.rows[idx[k]][bc]);
    }
    var_s(v, "xt", nb <= 12 && kx < sizeof xt ? xt : "");
    var_d(v, "xmin", cell_d(t.rows[idx[0]][bc]));
    var_d(v, "xmax", last);
  }
  {
    /* Per group: its colour, its panel, whether it stands for several
     * planners, and its key title (gt_<i>; with spaces, so one variable
     * each). */
    char co[1200] = "", pa[1200] = "", me[1200] = "", key[32], gt[2000];
    size_t kc = 0, kp = 0, km = 0;
    for (int gi = 0; gi < g.n; gi++) {
      int64_t r = 0;
      size_t kt = 0;
      int many = 0;
      while (r < t.nrows && g.of_row[r] != gi)
        r++;
      gt[0] = '\0';
      for (int gj = gi; gj < g.n && merged[gi] < 0; gj++) {
        int64_t rj = 0;
        if (gj != gi && merged[gj] != gi)
          continue;
        while (g.of_row[rj] != gj)
          rj++;
        kt += (size_t)snprintf(gt + kt, kt < sizeof gt ? sizeof gt - kt : 0,
                               "%s%s", kt ? " = " : "",
                               ln.label[ln.of_row[rj]]);
        many += gj != gi;
      }
      snprintf(key, sizeof key, "gt_%d", gi + 1);
      var_s(v, key, gt);
      kc += (size_t)snprintf(co + kc, kc < sizeof co ? sizeof co - kc : 0,
                             "%s%d", gi ? " " : "", ln.of_row[r] + 1);
      kp += (size_t)snprintf(pa + kp, kp < sizeof pa ? sizeof pa - kp : 0,
                             "%s%d", gi ? " " : "", ic.of_row[r] + 1);
      km += (size_t)snprintf(me + km, km < sizeof me ? sizeof me - km : 0,
                             "%s%d", gi ? " " : "", many > 0);
    }
    if (kc >= sizeof co || kp >= sizeof pa || km >= sizeof me ||
        v->len + 16 >= sizeof v->buf) {
      rc = ooc_err_set(err, OOC_EINVAL, "%s: too many lines to plot (%d)",
                       in, g.n);
      goto out;
    }
    var_s(v, "gcolor", co);
    var_s(v, "gpanel", pa);
    var_s(v, "gmany", me);
  }
  var_d(v, "oomrows", nrows);
  var_d(v, "ngroups", g.n);
  var_d(v, "nlines", ln.n);
  titles_var(v, "ltitles", &ln);
  var_d(v, "nincore", ic.n);
  titles_var(v, "incore_titles", &ic);
  context(&t, ctx, sizeof ctx);
  snprintf(title, sizeof title, "Throughput vs batch: %s", ctx);
  var_s(v, "plottitle", o->title ? o->title : title);
out:
  for (int gi = 0; sig && gi < g.n; gi++)
    free(sig[gi]);
  free(sig);
  free(merged);
  free(row_of);
  free(idx);
  free(skip3);
  groups_free(&g);
  groups_free(&ic);
  groups_free(&ln);
  ooc_table_fini(&t);
  return rc;
}

/* The link profiles marked on the bandwidth plot, read from hwprofiles/. */
static const struct { const char *profile, *label; } link_marks[] = {
  { "v100-pcie3", "PCIe3" }, { "a100-pcie4", "PCIe4" },
  { "h100-pcie5", "PCIe5" }, { "v100-nvlink2", "NVLink2" },
  { "gh200-c2c", "C2C" },
};

/* A --hw-set link key in words for an axis label ("link.duplex_h2d_GBps"
 * -> "duplex H2D"); another key as it is. */
static const char *
link_key_words(const char *key)
{
  static const struct { const char *key, *words; } w[] = {
    { "link.h2d_GBps", "H2D" }, { "link.d2h_GBps", "D2H" },
    { "link.duplex_h2d_GBps", "duplex H2D" },
    { "link.duplex_d2h_GBps", "duplex D2H" },
  };
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    if (strcmp(key, w[i].key) == 0)
      return w[i].words;
  return key;
}

static int
data_bandwidth(const char *in, FILE *f, gpvars *v, const ooc_plot_opts *o,
               ooc_err *err)
{
  ooc_table t;
  groups g = { 0 };
  int xc = -1, yc, fc, rc;
  int64_t *idx = NULL;
  char ctx[512], title[700], mx[512] = "", ml[512] = "", empty[600] = "";
  size_t kx = 0, kl = 0, ke = 0;
  double xmin = INFINITY, xmax = 0;

  if ((rc = ooc_table_read_csv(in, &t, err)))
    return rc;
  for (int c = 0; c < n_coords(&t) && xc < 0; c++)
    if (strncmp(t.cols[c], "hw_set:", 7) == 0 && strstr(t.cols[c], "h2d"))
      xc = c;
  for (int c = 0; c < n_coords(&t) && xc < 0; c++)
    if (strncmp(t.cols[c], "hw_set:", 7) == 0 && strstr(t.cols[c], "GBps"))
      xc = c;
  if (xc < 0) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: the bandwidth plot needs a sweep "
                     "with --hw-set link.h2d_GBps=V1,V2,...", in);
    goto out;
  }
  if ((rc = need_col(&t, "slowdown", in, &yc, err)) ||
      (rc = need_col(&t, "feasible", in, &fc, err)))
    goto out;
  if ((rc = check_numbers(&t, in, (const int[]){ xc, yc }, 2, err)))
    goto out;
  {
    int skip[1] = { xc };
    idx = malloc((size_t)(t.nrows + 1) * sizeof *idx);
    if (!idx || make_groups(&t, skip, 1, 1, &g)) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto out;
    }
  }
  {
    int feas = 0;
    for (int64_t r = 0; r < t.nrows; r++)
      feas |= strcmp(t.rows[r][fc], "1") == 0;
    if (!feas) {
      rc = ooc_err_set(err, OOC_EINVAL, "%s: no feasible point to plot",
                       in);
      goto out;
    }
  }
  sort_rows_by(&t, xc, idx);
  for (int gi = 0; gi < g.n; gi++) {
    int any = 0;
    fprintf(f, "# %s\n", g.label[gi]);
    for (int64_t k = 0; k < t.nrows; k++) {
      char **r = t.rows[idx[k]];
      if (g.of_row[idx[k]] != gi || strcmp(r[fc], "1") != 0)
        continue;
      fprintf(f, "%s %s\n", r[xc], r[yc]);
      any = 1;
    }
    block_end(f, any);
    ke += (size_t)snprintf(empty + ke, ke < sizeof empty ? sizeof empty - ke
                                                         : 0,
                           "%s%d", gi ? " " : "", !any);
  }
  var_s(v, "empty", empty);
  for (int64_t r = 0; r < t.nrows; r++) {
    double x = cell_d(t.rows[r][xc]);
    if (x > 0 && x < xmin)
      xmin = x;
    if (x > 0 && x > xmax)
      xmax = x;
  }
  for (size_t i = 0; i < sizeof link_marks / sizeof link_marks[0]; i++) {
    ooc_hw *hw = NULL;
    if (ooc_hw_load(link_marks[i].profile, NULL, 0, &hw, NULL) != OOC_OK)
      continue;
    if (hw->h2d_Bps / 1e9 < xmin)
      xmin = hw->h2d_Bps / 1e9;
    if (hw->h2d_Bps / 1e9 > xmax)
      xmax = hw->h2d_Bps / 1e9;
    kx += (size_t)snprintf(mx + kx, sizeof mx - kx, "%s%.4g", kx ? " " : "",
                           hw->h2d_Bps / 1e9);
    kl += (size_t)snprintf(ml + kl, sizeof ml - kl, "%s%s", kl ? " " : "",
                           link_marks[i].label);
    ooc_hw_free(hw);
  }
  if (!(xmax > 0)) {
    xmin = 1;
    xmax = 1000;
  }
  var_d(v, "xmin", xmin / 1.25);
  var_d(v, "xmax", xmax * 1.25);
  {
    /* Every feasible point at one slowdown (one bandwidth, or a planner
     * the link does not limit): autoscaling has no range to fit. */
    double ylo = INFINITY, yhi = -INFINITY;
    for (int64_t r = 0; r < t.nrows; r++)
      if (strcmp(t.rows[r][fc], "1") == 0) {
        double y = cell_d(t.rows[r][yc]);
        ylo = y < ylo ? y : ylo;
        yhi = y > yhi ? y : yhi;
      }
    var_d(v, "yflat", ylo == yhi && ylo > 0 ? ylo : 0);
  }
  var_s(v, "marks_x", mx);
  var_s(v, "marks_l", ml);
  titles_var(v, "titles", &g);
  var_d(v, "ngroups", g.n);
  {
    /* The axis names every key the sweep set to the plotted value, in
     * words: "H2D = D2H = duplex H2D = duplex D2H". */
    char xl[600], words_[500] = "";
    size_t kw = 0;
    const char *k = t.cols[xc] + 7;
    int nk = 0;
    while (*k) {
      const char *e = strchr(k, '+');
      size_t n = e ? (size_t)(e - k) : strlen(k);
      char key[160];
      snprintf(key, sizeof key, "%.*s", (int)n, k);
      kw += (size_t)snprintf(words_ + kw, kw < sizeof words_
                                          ? sizeof words_ - kw : 0,
                             "%s%s", nk ? " = " : "", link_key_words(key));
      nk++;
      k += n + (e != NULL);
    }
    snprintf(xl, sizeof xl, "host link bandwidth, GB/s, log scale: %s%s",
             words_, nk > 1 ? ", all set to it" : "");
    var_s(v, "xlabel", xl);
  }
  context(&t, ctx, sizeof ctx);
  snprintf(title, sizeof title, "Slowdown vs link bandwidth: %s", ctx);
  var_s(v, "plottitle", o->title ? o->title : title);
out:
  free(idx);
  groups_free(&g);
  ooc_table_fini(&t);
  return rc;
}

/* maxbatch: a matrix, one row per GPU (hw), one column per planner; and
 * for each run of bars of equal height in a cluster (two or more planners
 * that stop at the same batch), what stops them, from the fail_* columns
 * of the maxbatch results: "limited by the working set of step S" when
 * the next batch fails at the step with the largest working set (or no
 * plan can fit it), else "batch N runs out of memory at S". Each such
 * bracket is numbered, a cluster's brackets stacked one level each, and
 * its text is a numbered note under the plot: texts over the bars
 * overlapped one another and the next cluster's. */
static int
data_maxbatch(const char *in, FILE *f, gpvars *v, const ooc_plot_opts *o,
              ooc_err *err)
{
  ooc_table t;
  int hc, pc, mc, rc, nh = 0, np = 0, nann = 0;
  int fbc, flc, foc, nlevels = 0;
  const char **hws = NULL, **pls = NULL;
  int64_t *cell = NULL;
  char ctx[512], title[700];
  double ymax = 0;

  if ((rc = ooc_table_read_csv(in, &t, err)))
    return rc;
  if ((rc = need_col(&t, "hw", in, &hc, err)) ||
      (rc = need_col(&t, "planner", in, &pc, err)))
    goto out;
  mc = ooc_table_col(&t, "max_batch");
  if (mc < 0) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: no column 'max_batch' (make it "
                     "with oocsim sweep --maxbatch)", in);
    goto out;
  }
  fbc = ooc_table_col(&t, "fail_batch");
  flc = ooc_table_col(&t, "fail_limit");
  foc = ooc_table_col(&t, "fail_op");
  if ((rc = check_numbers(&t, in, (const int[]){ mc, fbc }, 2, err)))
    goto out;
  hws = calloc((size_t)t.nrows + 1, sizeof *hws);
  pls = calloc((size_t)t.nrows + 1, sizeof *pls);
  if (!hws || !pls) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  for (int64_t r = 0; r < t.nrows; r++) {
    int i;
    for (i = 0; i < nh && strcmp(hws[i], t.rows[r][hc]); i++)
      ;
    if (i == nh)
      hws[nh++] = t.rows[r][hc];
    for (i = 0; i < np && strcmp(pls[i], t.rows[r][pc]); i++)
      ;
    if (i == np)
      pls[np++] = t.rows[r][pc];
  }
  if (np == 0) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: no rows to plot", in);
    goto out;
  }
  /* cell[i * np + j]: the row of hw i and planner j, -1 none. */
  cell = malloc((size_t)nh * (size_t)np * sizeof *cell);
  if (!cell) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  for (int i = 0; i < nh * np; i++)
    cell[i] = -1;
  for (int64_t r = t.nrows - 1; r >= 0; r--) {
    int i = 0, j = 0;
    while (strcmp(hws[i], t.rows[r][hc]))
      i++;
    while (strcmp(pls[j], t.rows[r][pc]))
      j++;
    cell[i * np + j] = r;
  }
  fprintf(f, "hw");
  for (int j = 0; j < np; j++)
    fprintf(f, " %s", pls[j]);
  fprintf(f, "\n");
  for (int i = 0; i < nh; i++) {
    fprintf(f, "%s", hws[i]);
    for (int j = 0; j < np; j++) {
      int64_t r = cell[i * np + j];
      fprintf(f, " %s", r >= 0 ? t.rows[r][mc] : "0");
      if (r >= 0 && cell_d(t.rows[r][mc]) > ymax)
        ymax = cell_d(t.rows[r][mc]);
    }
    fprintf(f, "\n");
  }
  /* Runs of equal bars: the bars' centres follow maxbatch.gp (clusters at
   * x = 0, 1, ..., np bars of width 0.9 / (np + 1) each). */
  for (int i = 0; fbc >= 0 && flc >= 0 && foc >= 0 && i < nh; i++) {
    char *done = calloc((size_t)np, 1);
    int level = 0;              /* this cluster's brackets so far */
    if (!done) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto out;
    }
    for (int j = 0; j < np; j++) {
      int64_t r = cell[i * np + j];
      int first = j, last = j, n = 0, same_op = 1, ws = 1;
      char text[700], line1[200] = "", key[32];
      size_t k = 0;
      if (done[j] || r < 0 || !(cell_d(t.rows[r][mc]) > 0) ||
          !t.rows[r][fbc][0])
        continue;
      for (int q = j; q < np; q++) {
        int64_t rq = cell[i * np + q];
        if (rq < 0 || strcmp(t.rows[rq][mc], t.rows[r][mc]) != 0 ||
            !t.rows[rq][fbc][0])
          continue;
        done[q] = 1;
        last = q;
        n++;
        same_op &= strcmp(t.rows[rq][foc], t.rows[r][foc]) == 0;
        ws &= strcmp(t.rows[rq][flc], "working_set") == 0 ||
              strcmp(t.rows[rq][flc], "largest_step") == 0;
      }
      if (n < 2)
        continue;
      if (same_op && ws)
        snprintf(text, sizeof text, "limited by the working set of step %s",
                 t.rows[r][foc]);
      else if (same_op)
        snprintf(text, sizeof text, "batch %s runs out of memory at %s",
                 t.rows[r][fbc], t.rows[r][foc]);
      else {
        /* Name each step once, with the planners that fail there, on a
         * second line. */
        snprintf(line1, sizeof line1, "batch %s runs out of memory at",
                 t.rows[r][fbc]);
        k = 0;
        text[0] = '\0';
        for (int q = first; q <= last; q++) {
          int64_t rq = cell[i * np + q];
          int seen = 0, m = 0;
          if (rq < 0 || strcmp(t.rows[rq][mc], t.rows[r][mc]) != 0)
            continue;
          for (int u = first; u < q; u++) {
            int64_t ru = cell[i * np + u];
            seen |= ru >= 0 && !strcmp(t.rows[ru][mc], t.rows[r][mc]) &&
                    !strcmp(t.rows[ru][foc], t.rows[rq][foc]);
          }
          if (seen)
            continue;
          k += (size_t)snprintf(text + k, k < sizeof text ? sizeof text - k
                                                          : 0,
                                "%s%s (", k ? ", " : "", t.rows[rq][foc]);
          for (int u = q; u <= last; u++) {
            int64_t ru = cell[i * np + u];
            if (ru < 0 || strcmp(t.rows[ru][mc], t.rows[r][mc]) ||
                strcmp(t.rows[ru][foc], t.rows[rq][foc]))
              continue;
            k += (size_t)snprintf(text + k, k < sizeof text ? sizeof text - k
                                                            : 0,
                                  "%s%s", m++ ? ", " : "", pls[u]);
          }
          k += (size_t)snprintf(text + k, k < sizeof text ? sizeof text - k
                                                          : 0, ")");
        }
      }
      nann++;
      {
        /* The whole text goes under the plot as note nann; the bracket
         * carries the number. */
        char note[sizeof text + sizeof line1 + 48];
        snprintf(note, sizeof note, "%d. %s: %s%s%s", nann, hws[i],
                 line1, line1[0] ? " " : "", text);
        snprintf(key, sizeof key, "ann_t_%d", nann);
        var_s(v, key, note);
      }
      snprintf(key, sizeof key, "ann_l_%d", nann);
      var_d(v, key, level);
      if (++level > nlevels)
        nlevels = level;
      snprintf(key, sizeof key, "ann_x0_%d", nann);
      var_d(v, key, i + (first + 1 - (np + 1) / 2.0) / (np + 1.0) -
                    0.45 / (np + 1.0));
      snprintf(key, sizeof key, "ann_x1_%d", nann);
      var_d(v, key, i + (last + 1 - (np + 1) / 2.0) / (np + 1.0) +
                    0.45 / (np + 1.0));
      {
        /* The bracket stands over every bar between its first and last,
         * with a tick down to each of its own. */
        char mem[600] = "";
        size_t km = 0;
        double top = 0;
        for (int q = first; q <= last; q++) {
          int64_t rq = cell[i * np + q];
          if (rq < 0)
            continue;
          if (cell_d(t.rows[rq][mc]) > top)
            top = cell_d(t.rows[rq][mc]);
          if (strcmp(t.rows[rq][mc], t.rows[r][mc]) == 0 &&
              t.rows[rq][fbc][0])
            km += (size_t)snprintf(mem + km, km < sizeof mem ? sizeof mem - km
                                                             : 0,
                                   "%s%.9g", km ? " " : "",
                                   i + (q + 1 - (np + 1) / 2.0) / (np + 1.0));
        }
        snprintf(key, sizeof key, "ann_y_%d", nann);
        var_d(v, key, top);
        snprintf(key, sizeof key, "ann_h_%d", nann);
        var_d(v, key, cell_d(t.rows[r][mc]));
        snprintf(key, sizeof key, "ann_m_%d", nann);
        var_s(v, key, mem);
      }
    }
    free(done);
  }
  var_d(v, "nann", nann);
  var_d(v, "nlevels", nlevels);
  var_d(v, "ymax", ymax);
  var_d(v, "nplanners", np);
  context(&t, ctx, sizeof ctx);
  snprintf(title, sizeof title, "Largest trainable batch: %s", ctx);
  var_s(v, "plottitle", o->title ? o->title : title);
out:
  free(cell);
  free(hws);
  free(pls);
  ooc_table_fini(&t);
  return rc;
}

static int
data_memory(const char *in, FILE *f, gpvars *v, const ooc_plot_opts *o,
            ooc_err *err)
{
  ooc_table t;
  int tc, ac, rc_, rc;
  double rmin = INFINITY, rmax = 0;

  if ((rc = ooc_table_read_csv(in, &t, err)))
    return rc;
  tc = ooc_table_col(&t, "time_s");
  ac = ooc_table_col(&t, "allocated_bytes");
  rc_ = ooc_table_col(&t, "reserved_bytes");
  if (tc < 0 || ac < 0 || rc_ < 0) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: expected the columns "
                     "time_s,allocated_bytes,reserved_bytes (simulate "
                     "--mem-csv)", in);
    goto out;
  }
  if (t.nrows == 0) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: no samples to plot", in);
    goto out;
  }
  if ((rc = check_numbers(&t, in, (const int[]){ tc, ac, rc_ }, 3, err)) ||
      (rc = check_times(&t, in, (const int[]){ tc }, 1, err)))
    goto out;
  for (int64_t r = 1; r < t.nrows; r++)
    if (cell_d(t.rows[r][tc]) < cell_d(t.rows[r - 1][tc])) {
      rc = ooc_err_set(err, OOC_EPARSE, "%s: line %" PRId64 ": time_s goes "
                       "back (%s after %s)", in, ooc_table_row_line(&t, r),
                       t.rows[r][tc], t.rows[r - 1][tc]);
      goto out;
    }
  fprintf(f, "# time_ms allocated_GiB reserved_GiB\n");
  for (int64_t r = 0; r < t.nrows; r++) {
    double res = cell_d(t.rows[r][rc_]);
    fprintf(f, "%.9g %.9g %.9g\n", cell_d(t.rows[r][tc]) * 1e3,
            cell_d(t.rows[r][ac]) / 1073741824.0, res / 1073741824.0);
    if (res < rmin)
      rmin = res;
    if (res > rmax)
      rmax = res;
  }
  /* A reserved curve that hardly moves while allocated swings from near
   * zero to its peak looks like a bug; it is the steady state the run
   * reports (the last of its iterations): the allocator keeps the segments
   * it reserved before and hands them out again. Flat: within 2% of its
   * peak. */
  if (rmax > 0 && rmax - rmin <= 0.02 * rmax) {
    char note[300];
    snprintf(note, sizeof note, "reserved stays flat: this is a "
             "steady-state iteration; %s%s%s keeps the segments it reserved "
             "in the iterations before and reuses them",
             o->allocator ? "the " : "the allocator",
             o->allocator ? o->allocator : "",
             o->allocator ? " allocator" : "");
    var_s(v, "note", note);
  } else {
    var_s(v, "note", "");
  }
  var_d(v, "budget_gib", (double)o->budget / 1073741824.0);
  var_s(v, "plottitle", o->title ? o->title : "Device memory over one "
        "iteration");
out:
  ooc_table_fini(&t);
  return rc;
}

/* gantt: the kinds of box, in drawing and stacking order (colour and key
 * name in gantt.gp by the same 1-based index). A stall row's kind follows
 * its cause; a timeline without the cause column has plain stalls. */
enum {
  GK_FWD, GK_BWD, GK_RECOMP, GK_UPDATE, GK_SWAPIN, GK_SWAPOUT, GK_ALLOC,
  GK_STALL_IN, GK_STALL_OUT, GK_STALL_HOST, GK_STALL_OTHER, GK_STALL, GK_CPU,
  GK_COUNT
};

/* The visible width: an iteration is about GANTT_COLUMNS of them across
 * the plot (3 to 4 pixels each at the default size). */
#define GANTT_COLUMNS 200
/* The update is never drawn narrower than this share of the iteration. */
#define GANTT_MIN_UPDATE 150

static int
gantt_kind(const char *phase, const char *cause)
{
  static const char *const ph[] = { "fwd", "bwd", "recompute", "update",
                                    "swapin", "swapout", "alloc" };
  for (int k = 0; k < (int)(sizeof ph / sizeof ph[0]); k++)
    if (strcmp(phase, ph[k]) == 0)
      return k;
  if (strcmp(phase, "free") == 0)
    return GK_ALLOC;
  if (strcmp(phase, "cpu-update") == 0)
    return GK_CPU;
  if (strcmp(phase, "stall") == 0) {
    if (cause && strcmp(cause, "swapin") == 0)
      return GK_STALL_IN;
    if (cause && strcmp(cause, "swapout") == 0)
      return GK_STALL_OUT;
    if (cause && strcmp(cause, "host") == 0)
      return GK_STALL_HOST;
    if (cause && strcmp(cause, "other") == 0)
      return GK_STALL_OTHER;
    return GK_STALL;
  }
  return -1;
}

/* A box to draw: [x0, x1] ms on lane y (3 compute, 2 H2D, 1 D2H, 0 the
 * host's CPU optimizer steps), from
 * height y0 to y1 (the full lane is y -/+ 0.32). */
struct gbox {
  int kind;
  double x0, x1, y0, y1;
};

struct gitem {
  int lane, kind;
  double s, e;               /* ms */
};

static int
gitem_cmp(const void *a, const void *b)
{
  const struct gitem *x = a, *y = b;
  if (x->lane != y->lane)
    return y->lane - x->lane;
  if (x->s != y->s)
    return x->s < y->s ? -1 : 1;
  return x->kind - y->kind;
}

static int
gbox_cmp(const void *a, const void *b)
{
  const struct gbox *x = a, *y = b;
  if (x->kind != y->kind)
    return x->kind - y->kind;
  if (x->y0 != y->y0)
    return x->y0 < y->y0 ? -1 : 1;
  if (x->y1 != y->y1)
    return x->y1 < y->y1 ? -1 : 1;
  if (x->x0 != y->x0)
    return x->x0 < y->x0 ? -1 : 1;
  return (x->x1 > y->x1) - (x->x1 < y->x1);
}

typedef struct gboxes {
  struct gbox *b;
  int64_t n, cap;
} gboxes;

static int
gbox_push(gboxes *g, struct gbox b)
{
  if (g->n == g->cap) {
    int64_t nc = g->cap ? 2 * g->cap : 256;
    struct gbox *x = realloc(g->b, (size_t)nc * sizeof *x);
    if (!x)
      return OOC_ENOMEM;
    g->b = x;
    g->cap = nc;
  }
  g->b[g->n++] = b;
  return OOC_OK;
}

/* Items [a, b) of one lane, all narrower than w and close together: cut
 * their extent into pieces about w wide and draw each piece as a stacked
 * bar, one box per kind with a height in proportion to the time that kind
 * takes in the piece (idle time stays white at the top). */
static int
gantt_stack(const struct gitem *it, int64_t a, int64_t b, double w,
            gboxes *out, int *stacked)
{
  double x0 = it[a].s, x1 = it[a].e;
  int np;

  for (int64_t i = a; i < b; i++)
    if (it[i].e > x1)
      x1 = it[i].e;
  np = (int)floor((x1 - x0) / w + 0.5);
  if (np < 1)
    np = 1;
  for (int k = 0; k < np; k++) {
    double p0 = x0 + (x1 - x0) * k / np, p1 = x0 + (x1 - x0) * (k + 1) / np;
    double share[GK_COUNT] = { 0 }, y = it[a].lane - 0.32;
    for (int64_t i = a; i < b; i++) {
      double lo = it[i].s > p0 ? it[i].s : p0;
      double hi = it[i].e < p1 ? it[i].e : p1;
      if (hi > lo)
        share[it[i].kind] += (hi - lo) / (p1 - p0);
    }
    for (int kd = 0; kd < GK_COUNT; kd++) {
      if (!(share[kd] > 0))
        continue;
      if (gbox_push(out, (struct gbox){ .kind = kd, .x0 = p0, .x1 = p1,
                                        .y0 = y, .y1 = y + 0.64 * share[kd]
                                      }))
        return OOC_ENOMEM;
      y += 0.64 * share[kd];
    }
  }
  *stacked = 1;
  return OOC_OK;
}

static int
data_gantt(const char *in, FILE *f, gpvars *v, const ooc_plot_opts *o,
           ooc_err *err)
{
  static const char *const names[GK_COUNT] = {
    "forward", "backward", "recompute", "update", "swap-in", "swap-out",
    "allocator", "stall: swap-in", "stall: swap-out", "stall: host",
    "stall: other", "stall", "CPU optimizer step",
  };
  ooc_table t;
  int lc, sc, ec, pc, cc, rc, stacked = 0;
  struct gitem *it = NULL;
  gboxes boxes = { 0 };
  int64_t n = 0;
  double tmin = INFINITY, tmax = -INFINITY, w, upd_x = NAN;
  char ph_idx[64] = "", key[32];
  size_t ki = 0;
  int nblk = 0;

  if ((rc = ooc_table_read_csv(in, &t, err)))
    return rc;
  lc = ooc_table_col(&t, "lane");
  sc = ooc_table_col(&t, "start_s");
  ec = ooc_table_col(&t, "end_s");
  pc = ooc_table_col(&t, "phase");
  cc = ooc_table_col(&t, "cause");
  if (lc < 0 || sc < 0 || ec < 0 || pc < 0) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: expected a timeline CSV "
                     "lane,start_s,end_s,phase,layer[,cause]", in);
    goto out;
  }
  if (t.nrows == 0) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: no spans to plot", in);
    goto out;
  }
  if ((rc = check_numbers(&t, in, (const int[]){ sc, ec }, 2, err)) ||
      (rc = check_times(&t, in, (const int[]){ sc, ec }, 2, err)))
    goto out;
  it = malloc((size_t)t.nrows * sizeof *it);
  if (!it) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  for (int64_t r = 0; r < t.nrows; r++) {
    char **row = t.rows[r];
    struct gitem x = {
      .lane = !strcmp(row[lc], "compute") ? 3
              : !strcmp(row[lc], "h2d") ? 2
              : !strcmp(row[lc], "d2h") ? 1
              : !strcmp(row[lc], "host") ? 0 : -1,
      .kind = gantt_kind(row[pc], cc >= 0 ? row[cc] : NULL),
      .s = cell_d(row[sc]) * 1e3, .e = cell_d(row[ec]) * 1e3,
    };
    /* Named by their line, as check_numbers names them. */
    if (x.lane < 0) {
      rc = ooc_err_set(err, OOC_EPARSE, "%s: line %" PRId64 ", column 'lane': "
                       "'%s' is not compute, h2d, d2h or host", in,
                       ooc_table_row_line(&t, r), row[lc]);
      goto out;
    }
    if (x.e < x.s) {
      rc = ooc_err_set(err, OOC_EPARSE, "%s: line %" PRId64 ": end_s %s is "
                       "before start_s %s", in, ooc_table_row_line(&t, r),
                       row[ec], row[sc]);
      goto out;
    }
    if (x.kind < 0 || !(x.e > x.s))
      continue;               /* zero-cost allocator calls: nothing to see */
    if (x.s < tmin)
      tmin = x.s;
    if (x.e > tmax)
      tmax = x.e;
    it[n++] = x;
  }
  if (n == 0) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: no span with a duration to plot",
                     in);
    goto out;
  }
  qsort(it, (size_t)n, sizeof *it, gitem_cmp);
  /* Join touching spans of one kind on one lane: drawn apart, anti-aliasing
   * leaves a white seam between them that reads as a gap. */
  {
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
      if (k > 0 && it[k - 1].lane == it[i].lane &&
          it[k - 1].kind == it[i].kind && it[i].s <= it[k - 1].e + 1e-6) {
        if (it[i].e > it[k - 1].e)
          it[k - 1].e = it[i].e;
        continue;
      }
      it[k++] = it[i];
    }
    n = k;
  }
  /* What a reader can see: spans at least w wide are drawn as they are;
   * runs of two or more narrower ones, less than w apart, become stacked
   * bars about w wide (gantt_stack), so a stall-heavy plan reads as the
   * share of compute and stall over time instead of stripes thinner than
   * a pixel. The update, narrow but always of interest, is drawn as it is,
   * at least 1/GANTT_MIN_UPDATE of the iteration wide, and labelled. */
  w = (tmax - tmin) / GANTT_COLUMNS;
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    int narrow = it[i].e - it[i].s < w && it[i].kind != GK_UPDATE;
    if (narrow) {
      double reach = it[i].e;
      while (j < n && it[j].lane == it[i].lane && it[j].kind != GK_UPDATE &&
             it[j].e - it[j].s < w && it[j].s - reach < w) {
        if (it[j].e > reach)
          reach = it[j].e;
        j++;
      }
    }
    if (narrow && j - i >= 2) {
      if (gantt_stack(it, i, j, w, &boxes, &stacked)) {
        rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
        goto out;
      }
    } else {
      struct gbox b = { .kind = it[i].kind, .x0 = it[i].s, .x1 = it[i].e,
                        .y0 = it[i].lane - 0.32, .y1 = it[i].lane + 0.32 };
      if (b.kind == GK_UPDATE) {
        double mw = (tmax - tmin) / GANTT_MIN_UPDATE, c = (b.x0 + b.x1) / 2;
        upd_x = c;
        if (b.x1 - b.x0 < mw) {
          b.x0 = c - mw / 2 < tmin ? tmin : c - mw / 2;
          b.x1 = b.x0 + mw > tmax ? tmax : b.x0 + mw;
          b.x0 = b.x1 - mw;
        }
      }
      if (gbox_push(&boxes, b)) {
        rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
        goto out;
      }
      j = i + 1;
    }
    i = j;
  }
  /* Stacked bars of one kind at one height side by side are one box (no
   * seams, fewer lines). */
  if (boxes.n > 1)          /* boxes.b is NULL when there are none */
    qsort(boxes.b, (size_t)boxes.n, sizeof *boxes.b, gbox_cmp);
  {
    int64_t k = 0;
    for (int64_t b = 0; b < boxes.n; b++) {
      struct gbox *p = k > 0 ? &boxes.b[k - 1] : NULL, *x = &boxes.b[b];
      if (p && p->kind == x->kind && p->y0 == x->y0 && p->y1 == x->y1 &&
          x->x0 <= p->x1 + 1e-6 && x->x0 >= p->x0) {
        if (x->x1 > p->x1)
          p->x1 = x->x1;
        continue;
      }
      boxes.b[k++] = *x;
    }
    boxes.n = k;
  }
  /* One block per kind present, the update last so that its box (made
   * wider than it is) stays on top. Lines "x0 x1 y0 y1" in ms. */
  fprintf(f, "# gantt: iteration %.9g ms, visible width %.9g ms\n",
          tmax - tmin, w);
  for (int pass = 0; pass < GK_COUNT; pass++) {
    int kd = pass < GK_UPDATE ? pass : pass == GK_COUNT - 1 ? GK_UPDATE
                                                            : pass + 1;
    int any = 0;
    for (int64_t b = 0; b < boxes.n; b++) {
      if (boxes.b[b].kind != kd)
        continue;
      if (!any)
        fprintf(f, "# %s\n", names[kd]);
      any = 1;
      fprintf(f, "%.9g %.9g %.9g %.9g\n", boxes.b[b].x0, boxes.b[b].x1,
              boxes.b[b].y0, boxes.b[b].y1);
    }
    if (!any)
      continue;
    fputs("\n\n", f);
    ki += (size_t)snprintf(ph_idx + ki, sizeof ph_idx - ki, "%s%d",
                           ki ? " " : "", kd + 1);
    snprintf(key, sizeof key, "kname_%d", ++nblk);
    var_s(v, key, names[kd]);
  }
  var_s(v, "phase_ids", ph_idx);
  var_d(v, "tmin", tmin);
  var_d(v, "tmax", tmax);
  var_d(v, "has_update", !isnan(upd_x));
  {
    /* A host lane (an offloading plan's CPU optimizer steps, lane 0). */
    int host = 0;
    for (int64_t b = 0; b < boxes.n && !host; b++)
      host = boxes.b[b].kind == GK_CPU;
    var_d(v, "has_host", host);
  }
  var_d(v, "upd_x", isnan(upd_x) ? 0 : upd_x);
  var_d(v, "stacked", stacked);
  var_d(v, "vis_ms", w);
  var_s(v, "plottitle", o->title ? o->title : "Timeline of one iteration");
out:
  free(it);
  free(boxes.b);
  ooc_table_fini(&t);
  return rc;
}

/* ---- draw -------------------------------------------------------------------- */

/* Run script on the data file dat into out (format fmt) with the
 * variables in v: OOC_EUNSUP when gnuplot is missing; when it fails, or
 * exits 0 without writing an image, OOC_EIO. gnuplot draws into a
 * temporary file beside out, renamed over it only when it is there and
 * not empty, so out is a whole image or is left as it was; the data,
 * whole, stays, and each message says so. */
static int
draw(gpvars *v, const char *script, const char *plotdir, const char *dat,
     const char *out, const char *fmt, ooc_err *err)
{
  const char *gp;
  char tmp[4200], msg[sizeof err->msg];
  struct stat st;
  int rc;

  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid()) >=
      (int)sizeof tmp)
    return ooc_err_set(err, OOC_EINVAL, "-o %s: the name is too long", out);
  var_s(v, "datafile", dat);
  var_s(v, "outfile", tmp);
  var_s(v, "fmt", fmt);
  var_s(v, "plotdir", plotdir);
  if (!ooc_plot_gnuplot(&gp))
    return ooc_err_set(err, OOC_EUNSUP, "gnuplot is missing ('%s' is not "
                       "runnable; install gnuplot or set OOCSIM_GNUPLOT): "
                       "wrote %s but not %s", gp, dat, out);
  if ((rc = run_gnuplot(gp, v, script, out, err)) != OOC_OK) {
    unlink(tmp);
    snprintf(msg, sizeof msg, "%s", err->msg);
    return ooc_err_set(err, rc, "%s; wrote %s but not %s", msg, dat, out);
  }
  if (stat(tmp, &st) != 0 || st.st_size == 0) {
    unlink(tmp);
    return ooc_err_set(err, OOC_EIO, "gnuplot ('%s') exited 0 but wrote no "
                       "image for %s (%s); wrote %s but not %s", gp, out,
                       script, dat, out);
  }
  if (rename(tmp, out) != 0) {
    rc = errno;
    unlink(tmp);
    return ooc_err_set(err, OOC_EIO, "cannot write '%s': %s; wrote %s but "
                       "not %s", out, strerror(rc), dat, out);
  }
  return OOC_OK;
}

int
ooc_plot_check_out(const char *out, ooc_err *err)
{
  const char *ext = strrchr(out, '.');

  if (ext == NULL || strchr(ext, '/') != NULL ||
      (strcmp(ext, ".png") != 0 && strcmp(ext, ".svg") != 0))
    return ooc_err_set(err, OOC_EINVAL, "-o %s: the output must end in "
                       ".png or .svg", out);
  return OOC_OK;
}

int
ooc_plot_draw(ooc_plot_kind kind, const char *in, const char *out,
              const ooc_plot_opts *o, ooc_err *err)
{
  static const ooc_plot_opts none = { .title = NULL };
  char dat[4096], script[4096], plotdir[4096];
  const char *ext = strrchr(out, '.');
  gpvars v = { .len = 0 };
  ooc_atomic_file af;
  FILE *f;
  int rc;

  if (!o)
    o = &none;
  if (kind < 0 || kind >= OOC_PLOT_COUNT)
    return ooc_err_set(err, OOC_EINVAL, "unknown plot kind");
  if ((rc = ooc_plot_check_out(out, err)) < 0)
    return rc;
  snprintf(dat, sizeof dat, "%.*s.dat", (int)(ext - out), out);
  if ((rc = ooc_atomic_open(&af, dat, err)) < 0)
    return rc;
  f = af.f;
  switch (kind) {
  case OOC_PLOT_THROUGHPUT: rc = data_throughput(in, f, &v, o, err); break;
  case OOC_PLOT_BANDWIDTH: rc = data_bandwidth(in, f, &v, o, err); break;
  case OOC_PLOT_MAXBATCH: rc = data_maxbatch(in, f, &v, o, err); break;
  case OOC_PLOT_MEMORY: rc = data_memory(in, f, &v, o, err); break;
  default: rc = data_gantt(in, f, &v, o, err); break;
  }
  if (rc) {
    ooc_atomic_abort(&af);
    return rc;
  }
  if ((rc = ooc_atomic_commit(&af, err)))
    return rc;
  if ((rc = script_path(kind, script, sizeof script, err)))
    return rc;
  snprintf(plotdir, sizeof plotdir, "%.*s", (int)(strrchr(script, '/') -
                                                   script), script);
  return draw(&v, script, plotdir, dat, out, ext + 1, err);
}

int
ooc_plot_script(const char *name, const char *dat, const char *out,
                const char *vars, ooc_err *err)
{
  const char *dirs[2] = { ooc_data_dir(), OOC_SRCDIR };
  const char *ext = strrchr(out, '.');
  char script[4096], plotdir[4096];
  gpvars v = { .len = 0 };
  int i, found = 0;

  if ((i = ooc_plot_check_out(out, err)) < 0)
    return i;
  for (i = 0; i < 2 && !found; i++) {
    if (dirs[i] == NULL || *dirs[i] == '\0')
      continue;
    snprintf(script, sizeof script, "%s/plots/%s.gp", dirs[i], name);
    snprintf(plotdir, sizeof plotdir, "%s/plots", dirs[i]);
    found = access(script, R_OK) == 0;
  }
  if (!found)
    return ooc_err_set(err, OOC_ENOTFOUND, "plot script plots/%s.gp not "
                       "found under '%s'", name, ooc_data_dir());
  if (vars != NULL) {
    v.len = (size_t)snprintf(v.buf, sizeof v.buf, "%s", vars);
    if (v.len >= sizeof v.buf)
      v.len = sizeof v.buf - 1;
  }
  return draw(&v, script, plotdir, dat, out, ext + 1, err);
}
