/* report/sweep.c — what-if grids: expansion, parallel runs, CSV/JSON results,
 * resume, shards and merge. See sweep.h for the grid order and the columns.
 *
 * Owner: report helper. Cost: one scenario run per point on -j pthreads
 * (each point loads its own model and profile: nothing is shared between
 * threads but the grid, which is read-only, and the result slots, written
 * once each under a mutex). The main thread reports progress and rewrites
 * the result files every few seconds, so an interrupted sweep resumes.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "alloc/alloc.h"
#include "plan/planner.h"
#include "planners/registry.h"
#include "base/util.h"
#include "report/sweep.h"

/* ---- small string helpers ------------------------------------------------ */

static void
strv_free(char **v, int n)
{
  int i;
  if (!v)
    return;
  for (i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* Split s at sep into a heap vector of heap strings; empty items are an
 * error naming `what`. */
static int
split(const char *s, char sep, const char *what, char ***out, int *n,
      ooc_err *err)
{
  char **v = NULL;
  int cnt = 0, cap = 0;
  const char *p = s, *e;

  if (!*s)
    return ooc_err_set(err, OOC_EINVAL, "%s: empty list", what);
  for (;;) {
    e = strchr(p, sep);
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 0) {
      strv_free(v, cnt);
      return ooc_err_set(err, OOC_EINVAL, "%s '%s': empty item", what, s);
    }
    if (cnt == cap) {
      int nc = cap ? cap * 2 : 8;
      char **nv = realloc(v, (size_t)nc * sizeof *nv);
      if (!nv)
        goto nomem;
      v = nv;
      cap = nc;
    }
    v[cnt] = malloc(len + 1);
    if (!v[cnt])
      goto nomem;
    memcpy(v[cnt], p, len);
    v[cnt][len] = '\0';
    cnt++;
    if (!e)
      break;
    p = e + 1;
  }
  *out = v;
  *n = cnt;
  return OOC_OK;
nomem:
  strv_free(v, cnt);
  return ooc_err_set(err, OOC_ENOMEM, "out of memory");
}

/* Append the items of a new list to an axis (axes may be given twice). */
static int
axis_append(char ***axis, int *n, char **items, int ni, ooc_err *err)
{
  char **nv = realloc(*axis, (size_t)(*n + ni) * sizeof *nv);
  if (!nv) {
    strv_free(items, ni);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  memcpy(nv + *n, items, (size_t)ni * sizeof *items);
  free(items);
  *axis = nv;
  *n += ni;
  return OOC_OK;
}

/* ---- grid ----------------------------------------------------------------- */

void
ooc_sweep_grid_init(ooc_sweep_grid *g)
{
  *g = (ooc_sweep_grid){ .model = NULL };
}

void
ooc_sweep_grid_fini(ooc_sweep_grid *g)
{
  int i;
  if (!g)
    return;
  free(g->model);
  for (i = 0; i < g->n_sets; i++) {
    free((char *)g->sets[i].key);
    free((char *)g->sets[i].value);
  }
  free(g->sets);
  free(g->set_label);
  free(g->batches);
  strv_free(g->hw, g->n_hw);
  for (i = 0; i < g->n_hwsets; i++) {
    free(g->hwsets[i].name);
    strv_free(g->hwsets[i].keys, g->hwsets[i].n_keys);
    strv_free(g->hwsets[i].values, g->hwsets[i].n_values);
  }
  free(g->hwsets);
  strv_free(g->allocators, g->n_allocators);
  strv_free(g->budgets, g->n_budgets);
  free(g->budget_bytes);
  strv_free(g->planners, g->n_planners);
  *g = (ooc_sweep_grid){ .model = NULL };
}

int
ooc_sweep_set_model(ooc_sweep_grid *g, const char *model, ooc_err *err)
{
  char *m = strdup(model);
  if (!m)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  free(g->model);
  g->model = m;
  return OOC_OK;
}

static int
push_batch(ooc_sweep_grid *g, int64_t b, int *cap, ooc_err *err)
{
  if (g->n_batches == *cap) {
    int nc = *cap ? *cap * 2 : 16;
    int64_t *nb = realloc(g->batches, (size_t)nc * sizeof *nb);
    if (!nb)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    g->batches = nb;
    *cap = nc;
  }
  g->batches[g->n_batches++] = b;
  return OOC_OK;
}

int
ooc_sweep_parse_batches(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **items = NULL;
  int n = 0, i, rc, cap = g->n_batches;
  char what[64];

  if (strchr(spec, ':')) {
    char **r = NULL;
    int nr = 0;
    int64_t a, b, step = 1;
    rc = split(spec, ':', "-b", &r, &nr, err);
    if (rc)
      return ooc_err_set(err, OOC_EINVAL, "-b '%s': a range is A:B:STEP",
                         spec);
    if (nr < 2 || nr > 3) {
      strv_free(r, nr);
      return ooc_err_set(err, OOC_EINVAL, "-b '%s': a range is A:B:STEP",
                         spec);
    }
    rc = ooc_parse_int(r[0], "-b range start", &a, err);
    if (!rc)
      rc = ooc_parse_int(r[1], "-b range end", &b, err);
    if (!rc && nr == 3)
      rc = ooc_parse_int(r[2], "-b range step", &step, err);
    strv_free(r, nr);
    if (rc)
      return rc;
    if (a < 1)
      return ooc_err_set(err, OOC_EINVAL,
                         "-b '%s': batch sizes start at 1", spec);
    if (b < a)
      return ooc_err_set(err, OOC_EINVAL,
                         "-b '%s': range end %" PRId64
                         " is below its start %" PRId64, spec, b, a);
    if (step < 1)
      return ooc_err_set(err, OOC_EINVAL,
                         "-b '%s': range step must be >= 1", spec);
    if ((b - a) / step >= 100000)
      return ooc_err_set(err, OOC_EINVAL,
                         "-b '%s': more than 100000 batch sizes", spec);
    for (int64_t x = a; x <= b; x += step)
      if ((rc = push_batch(g, x, &cap, err)))
        return rc;
    return OOC_OK;
  }
  if ((rc = split(spec, ',', "-b", &items, &n, err)))
    return rc;
  for (i = 0; i < n; i++) {
    int64_t b;
    snprintf(what, sizeof what, "-b '%s'", spec);
    if ((rc = ooc_parse_int(items[i], what, &b, err)))
      goto out;
    if (b < 1) {
      rc = ooc_err_set(err, OOC_EINVAL, "-b '%s': batch sizes start at 1",
                       spec);
      goto out;
    }
    if ((rc = push_batch(g, b, &cap, err)))
      goto out;
  }
out:
  strv_free(items, n);
  return rc;
}

int
ooc_sweep_parse_hw(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, rc = split(spec, ',', "--hw", &v, &n, err);
  return rc ? rc : axis_append(&g->hw, &g->n_hw, v, n, err);
}

int
ooc_sweep_parse_allocators(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, rc = split(spec, ',', "--allocator", &v, &n, err);
  return rc ? rc : axis_append(&g->allocators, &g->n_allocators, v, n, err);
}

int
ooc_sweep_parse_planners(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, rc;

  if (strcmp(spec, "all") == 0) {
    for (n = 0; ooc_planner_types[n]; n++)
      ;
    v = calloc((size_t)(n ? n : 1), sizeof *v);
    if (!v)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++)
      if (!(v[i] = strdup(ooc_planner_types[i]->name))) {
        strv_free(v, n);
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      }
    return axis_append(&g->planners, &g->n_planners, v, n, err);
  }
  rc = split(spec, ',', "-p", &v, &n, err);
  return rc ? rc : axis_append(&g->planners, &g->n_planners, v, n, err);
}

int
ooc_sweep_parse_budgets(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, i, rc = split(spec, ',', "--budget", &v, &n, err);
  uint64_t *nb;

  if (rc)
    return rc;
  nb = realloc(g->budget_bytes, (size_t)(g->n_budgets + n) * sizeof *nb);
  if (!nb) {
    strv_free(v, n);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  g->budget_bytes = nb;
  for (i = 0; i < n; i++) {
    uint64_t b = 0;
    if (strcmp(v[i], "default") != 0 &&
        (rc = ooc_parse_size(v[i], "--budget", &b, err))) {
      strv_free(v, n);
      return rc;
    }
    if (strcmp(v[i], "default") != 0 && b == 0) {
      strv_free(v, n);
      return ooc_err_set(err, OOC_EINVAL, "--budget '%s': must be > 0", spec);
    }
    nb[g->n_budgets + i] = b;
  }
  return axis_append(&g->budgets, &g->n_budgets, v, n, err);
}

int
ooc_sweep_add_hwset(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  const char *eq = strchr(spec, '=');
  ooc_sweep_hwset hs = { .name = NULL };
  ooc_sweep_hwset *nv;
  int rc;

  if (!eq || eq == spec || !eq[1])
    return ooc_err_set(err, OOC_EINVAL,
                       "--hw-set '%s': expected KEY=V1,V2,...", spec);
  hs.name = malloc((size_t)(eq - spec) + 1);
  if (!hs.name)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  memcpy(hs.name, spec, (size_t)(eq - spec));
  hs.name[eq - spec] = '\0';
  for (int i = 0; i < g->n_hwsets; i++)
    if (strcmp(g->hwsets[i].name, hs.name) == 0) {
      free(hs.name);
      return ooc_err_set(err, OOC_EINVAL, "--hw-set %s given twice", spec);
    }
  if ((rc = split(hs.name, '+', "--hw-set key", &hs.keys, &hs.n_keys, err)))
    goto fail;
  if ((rc = split(eq + 1, ',', "--hw-set values", &hs.values, &hs.n_values,
                  err)))
    goto fail;
  nv = realloc(g->hwsets, (size_t)(g->n_hwsets + 1) * sizeof *nv);
  if (!nv) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto fail;
  }
  g->hwsets = nv;
  g->hwsets[g->n_hwsets++] = hs;
  return OOC_OK;
fail:
  free(hs.name);
  strv_free(hs.keys, hs.n_keys);
  strv_free(hs.values, hs.n_values);
  return rc;
}

int
ooc_sweep_add_set(ooc_sweep_grid *g, const char *kv, ooc_err *err)
{
  const char *eq = strchr(kv, '=');
  ooc_kv *nv;
  char *k, *v, *label;
  size_t ll;

  if (!eq || eq == kv || !eq[1])
    return ooc_err_set(err, OOC_EINVAL, "--set '%s': expected KEY=VALUE",
                       kv);
  nv = realloc(g->sets, (size_t)(g->n_sets + 1) * sizeof *nv);
  if (!nv)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  g->sets = nv;
  k = malloc((size_t)(eq - kv) + 1);
  v = strdup(eq + 1);
  ll = (g->set_label ? strlen(g->set_label) + 1 : 0) + strlen(kv) + 1;
  label = malloc(ll);
  if (!k || !v || !label) {
    free(k);
    free(v);
    free(label);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  memcpy(k, kv, (size_t)(eq - kv));
  k[eq - kv] = '\0';
  snprintf(label, ll, "%s%s%s", g->set_label ? g->set_label : "",
           g->set_label ? ";" : "", kv);
  free(g->set_label);
  g->set_label = label;
  g->sets[g->n_sets++] = (ooc_kv){ .key = k, .value = v };
  return OOC_OK;
}

int
ooc_sweep_grid_check(ooc_sweep_grid *g, ooc_err *err)
{
  int rc, i, j, k;
  ooc_model *m = NULL;
  ooc_hw *hw = NULL;
  ooc_model_opts mo;

  if (!g->model)
    return ooc_err_set(err, OOC_EINVAL, "missing -m MODEL");
  if (!g->maxbatch && g->n_batches == 0)
    return ooc_err_set(err, OOC_EINVAL, "missing -b BATCHES");
  if (g->n_hw == 0)
    return ooc_err_set(err, OOC_EINVAL, "missing --hw PROFILES");
  if (g->n_planners == 0)
    return ooc_err_set(err, OOC_EINVAL, "missing -p PLANNERS");
  {
    int nk = 0;
    for (i = 0; i < g->n_hwsets; i++)
      nk += g->hwsets[i].n_keys;
    if (g->n_hwsets > 32 || nk > 64)
      return ooc_err_set(err, OOC_EINVAL, "--hw-set: at most 32 axes and 64 "
                         "keys in all");
  }
  if (!g->set_label && !(g->set_label = strdup("")))
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  if (g->n_allocators == 0 &&
      (rc = ooc_sweep_parse_allocators(g, "caching", err)))
    return rc;
  if (g->n_budgets == 0 && (rc = ooc_sweep_parse_budgets(g, "default", err)))
    return rc;

  mo = (ooc_model_opts){ .batch = g->maxbatch ? 1 : g->batches[0],
                         .sets = g->sets, .n_sets = g->n_sets };
  if ((rc = ooc_model_load(g->model, &mo, &m, err)))
    return rc;
  ooc_model_free(m);
  for (i = 0; i < g->n_planners; i++)
    if (!ooc_planner_find(g->planners[i], err))
      return err ? (err->code ? err->code : OOC_ENOTFOUND) : OOC_ENOTFOUND;
  for (i = 0; i < g->n_allocators; i++)
    if (!ooc_allocator_find(g->allocators[i], NULL, err))
      return err ? (err->code ? err->code : OOC_ENOTFOUND) : OOC_ENOTFOUND;
  for (i = 0; i < g->n_hw; i++) {
    if ((rc = ooc_hw_load(g->hw[i], NULL, 0, &hw, err)))
      return rc;
    ooc_hw_free(hw);
    hw = NULL;
    for (j = 0; j < g->n_hwsets; j++) {
      const ooc_sweep_hwset *hs = &g->hwsets[j];
      for (k = 0; k < hs->n_values; k++) {
        ooc_hw_override ov[64];
        int n = hs->n_keys;
        for (int q = 0; q < n; q++)
          ov[q] = (ooc_hw_override){ .key = hs->keys[q],
                                     .value = hs->values[k] };
        if ((rc = ooc_hw_load(g->hw[i], ov, n, &hw, err)))
          return rc;
        ooc_hw_free(hw);
        hw = NULL;
      }
    }
  }
  return OOC_OK;
}

int64_t
ooc_sweep_npoints(const ooc_sweep_grid *g)
{
  int64_t n = (int64_t)g->n_hw * g->n_allocators * g->n_budgets *
              g->n_planners * (g->maxbatch ? 1 : g->n_batches);
  for (int i = 0; i < g->n_hwsets; i++)
    n *= g->hwsets[i].n_values;
  return n;
}

/* Coordinates of point i (mixed radix, batch fastest). */
typedef struct point {
  int hw, alloc, budget, planner, batch;
  int hwset[32];
} point;

static void
point_decode(const ooc_sweep_grid *g, int64_t i, point *p)
{
  if (!g->maxbatch) {
    p->batch = (int)(i % g->n_batches);
    i /= g->n_batches;
  } else {
    p->batch = 0;
  }
  p->planner = (int)(i % g->n_planners);
  i /= g->n_planners;
  p->budget = (int)(i % g->n_budgets);
  i /= g->n_budgets;
  p->alloc = (int)(i % g->n_allocators);
  i /= g->n_allocators;
  for (int k = g->n_hwsets - 1; k >= 0; k--) {
    p->hwset[k] = (int)(i % g->hwsets[k].n_values);
    i /= g->hwsets[k].n_values;
  }
  p->hw = (int)i;
}

/* ---- columns ---------------------------------------------------------------- */

static const char *const summary_cols[] = {
  "dtype", "budget_bytes", "feasible", "iteration_s", "samples_per_s",
  "incore_iteration_s", "slowdown", "lower_bound_s", "compute_s",
  "peak_allocated_bytes", "peak_reserved_bytes", "peak_host_pinned_bytes",
  "fragmentation", "h2d_bytes", "d2h_bytes", "recompute_flops",
  "compute_busy_s", "h2d_busy_s", "d2h_busy_s", "stall_swapin_s",
  "stall_swapout_s", "stall_memory_s", "stall_other_s", "alloc_s", "keep",
  "swap", "recompute", "events", "oom_op", "oom_time_s",
  "oom_requested_bytes", "oom_live_bytes", "oom_reserved_bytes",
  "oom_largest_free_bytes", "oom_reason", "plan_note", "plan_wall_s",
  "sim_wall_s", NULL
};
#define N_SUMMARY_COLS (sizeof summary_cols / sizeof summary_cols[0] - 1)

int
ooc_sweep_ncoords(const ooc_sweep_grid *g)
{
  /* model, set, hw, hw_set:*, allocator, budget, planner, batch */
  return 6 + g->n_hwsets + (g->maxbatch ? 0 : 1);
}

static int
table_set_cols(ooc_table *t, char **names, int n)
{
  t->cols = names;
  t->ncols = n;
  return OOC_OK;
}

int
ooc_sweep_header(const ooc_sweep_grid *g, ooc_table *t, ooc_err *err)
{
  int nc = ooc_sweep_ncoords(g), n = nc + (g->maxbatch ? 1 : 0) +
           (int)N_SUMMARY_COLS, k = 0, i;
  char **c = calloc((size_t)n, sizeof *c);
  char buf[300];

  if (!c)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  c[k++] = strdup("model");
  c[k++] = strdup("set");
  c[k++] = strdup("hw");
  for (i = 0; i < g->n_hwsets; i++) {
    snprintf(buf, sizeof buf, "hw_set:%s", g->hwsets[i].name);
    c[k++] = strdup(buf);
  }
  c[k++] = strdup("allocator");
  c[k++] = strdup("budget");
  c[k++] = strdup("planner");
  if (!g->maxbatch)
    c[k++] = strdup("batch");
  else
    c[k++] = strdup("max_batch");
  for (i = 0; summary_cols[i]; i++)
    c[k++] = strdup(summary_cols[i]);
  for (i = 0; i < n; i++)
    if (!c[i]) {
      strv_free(c, n);
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    }
  return table_set_cols(t, c, n);
}

/* Coordinate cells of point i (heap strings), nc = ooc_sweep_ncoords. */
static int
point_coords(const ooc_sweep_grid *g, int64_t i, char **cells)
{
  point p;
  int k = 0;
  char buf[32];

  point_decode(g, i, &p);
  cells[k++] = strdup(g->model);
  cells[k++] = strdup(g->set_label ? g->set_label : "");
  cells[k++] = strdup(g->hw[p.hw]);
  for (int j = 0; j < g->n_hwsets; j++)
    cells[k++] = strdup(g->hwsets[j].values[p.hwset[j]]);
  cells[k++] = strdup(g->allocators[p.alloc]);
  cells[k++] = strdup(g->budgets[p.budget]);
  cells[k++] = strdup(g->planners[p.planner]);
  if (!g->maxbatch) {
    snprintf(buf, sizeof buf, "%" PRId64, g->batches[p.batch]);
    cells[k++] = strdup(buf);
  }
  for (int j = 0; j < k; j++)
    if (!cells[j])
      return OOC_ENOMEM;
  return OOC_OK;
}

static char *
fmt_d(double v)
{
  char b[48];
  snprintf(b, sizeof b, "%.9g", v);
  return strdup(b);
}

static char *
fmt_u(uint64_t v)
{
  char b[32];
  snprintf(b, sizeof b, "%" PRIu64, v);
  return strdup(b);
}

/* Summary cells in summary_cols order. */
static int
summary_cells(const ooc_summary *s, char **c)
{
  int k = 0, oom = !s->feasible;

  c[k++] = strdup(ooc_dtype_name(s->dtype));
  c[k++] = fmt_u(s->budget_bytes);
  c[k++] = strdup(s->feasible ? "1" : "0");
  c[k++] = fmt_d(s->iteration_s);
  c[k++] = fmt_d(s->samples_per_s);
  c[k++] = fmt_d(s->incore_iteration_s);
  c[k++] = fmt_d(s->slowdown);
  c[k++] = fmt_d(s->lower_bound_s);
  c[k++] = fmt_d(s->compute_s);
  c[k++] = fmt_u(s->peak_allocated_bytes);
  c[k++] = fmt_u(s->peak_reserved_bytes);
  c[k++] = fmt_u(s->peak_host_pinned_bytes);
  c[k++] = fmt_d(s->fragmentation);
  c[k++] = fmt_u(s->h2d_bytes);
  c[k++] = fmt_u(s->d2h_bytes);
  c[k++] = fmt_d(s->recompute_flops);
  c[k++] = fmt_d(s->compute_busy_s);
  c[k++] = fmt_d(s->h2d_busy_s);
  c[k++] = fmt_d(s->d2h_busy_s);
  for (int st = 0; st < OOC_STALL_COUNT && st < 4; st++)
    c[k++] = fmt_d(s->stall_s[st]);
  c[k++] = fmt_d(s->alloc_s);
  c[k++] = fmt_u((uint64_t)s->counts[0]);
  c[k++] = fmt_u((uint64_t)s->counts[1]);
  c[k++] = fmt_u((uint64_t)s->counts[2]);
  c[k++] = fmt_u(s->events);
  c[k++] = strdup(oom && s->oom_op ? s->oom_op : "");
  c[k++] = oom ? fmt_d((double)s->oom.time_ns / 1e9) : strdup("");
  c[k++] = oom ? fmt_u(s->oom.requested_bytes) : strdup("");
  c[k++] = oom ? fmt_u(s->oom.live_bytes) : strdup("");
  c[k++] = oom ? fmt_u(s->oom.reserved_bytes) : strdup("");
  c[k++] = oom ? fmt_u(s->oom.largest_free_bytes) : strdup("");
  c[k++] = strdup(oom ? s->oom.reason : "");
  c[k++] = strdup(s->plan_note ? s->plan_note : "");
  c[k++] = fmt_d(s->plan_wall_s);
  c[k++] = fmt_d(s->sim_wall_s);
  for (int j = 0; j < k; j++)
    if (!c[j])
      return OOC_ENOMEM;
  return OOC_OK;
}

/* ---- tables ------------------------------------------------------------------ */

void
ooc_table_init(ooc_table *t)
{
  *t = (ooc_table){ .ncols = 0 };
}

static void
row_free(char **r, int n)
{
  strv_free(r, n);
}

void
ooc_table_fini(ooc_table *t)
{
  if (!t)
    return;
  for (int64_t i = 0; i < t->nrows; i++)
    row_free(t->rows[i], t->ncols);
  free(t->rows);
  strv_free(t->cols, t->ncols);
  *t = (ooc_table){ .ncols = 0 };
}

int
ooc_table_col(const ooc_table *t, const char *name)
{
  for (int i = 0; i < t->ncols; i++)
    if (strcmp(t->cols[i], name) == 0)
      return i;
  return -1;
}

/* Append a row (the table takes ownership). */
static int
table_push(ooc_table *t, char **row)
{
  if (t->nrows == t->cap) {
    int64_t nc = t->cap ? t->cap * 2 : 64;
    char ***nr = realloc(t->rows, (size_t)nc * sizeof *nr);
    if (!nr)
      return OOC_ENOMEM;
    t->rows = nr;
    t->cap = nc;
  }
  t->rows[t->nrows++] = row;
  return OOC_OK;
}

static char **
row_dup(char *const *r, int n)
{
  char **d = calloc((size_t)n, sizeof *d);
  if (!d)
    return NULL;
  for (int i = 0; i < n; i++)
    if (!(d[i] = strdup(r[i]))) {
      row_free(d, n);
      return NULL;
    }
  return d;
}

/* Parse CSV text into rows of cells; calls push per record. */
int
ooc_table_read_csv(const char *path, ooc_table *t, ooc_err *err)
{
  char *text = NULL, *p, *cell = NULL;
  size_t len, cl = 0, ccap = 0;
  char **rec = NULL;
  int nrec = 0, rcap = 0, line = 1, rc = OOC_OK, header = 1;

  if ((rc = ooc_read_file(path, &text, &len, err)))
    return rc;
  p = text;
  ooc_table_init(t);
  while (*p) {
    int quoted = 0, end_rec = 0;
    cl = 0;
    if (*p == '"') {
      quoted = 1;
      p++;
    }
    for (;;) {
      char ch = *p;
      if (quoted) {
        if (!ch) {
          rc = ooc_err_set(err, OOC_EPARSE, "%s:%d: unterminated quote",
                           path, line);
          goto fail;
        }
        if (ch == '"' && p[1] == '"') {
          p += 2;
        } else if (ch == '"') {
          p++;
          quoted = 0;
          continue;
        } else {
          if (ch == '\n')
            line++;
          p++;
        }
      } else {
        if (!ch || ch == ',' || ch == '\n' || ch == '\r')
          break;
        p++;
      }
      if (cl + 2 > ccap) {
        size_t nc = ccap ? ccap * 2 : 64;
        char *ncell = realloc(cell, nc);
        if (!ncell)
          goto nomem;
        cell = ncell;
        ccap = nc;
      }
      cell[cl++] = ch;
    }
    if (nrec == rcap) {
      int nc = rcap ? rcap * 2 : 64;
      char **nr = realloc(rec, (size_t)nc * sizeof *nr);
      if (!nr)
        goto nomem;
      rec = nr;
      rcap = nc;
    }
    rec[nrec] = malloc(cl + 1);
    if (!rec[nrec])
      goto nomem;
    if (cl)
      memcpy(rec[nrec], cell, cl);
    rec[nrec][cl] = '\0';
    nrec++;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '\r')
      p++;
    if (*p == '\n')
      p++;
    end_rec = 1;
    if (end_rec) {
      if (header) {
        t->cols = rec;
        t->ncols = nrec;
        header = 0;
      } else {
        char **r;
        if (nrec != t->ncols) {
          rc = ooc_err_set(err, OOC_EPARSE,
                           "%s:%d: %d fields, the header has %d", path, line,
                           nrec, t->ncols);
          goto fail;
        }
        r = realloc(rec, (size_t)nrec * sizeof *r);
        if (!r)
          goto nomem;
        if (table_push(t, r)) {
          rec = r;
          goto nomem;
        }
      }
      rec = NULL;
      nrec = rcap = 0;
      line++;
    }
  }
  if (header) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: empty file (no header)", path);
    goto fail;
  }
  free(cell);
  free(text);
  return OOC_OK;
nomem:
  rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
fail:
  strv_free(rec, nrec);
  free(cell);
  free(text);
  ooc_table_fini(t);
  return rc;
}

void
ooc_csv_cell(FILE *f, const char *s)
{
  if (strpbrk(s, ",\"\n\r")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"')
        fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
}

int
ooc_table_write_csv(FILE *f, const ooc_table *t)
{
  for (int i = 0; i < t->ncols; i++) {
    if (i)
      fputc(',', f);
    ooc_csv_cell(f, t->cols[i]);
  }
  fputc('\n', f);
  for (int64_t r = 0; r < t->nrows; r++) {
    for (int i = 0; i < t->ncols; i++) {
      if (i)
        fputc(',', f);
      ooc_csv_cell(f, t->rows[r][i]);
    }
    fputc('\n', f);
  }
  return ferror(f) ? OOC_EIO : OOC_OK;
}

static int
is_name_col(const char *c)
{
  static const char *const names[] = { "model", "set", "hw", "allocator",
    "budget", "planner", "dtype", "oom_op", "oom_reason", "plan_note",
    "lane", "phase", "layer", NULL };
  for (int i = 0; names[i]; i++)
    if (strcmp(c, names[i]) == 0)
      return 1;
  return 0;
}

static int
is_json_number(const char *s)
{
  char *end;
  double v;
  if (!*s || *s == '+' || *s == '.' || isspace((unsigned char)*s))
    return 0;
  if ((*s == '0' && s[1] && s[1] != '.' && s[1] != 'e' && s[1] != 'E'))
    return 0;
  v = strtod(s, &end);
  return *end == '\0' && isfinite(v) && !strchr(s, 'x') && !strchr(s, 'X') &&
         !strchr(s, 'n') && !strchr(s, 'N') && s[strlen(s) - 1] != '.';
}

static void
json_str(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch == '\n')
      fputs("\\n", f);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

int
ooc_table_write_json(FILE *f, const ooc_table *t)
{
  fputs("[", f);
  for (int64_t r = 0; r < t->nrows; r++) {
    fputs(r ? ",\n  {" : "\n  {", f);
    for (int i = 0; i < t->ncols; i++) {
      const char *v = t->rows[r][i];
      if (i)
        fputs(", ", f);
      json_str(f, t->cols[i]);
      fputs(": ", f);
      if (strcmp(t->cols[i], "feasible") == 0 && (!strcmp(v, "0") ||
                                                  !strcmp(v, "1")))
        fputs(v[0] == '1' ? "true" : "false", f);
      else if (!*v)
        fputs("null", f);
      else if (!is_name_col(t->cols[i]) && is_json_number(v))
        fputs(v, f);
      else
        json_str(f, v);
    }
    fputs("}", f);
  }
  fputs(t->nrows ? "\n]\n" : "]\n", f);
  return ferror(f) ? OOC_EIO : OOC_OK;
}

/* ---- row keys (coordinates) ------------------------------------------------- */

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

/* Open-addressing index from coordinates to row number. */
typedef struct keymap {
  int64_t cap;
  int64_t *slot;              /* row index, -1 empty */
  uint64_t *hash;
} keymap;

static int
keymap_build(keymap *km, const ooc_table *t, int nc)
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

static int64_t
keymap_find(const keymap *km, const ooc_table *t, char *const *coords, int nc)
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

static void
keymap_free(keymap *km)
{
  free(km->slot);
  free(km->hash);
}

/* ---- files ------------------------------------------------------------------- */

int
ooc_sweep_mkdir(const char *dir, ooc_err *err)
{
  char probe[4096];
  FILE *f;

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

static int
write_atomic(const char *dir, const char *name, const ooc_table *t,
             const char *text, int json, ooc_err *err)
{
  char path[4096], tmp[4200];
  FILE *f;
  int rc;

  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  f = fopen(tmp, "w");
  if (!f)
    return ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", tmp,
                       strerror(errno));
  if (text)
    rc = fputs(text, f) < 0 ? OOC_EIO : OOC_OK;
  else
    rc = json ? ooc_table_write_json(f, t) : ooc_table_write_csv(f, t);
  if (fclose(f) != 0 || rc) {
    remove(tmp);
    return ooc_err_set(err, OOC_EIO, "cannot write '%s'", path);
  }
  if (rename(tmp, path) != 0)
    return ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", path,
                       strerror(errno));
  return OOC_OK;
}

/* grid.json: the axes, enough to rebuild the grid order for --merge. */
static char *
grid_json(const ooc_sweep_grid *g)
{
  cJSON *o = cJSON_CreateObject(), *a;
  char *s;
  int i;

  if (!o)
    return NULL;
  cJSON_AddStringToObject(o, "model", g->model);
  cJSON_AddStringToObject(o, "set", g->set_label ? g->set_label : "");
  cJSON_AddBoolToObject(o, "maxbatch", g->maxbatch);
  cJSON_AddNumberToObject(o, "iterations", g->iterations);
  a = cJSON_AddArrayToObject(o, "hw");
  for (i = 0; i < g->n_hw; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(g->hw[i]));
  a = cJSON_AddArrayToObject(o, "hw_set");
  for (i = 0; i < g->n_hwsets; i++) {
    cJSON *h = cJSON_CreateObject(), *v;
    cJSON_AddStringToObject(h, "key", g->hwsets[i].name);
    v = cJSON_AddArrayToObject(h, "values");
    for (int k = 0; k < g->hwsets[i].n_values; k++)
      cJSON_AddItemToArray(v, cJSON_CreateString(g->hwsets[i].values[k]));
    cJSON_AddItemToArray(a, h);
  }
  a = cJSON_AddArrayToObject(o, "allocator");
  for (i = 0; i < g->n_allocators; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(g->allocators[i]));
  a = cJSON_AddArrayToObject(o, "budget");
  for (i = 0; i < g->n_budgets; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(g->budgets[i]));
  a = cJSON_AddArrayToObject(o, "planner");
  for (i = 0; i < g->n_planners; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(g->planners[i]));
  a = cJSON_AddArrayToObject(o, "batch");
  for (i = 0; !g->maxbatch && i < g->n_batches; i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber((double)g->batches[i]));
  s = cJSON_Print(o);
  cJSON_Delete(o);
  if (s) {
    size_t n = strlen(s);
    char *t = malloc(n + 2);
    if (t) {
      memcpy(t, s, n);
      t[n] = '\n';
      t[n + 1] = '\0';
    }
    cJSON_free(s);
    return t;
  }
  return NULL;
}

static int
json_strv(const cJSON *o, const char *key, char ***v, int *n)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key), *it;
  int k = 0;
  if (!cJSON_IsArray(a))
    return OOC_EPARSE;
  *n = cJSON_GetArraySize(a);
  *v = calloc((size_t)(*n ? *n : 1), sizeof **v);
  if (!*v)
    return OOC_ENOMEM;
  cJSON_ArrayForEach(it, a) {
    if (!cJSON_IsString(it) || !((*v)[k++] = strdup(it->valuestring)))
      return OOC_EPARSE;
  }
  return OOC_OK;
}

/* Rebuild a grid (axes only, unchecked) from grid.json text. */
static int
grid_from_json(const char *text, const char *path, ooc_sweep_grid *g,
               ooc_err *err)
{
  cJSON *o = cJSON_Parse(text), *it;
  const cJSON *m, *s, *mb, *b, *hs;
  int rc = OOC_EPARSE;

  ooc_sweep_grid_init(g);
  if (!o)
    return ooc_err_set(err, OOC_EPARSE, "%s: not valid JSON", path);
  m = cJSON_GetObjectItemCaseSensitive(o, "model");
  s = cJSON_GetObjectItemCaseSensitive(o, "set");
  mb = cJSON_GetObjectItemCaseSensitive(o, "maxbatch");
  b = cJSON_GetObjectItemCaseSensitive(o, "batch");
  hs = cJSON_GetObjectItemCaseSensitive(o, "hw_set");
  if (!cJSON_IsString(m) || !cJSON_IsString(s) || !cJSON_IsBool(mb) ||
      !cJSON_IsArray(b) || !cJSON_IsArray(hs))
    goto fail;
  g->model = strdup(m->valuestring);
  g->set_label = strdup(s->valuestring);
  g->maxbatch = cJSON_IsTrue(mb);
  if (json_strv(o, "hw", &g->hw, &g->n_hw) ||
      json_strv(o, "allocator", &g->allocators, &g->n_allocators) ||
      json_strv(o, "budget", &g->budgets, &g->n_budgets) ||
      json_strv(o, "planner", &g->planners, &g->n_planners))
    goto fail;
  g->n_batches = cJSON_GetArraySize(b);
  g->batches = calloc((size_t)(g->n_batches + 1), sizeof *g->batches);
  if (!g->batches)
    goto fail;
  g->n_batches = 0;
  cJSON_ArrayForEach(it, b) {
    if (!cJSON_IsNumber(it))
      goto fail;
    g->batches[g->n_batches++] = (int64_t)it->valuedouble;
  }
  g->hwsets = calloc((size_t)(cJSON_GetArraySize(hs) + 1), sizeof *g->hwsets);
  if (!g->hwsets)
    goto fail;
  cJSON_ArrayForEach(it, hs) {
    ooc_sweep_hwset *h = &g->hwsets[g->n_hwsets];
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "key");
    if (!cJSON_IsString(k))
      goto fail;
    g->n_hwsets++;
    h->name = strdup(k->valuestring);
    if (json_strv(it, "values", &h->values, &h->n_values) || !h->name)
      goto fail;
  }
  if (!g->model || !g->set_label || g->n_hw == 0 || g->n_planners == 0 ||
      g->n_allocators == 0 || g->n_budgets == 0 ||
      (!g->maxbatch && g->n_batches == 0) || g->n_hwsets > 32)
    goto fail;
  cJSON_Delete(o);
  return OOC_OK;
fail:
  cJSON_Delete(o);
  ooc_sweep_grid_fini(g);
  return ooc_err_set(err, rc, "%s: not a sweep grid file", path);
}

/* Final table: grid rows in grid order (old or new), then old rows outside
 * the grid, in their old order. new_rows[i] is point i's new row or NULL. */
static int
compose(const ooc_sweep_grid *g, const ooc_table *hdr, const ooc_table *old,
        const keymap *km, char ***new_rows, ooc_table *out)
{
  int nc = ooc_sweep_ncoords(g);
  int64_t np = ooc_sweep_npoints(g);
  char *coords[64];
  char *used = old->nrows ? calloc((size_t)old->nrows, 1) : NULL;
  int rc = OOC_OK;

  if (old->nrows && !used)
    return OOC_ENOMEM;
  ooc_table_init(out);
  if (!(out->cols = row_dup(hdr->cols, hdr->ncols))) {
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
      if (point_coords(g, i, coords)) {
        for (int j = 0; j < nc; j++)
          free(coords[j]);
        rc = OOC_ENOMEM;
        break;
      }
      o = keymap_find(km, old, coords, nc);
      for (int j = 0; j < nc; j++)
        free(coords[j]);
      if (o >= 0) {
        src = old->rows[o];
        used[o] = 1;
      }
    }
    if (!src)
      continue;
    if (!(r = row_dup(src, out->ncols)) || table_push(out, r)) {
      row_free(r, out->ncols);
      rc = OOC_ENOMEM;
    }
  }
  for (int64_t o = 0; o < old->nrows && !rc; o++) {
    char **r;
    if (used[o])
      continue;
    /* A duplicate of a row already placed is dropped. */
    if (keymap_find(km, old, old->rows[o], nc) != o)
      continue;
    if (!(r = row_dup(old->rows[o], out->ncols)) || table_push(out, r)) {
      row_free(r, out->ncols);
      rc = OOC_ENOMEM;
    }
  }
  free(used);
  if (rc)
    ooc_table_fini(out);
  return rc;
}

static int
write_results(const char *dir, const ooc_table *t, const char *grid,
              ooc_err *err)
{
  int rc = write_atomic(dir, "results.csv", t, NULL, 0, err);
  if (!rc)
    rc = write_atomic(dir, "results.json", t, NULL, 1, err);
  if (!rc && grid)
    rc = write_atomic(dir, "grid.json", NULL, grid, 0, err);
  return rc;
}

/* ---- running ------------------------------------------------------------------- */

struct runner {
  const ooc_sweep_grid *g;
  int ncols;
  int64_t *todo;              /* point indices to run, unit by unit */
  int64_t n_todo;             /* lowered to next to stop claiming */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t next;               /* next todo slot to claim */
  int64_t done;
  int64_t failed;
  char ***rows;               /* per point: its new row (NULL if none) */
  char first_error[OOC_ERR_MSG_MAX + 128];
  int64_t first_error_point;
};

/* A worker's open scenario, reused while its points share the model,
 * batch, profile and --hw-set values (the in-core baseline is cached in it). */
typedef struct scache {
  ooc_scenario *sc;
  int64_t unit;               /* point's unit id (see unit_of), -1: none */
} scache;

/* Points with the same unit id share one opened scenario: same profile,
 * --hw-set values and batch. */
static int64_t
unit_of(const ooc_sweep_grid *g, int64_t i)
{
  int64_t inner = (int64_t)g->n_allocators * g->n_budgets * g->n_planners *
                  (g->maxbatch ? 1 : g->n_batches);
  int64_t nb = g->maxbatch ? 1 : g->n_batches;
  return (i / inner) * nb + (i % nb);
}

/* The k-th point claimed: unit by unit (ascending unit_of), each unit's
 * points in grid order, so a worker reuses its opened scenario. */
static int64_t
unit_order(const ooc_sweep_grid *g, int64_t k)
{
  int64_t nb = g->maxbatch ? 1 : g->n_batches;
  int64_t nmid = (int64_t)g->n_allocators * g->n_budgets * g->n_planners;
  int64_t unit = k / nmid;
  return (unit / nb) * nmid * nb + (k % nmid) * nb + unit % nb;
}

static int
run_point(const ooc_sweep_grid *g, int64_t i, scache *cache, char **row,
          ooc_err *err)
{
  point p;
  ooc_hw_override ov[64];
  int nov = 0, rc, nc = ooc_sweep_ncoords(g), k;
  ooc_summary sum = { .feasible = 0 };
  int64_t best = 0;

  point_decode(g, i, &p);
  for (int j = 0; j < g->n_hwsets; j++)
    for (int q = 0; q < g->hwsets[j].n_keys && nov < 64; q++)
      ov[nov++] = (ooc_hw_override){ .key = g->hwsets[j].keys[q],
                                     .value = g->hwsets[j].values[p.hwset[j]] };
  ooc_scenario_spec spec = {
    .model = g->model,
    .batch = g->maxbatch ? 1 : g->batches[p.batch],
    .sets = g->sets, .n_sets = g->n_sets,
    .hw = g->hw[p.hw],
    .hw_sets = nov ? ov : NULL, .n_hw_sets = nov,
    .planner = g->planners[p.planner],
    .allocator = g->allocators[p.alloc],
    .budget = g->budget_bytes[p.budget],
    .iterations = g->iterations,
  };
  if (g->maxbatch) {
    rc = ooc_scenario_maxbatch(&spec, &best, &sum, err);
    if (!rc && best == 0) {
      ooc_summary_fini(&sum);
      sum = (ooc_summary){ .feasible = 0 };
      sum.oom.instr = -1;
      snprintf(sum.oom.reason, sizeof sum.oom.reason,
               "not even batch 1 fits the budget");
    }
  } else {
    int64_t unit = unit_of(g, i);
    if (cache->unit != unit) {
      ooc_scenario_close(cache->sc);
      cache->sc = NULL;
      cache->unit = -1;
      if ((rc = ooc_scenario_open(&spec, &cache->sc, err)))
        return rc;
      cache->unit = unit;
    }
    /* A budget below the largest working set is a point of the grid, not
     * bad input: the same infeasible summary (step and shortfall) as
     * simulate gives for a profile that is too small. */
    if (ooc_scenario_check_budget(cache->sc, spec.budget, NULL))
      rc = ooc_scenario_no_fit(cache->sc, &spec, &sum, err);
    else
      rc = ooc_scenario_run_in(cache->sc, &spec, &sum, NULL, err);
  }
  if (rc) {
    ooc_summary_fini(&sum);
    return rc;
  }
  if (point_coords(g, i, row)) {
    ooc_summary_fini(&sum);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  k = nc;
  if (g->maxbatch)
    row[k++] = fmt_u((uint64_t)best);
  rc = summary_cells(&sum, row + k);
  ooc_summary_fini(&sum);
  return rc ? ooc_err_set(err, OOC_ENOMEM, "out of memory") : OOC_OK;
}

static void *
worker(void *arg)
{
  struct runner *R = arg;
  scache cache = { .sc = NULL, .unit = -1 };
  for (;;) {
    int64_t slot, pt;
    char **row;
    ooc_err e = { 0 };
    int rc;

    pthread_mutex_lock(&R->mu);
    slot = R->next < R->n_todo ? R->next++ : -1;
    pthread_mutex_unlock(&R->mu);
    if (slot < 0)
      break;
    pt = R->todo[slot];
    row = calloc((size_t)R->ncols, sizeof *row);
    rc = row ? run_point(R->g, pt, &cache, row, &e)
             : ooc_err_set(&e, OOC_ENOMEM, "out of memory");
    pthread_mutex_lock(&R->mu);
    if (rc) {
      row_free(row, R->ncols);
      R->failed++;
      if (R->first_error_point < 0 || pt < R->first_error_point) {
        point p;
        point_decode(R->g, pt, &p);
        R->first_error_point = pt;
        if (R->g->maxbatch)
          snprintf(R->first_error, sizeof R->first_error,
                   "%s on %s: %s", R->g->planners[p.planner],
                   R->g->hw[p.hw], e.msg);
        else
          snprintf(R->first_error, sizeof R->first_error,
                   "%s at batch %" PRId64 " on %s: %s",
                   R->g->planners[p.planner], R->g->batches[p.batch],
                   R->g->hw[p.hw], e.msg);
      }
    } else {
      R->rows[pt] = row;
    }
    R->done++;
    pthread_cond_signal(&R->cv);
    pthread_mutex_unlock(&R->mu);
  }
  ooc_scenario_close(cache.sc);
  return NULL;
}

static int
same_header(const ooc_table *a, const ooc_table *b)
{
  if (a->ncols != b->ncols)
    return 0;
  for (int i = 0; i < a->ncols; i++)
    if (strcmp(a->cols[i], b->cols[i]) != 0)
      return 0;
  return 1;
}

static int
flush(const ooc_sweep_grid *g, const ooc_table *hdr, const ooc_table *old,
      const keymap *km, struct runner *R, const char *dir, const char *grid,
      ooc_table *keep, ooc_err *err)
{
  ooc_table out;
  int rc;
  int64_t np = ooc_sweep_npoints(g);
  char ***snap = calloc((size_t)(np ? np : 1), sizeof *snap);

  if (!snap)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  pthread_mutex_lock(&R->mu);
  memcpy(snap, R->rows, (size_t)np * sizeof *snap);
  pthread_mutex_unlock(&R->mu);
  rc = compose(g, hdr, old, km, snap, &out);
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

int
ooc_sweep_run(const ooc_sweep_grid *g, const ooc_sweep_opts *o,
              ooc_sweep_stats *st, ooc_table *table, ooc_err *err)
{
  ooc_table hdr, old;
  keymap km = { 0 };
  struct runner R = { .g = g };
  char *grid = NULL, path[4096];
  int rc, nc = ooc_sweep_ncoords(g), jobs = o->jobs > 0 ? o->jobs : 1;
  int64_t np = ooc_sweep_npoints(g);
  pthread_t *th = NULL;
  int nth = 0, mu_ok = 0;
  double t0 = ooc_wall_s(), last_flush, last_draw = 0;

  *st = (ooc_sweep_stats){ .points = 0 };
  ooc_table_init(&hdr);
  ooc_table_init(&old);
  if (nc > 64 || g->n_hwsets > 32)
    return ooc_err_set(err, OOC_EINVAL, "too many --hw-set axes (max 32)");
  if ((rc = ooc_sweep_mkdir(o->dir, err)))
    return rc;
  if ((rc = ooc_sweep_header(g, &hdr, err)))
    return rc;
  snprintf(path, sizeof path, "%s/results.csv", o->dir);
  if (o->resume && access(path, F_OK) == 0) {
    if ((rc = ooc_table_read_csv(path, &old, err)))
      goto out;
    if (!same_header(&hdr, &old)) {
      rc = ooc_err_set(err, OOC_EINVAL,
                       "%s: its columns differ from this sweep's (another "
                       "grid wrote it); use another -o directory", path);
      goto out;
    }
  }
  if (keymap_build(&km, &old, nc) || !(grid = grid_json(g))) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  R.ncols = hdr.ncols;
  R.first_error_point = -1;
  R.rows = calloc((size_t)(np ? np : 1), sizeof *R.rows);
  R.todo = malloc((size_t)(np ? np : 1) * sizeof *R.todo);
  if (!R.rows || !R.todo) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  for (int64_t k = 0; k < np; k++) {
    char *coords[64] = { 0 };
    int64_t found, i = unit_order(g, k);
    if (o->shard_n > 0 && i % o->shard_n != o->shard_k - 1)
      continue;
    st->points++;
    if (old.nrows) {
      if (point_coords(g, i, coords)) {
        for (int j = 0; j < nc; j++)
          free(coords[j]);
        rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
        goto out;
      }
      found = keymap_find(&km, &old, coords, nc);
      for (int j = 0; j < nc; j++)
        free(coords[j]);
      if (found >= 0) {
        st->skipped++;
        continue;
      }
    }
    R.todo[R.n_todo++] = i;
  }
  pthread_mutex_init(&R.mu, NULL);
  pthread_cond_init(&R.cv, NULL);
  mu_ok = 1;
  if (jobs > R.n_todo)
    jobs = R.n_todo > 0 ? (int)R.n_todo : 1;
  th = calloc((size_t)jobs, sizeof *th);
  if (!th) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  /* Write the grid (and the kept rows) first: a bad directory fails now. */
  if ((rc = flush(g, &hdr, &old, &km, &R, o->dir, grid, NULL, err)))
    goto out;
  last_flush = ooc_wall_s();
  for (nth = 0; nth < jobs && R.n_todo > 0; nth++)
    if (pthread_create(&th[nth], NULL, worker, &R) != 0)
      break;
  if (nth == 0 && R.n_todo > 0)
    worker(&R);
  pthread_mutex_lock(&R.mu);
  while (R.done < R.n_todo) {
    struct timespec ts;
    int64_t d;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 250000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&R.cv, &R.mu, &ts);
    d = R.done;
    pthread_mutex_unlock(&R.mu);
    /* At most five redraws a second; the last one comes after the loop. */
    if (o->progress && d < R.n_todo && ooc_wall_s() - last_draw >= 0.2) {
      o->progress(o->progress_ctx, d, R.n_todo, ooc_wall_s() - t0);
      last_draw = ooc_wall_s();
    }
    if (!rc && ooc_wall_s() - last_flush > 5.0) {
      if ((rc = flush(g, &hdr, &old, &km, &R, o->dir, NULL, NULL, err))) {
        /* Stop claiming; wait for the points already claimed, then report
         * the error. */
        pthread_mutex_lock(&R.mu);
        R.n_todo = R.next;
        pthread_mutex_unlock(&R.mu);
      }
      last_flush = ooc_wall_s();
    }
    pthread_mutex_lock(&R.mu);
  }
  pthread_mutex_unlock(&R.mu);
  for (int i = 0; i < nth; i++)
    pthread_join(th[i], NULL);
  if (rc)
    goto out;
  if (o->progress && R.n_todo > 0)
    o->progress(o->progress_ctx, R.n_todo, R.n_todo, ooc_wall_s() - t0);
  if ((rc = flush(g, &hdr, &old, &km, &R, o->dir, NULL, table, err)))
    goto out;
  st->ran = R.n_todo - R.failed;
  st->failed = R.failed;
  memcpy(st->first_error, R.first_error, sizeof st->first_error);
  st->wall_s = ooc_wall_s() - t0;
out:
  if (mu_ok) {
    pthread_mutex_destroy(&R.mu);
    pthread_cond_destroy(&R.cv);
  }
  free(th);
  if (R.rows) {
    for (int64_t i = 0; i < np; i++)
      row_free(R.rows[i], hdr.ncols);
    free(R.rows);
  }
  free(R.todo);
  free(grid);
  keymap_free(&km);
  ooc_table_fini(&old);
  ooc_table_fini(&hdr);
  return rc;
}

/* ---- merge ---------------------------------------------------------------------- */

int
ooc_sweep_merge(const char *const *dirs, int n, const char *dir, ooc_err *err)
{
  char path[4096], *grid_text = NULL, *other = NULL;
  size_t len;
  ooc_sweep_grid g;
  ooc_table all, part, out;
  keymap km = { 0 };
  int rc, nc;

  ooc_sweep_grid_init(&g);
  ooc_table_init(&all);
  ooc_table_init(&out);
  if (n < 1)
    return ooc_err_set(err, OOC_EINVAL, "--merge needs at least one directory");
  snprintf(path, sizeof path, "%s/grid.json", dirs[0]);
  if ((rc = ooc_read_file(path, &grid_text, &len, err)))
    return rc;
  if ((rc = grid_from_json(grid_text, path, &g, err)))
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
    if (d == 0) {
      all.cols = part.cols;
      all.ncols = part.ncols;
      part.cols = NULL;
      part.ncols = 0;
    } else if (!same_header(&all, &part)) {
      ooc_table_fini(&part);
      rc = ooc_err_set(err, OOC_EINVAL, "%s: columns differ from %s/results.csv",
                       path, dirs[0]);
      goto out;
    }
    for (int64_t r = 0; r < part.nrows; r++) {
      if (table_push(&all, part.rows[r])) {
        for (int64_t q = r; q < part.nrows; q++)
          row_free(part.rows[q], part.ncols ? part.ncols : all.ncols);
        part.nrows = 0;
        ooc_table_fini(&part);
        rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
        goto out;
      }
    }
    part.nrows = 0;
    ooc_table_fini(&part);
  }
  if (nc > all.ncols) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s/results.csv: too few columns",
                     dirs[0]);
    goto out;
  }
  if ((rc = ooc_sweep_mkdir(dir, err)))
    goto out;
  if (keymap_build(&km, &all, nc) || compose(&g, &all, &all, &km, NULL, &out)) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  rc = write_results(dir, &out, grid_text, err);
out:
  keymap_free(&km);
  ooc_table_fini(&out);
  ooc_table_fini(&all);
  ooc_sweep_grid_fini(&g);
  free(grid_text);
  free(other);
  return rc;
}
