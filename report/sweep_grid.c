/* report/sweep_grid.c — the axes of a sweep grid (sweep_grid.h): parsing
 * each option into its axis, the checks before anything runs, and the
 * expansion of a point index into its coordinates.
 *
 * Ownership: the grid owns copies of every string it is given. Cost: the
 * parsers are linear in their spec; ooc_sweep_grid_check loads the model
 * once and every profile once per --hw-set value; decoding a point is
 * O(axes).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/sweep_grid.h"
#include "alloc/alloc.h"
#include "analysis/scenario.h"
#include "planners/registry.h"
#include "base/strv.h"
#include "base/util.h"

/* Append the items of a new list to an axis (axes may be given twice).
 * A value already on the axis, or twice in the list, would only repeat
 * rows: "--hw: 'v100-pcie3' given twice" names the option (opt). The
 * items are taken (freed on failure). O(n^2) in the axis, which is
 * short. */
static int
axis_append(char ***axis, int *n, char **items, int ni, const char *opt,
            ooc_err *err)
{
  char **nv;

  for (int i = 0; i < ni; i++)
    for (int j = 0; j < *n + i; j++)
      if (strcmp(j < *n ? (*axis)[j] : items[j - *n], items[i]) == 0) {
        int rc = ooc_err_set(err, OOC_EINVAL, "%s: '%s' given twice", opt,
                             items[i]);
        ooc_strv_free(items, ni);
        return rc;
      }
  nv = realloc(*axis, (size_t)(*n + ni) * sizeof *nv);
  if (!nv) {
    ooc_strv_free(items, ni);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  memcpy(nv + *n, items, (size_t)ni * sizeof *items);
  free(items);
  *axis = nv;
  *n += ni;
  return OOC_OK;
}

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
  ooc_strv_free(g->hw, g->n_hw);
  for (i = 0; i < g->n_hwsets; i++) {
    free(g->hwsets[i].name);
    ooc_strv_free(g->hwsets[i].keys, g->hwsets[i].n_keys);
    ooc_strv_free(g->hwsets[i].values, g->hwsets[i].n_values);
  }
  free(g->hwsets);
  ooc_strv_free(g->dtypes, g->n_dtypes);
  ooc_strv_free(g->optimizers, g->n_optimizers);
  ooc_strv_free(g->allocators, g->n_allocators);
  ooc_strv_free(g->budgets, g->n_budgets);
  free(g->budget_bytes);
  ooc_strv_free(g->planners, g->n_planners);
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
by_i64(const void *x, const void *y)
{
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* The smallest batch given twice into *dup: 1, 0 when none, -1 out of
 * memory. O(n log n) on a sorted copy, as a range may hold 100000
 * sizes. */
static int
batch_repeat(const ooc_sweep_grid *g, int64_t *dup)
{
  int64_t *c;
  int i, found = 0;

  if (g->n_batches < 2)
    return 0;
  if ((c = malloc((size_t)g->n_batches * sizeof *c)) == NULL)
    return -1;
  memcpy(c, g->batches, (size_t)g->n_batches * sizeof *c);
  qsort(c, (size_t)g->n_batches, sizeof *c, by_i64);
  for (i = 1; i < g->n_batches && !found; i++)
    if (c[i] == c[i - 1]) {
      *dup = c[i];
      found = 1;
    }
  free(c);
  return found;
}

/* A batch given twice is refused. */
static int
check_batches(const ooc_sweep_grid *g, const char *opt, ooc_err *err)
{
  int64_t dup = 0;
  int r = batch_repeat(g, &dup);

  if (r < 0)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  if (r > 0)
    return ooc_err_set(err, OOC_EINVAL, "%s: batch %" PRId64 " given twice",
                       opt, dup);
  return OOC_OK;
}

/* The index of a string given twice in v (its second place), or -1. */
static int
strv_repeat(char *const *v, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(v[i], v[j]) == 0)
        return i;
  return -1;
}

int
ooc_sweep_grid_repeat(const ooc_sweep_grid *g, const char **field,
                      char *what, size_t n)
{
  const struct { const char *key; char *const *v; int n; } axes[] = {
    { "hw", g->hw, g->n_hw },
    { g->precision ? "precision" : "dtype", g->dtypes, g->n_dtypes },
    { "optimizer", g->optimizers, g->n_optimizers },
    { "allocator", g->allocators, g->n_allocators },
    { "budget", g->budgets, g->n_budgets },
    { "planner", g->planners, g->n_planners },
  };
  int64_t dup = 0;
  int i, k;

  for (i = 0; i < (int)(sizeof axes / sizeof *axes); i++)
    if ((k = strv_repeat(axes[i].v, axes[i].n)) >= 0) {
      *field = axes[i].key;
      snprintf(what, n, "'%s' given twice", axes[i].v[k]);
      return 1;
    }
  for (i = 0; i < g->n_hwsets; i++) {
    for (k = 0; k < i; k++)
      if (strcmp(g->hwsets[i].name, g->hwsets[k].name) == 0) {
        *field = "hw_set";
        snprintf(what, n, "key '%s' given twice", g->hwsets[i].name);
        return 1;
      }
    if ((k = strv_repeat(g->hwsets[i].values, g->hwsets[i].n_values)) >= 0) {
      *field = "hw_set";
      snprintf(what, n, "%s: '%s' given twice", g->hwsets[i].name,
               g->hwsets[i].values[k]);
      return 1;
    }
  }
  if ((k = batch_repeat(g, &dup)) > 0) {
    *field = "batch";
    snprintf(what, n, "%" PRId64 " given twice", dup);
  }
  return k;
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
  return ooc_sweep_parse_batches_as(g, spec, "-b", err);
}

int
ooc_sweep_parse_batches_as(ooc_sweep_grid *g, const char *spec,
                           const char *opt, ooc_err *err)
{
  char **items = NULL;
  int n = 0, i, rc, cap = g->n_batches;
  char what[64];

  if (strchr(spec, ':')) {
    char **r = NULL;
    int nr = 0;
    int64_t a, b, step = 1;
    rc = ooc_strv_split(spec, ':', opt, &r, &nr, err);
    if (rc || nr < 2 || nr > 3) {
      ooc_strv_free(r, nr);
      return ooc_err_set(err, OOC_EINVAL, "%s '%s': a range is A:B or "
                         "A:B:STEP", opt, spec);
    }
    snprintf(what, sizeof what, "%s range start", opt);
    rc = ooc_parse_int(r[0], what, &a, err);
    snprintf(what, sizeof what, "%s range end", opt);
    if (!rc)
      rc = ooc_parse_int(r[1], what, &b, err);
    snprintf(what, sizeof what, "%s range step", opt);
    if (!rc && nr == 3)
      rc = ooc_parse_int(r[2], what, &step, err);
    ooc_strv_free(r, nr);
    if (rc)
      return rc;
    if (a < 1)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s '%s': batch sizes start at 1", opt, spec);
    if (b < a)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s '%s': range end %" PRId64
                         " is below its start %" PRId64, opt, spec, b, a);
    if (step < 1)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s '%s': range step must be >= 1", opt, spec);
    if ((b - a) / step >= 100000)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s '%s': more than 100000 batch sizes", opt, spec);
    /* Count the sizes rather than step past b: a + step may overflow. */
    for (int64_t k = 0; k <= (b - a) / step; k++)
      if ((rc = push_batch(g, a + k * step, &cap, err)))
        return rc;
    return check_batches(g, opt, err);
  }
  if ((rc = ooc_strv_split(spec, ',', opt, &items, &n, err)))
    return rc;
  for (i = 0; i < n; i++) {
    int64_t b;
    snprintf(what, sizeof what, "%s '%s'", opt, spec);
    if ((rc = ooc_parse_int(items[i], what, &b, err)))
      goto out;
    if (b < 1) {
      rc = ooc_err_set(err, OOC_EINVAL, "%s '%s': batch sizes start at 1",
                       opt, spec);
      goto out;
    }
    if ((rc = push_batch(g, b, &cap, err)))
      goto out;
  }
  rc = check_batches(g, opt, err);
out:
  ooc_strv_free(items, n);
  return rc;
}

int
ooc_sweep_parse_hw(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, rc = ooc_strv_split(spec, ',', "--hw", &v, &n, err);
  return rc ? rc : axis_append(&g->hw, &g->n_hw, v, n, "--hw", err);
}

int
ooc_sweep_parse_allocators(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, rc = ooc_strv_split(spec, ',', "--allocator", &v, &n, err);
  return rc ? rc : axis_append(&g->allocators, &g->n_allocators, v, n,
                                 "--allocator", err);
}

int
ooc_sweep_parse_dtypes(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, i, rc = ooc_strv_split(spec, ',', "--dtype", &v, &n, err);
  ooc_dtype d;

  if (rc)
    return rc;
  if (g->precision) {
    ooc_strv_free(v, n);
    return ooc_err_set(err, OOC_EINVAL, "--dtype: the dtype axis is already "
                       "given by --precision (it sets the dtypes: give one "
                       "of them)");
  }
  for (i = 0; i < n; i++)
    if (ooc_dtype_parse(v[i], &d) != OOC_OK) {
      rc = ooc_err_set(err, OOC_EINVAL, "--dtype: unknown dtype '%s' "
                       "(fp32, fp16, bf16)", v[i]);
      ooc_strv_free(v, n);
      return rc;
    }
  return axis_append(&g->dtypes, &g->n_dtypes, v, n, "--dtype", err);
}

int
ooc_sweep_parse_precisions(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, i, rc;
  ooc_precision p;

  if (g->n_dtypes > 0 && !g->precision)
    return ooc_err_set(err, OOC_EINVAL, "--precision: the dtype axis is "
                       "already given by --dtype (--precision sets the "
                       "dtypes: give one of them)");
  if ((rc = ooc_strv_split(spec, ',', "--precision", &v, &n, err)))
    return rc;
  for (i = 0; i < n; i++)
    if (ooc_precision_parse(v[i], &p) != OOC_OK) {
      rc = ooc_err_set(err, OOC_EINVAL, "--precision: unknown precision "
                       "'%s' (fp32, tf32, amp-fp16, amp-bf16)", v[i]);
      ooc_strv_free(v, n);
      return rc;
    }
  g->precision = 1;
  return axis_append(&g->dtypes, &g->n_dtypes, v, n, "--precision", err);
}

void
ooc_sweep_point_dtype(const ooc_sweep_grid *g, int idx, ooc_dtype *dt,
                      ooc_precision *prec)
{
  *dt = OOC_FP32;
  *prec = OOC_PREC_NONE;
  if (!g->precision) {
    ooc_dtype_parse(g->dtypes[idx], dt);            /* checked when parsed */
    return;
  }
  ooc_precision_parse(g->dtypes[idx], prec);
  *dt = ooc_precision_dtype(*prec);
}

int
ooc_sweep_parse_optimizers(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v, *canon;
  int n, i, rc = ooc_strv_split(spec, ',', "--optimizer", &v, &n, err);
  ooc_optimizer o;

  if (rc)
    return rc;
  for (i = 0; i < n; i++) {
    if (ooc_optimizer_parse(v[i], &o) != OOC_OK) {
      rc = ooc_err_set(err, OOC_EINVAL, "--optimizer: unknown optimizer "
                       "'%s' (sgd, momentum, adam)", v[i]);
      ooc_strv_free(v, n);
      return rc;
    }
    if (!(canon = strdup(ooc_optimizer_name(o)))) {
      ooc_strv_free(v, n);
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    }
    free(v[i]);
    v[i] = canon;
  }
  return axis_append(&g->optimizers, &g->n_optimizers, v, n, "--optimizer",
                     err);
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
        ooc_strv_free(v, n);
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      }
    return axis_append(&g->planners, &g->n_planners, v, n, "-p", err);
  }
  rc = ooc_strv_split(spec, ',', "-p", &v, &n, err);
  return rc ? rc : axis_append(&g->planners, &g->n_planners, v, n, "-p",
                               err);
}

int
ooc_sweep_parse_budgets(ooc_sweep_grid *g, const char *spec, ooc_err *err)
{
  char **v;
  int n, i, rc = ooc_strv_split(spec, ',', "--budget", &v, &n, err);
  uint64_t *nb;

  if (rc)
    return rc;
  nb = realloc(g->budget_bytes, (size_t)(g->n_budgets + n) * sizeof *nb);
  if (!nb) {
    ooc_strv_free(v, n);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  g->budget_bytes = nb;
  for (i = 0; i < n; i++) {
    uint64_t b = 0;
    if (strcmp(v[i], "default") != 0 &&
        (rc = ooc_parse_budget(v[i], &b, err))) {
      ooc_strv_free(v, n);
      return rc;
    }
    /* The same bytes spelt another way (16GiB, 17179869184) repeat rows
     * too; the same spelling is axis_append's to report. */
    for (int j = 0; b != 0 && j < g->n_budgets + i; j++) {
      const char *o = j < g->n_budgets ? g->budgets[j] : v[j - g->n_budgets];
      if (nb[j] == b && strcmp(o, v[i]) != 0) {
        rc = ooc_err_set(err, OOC_EINVAL, "--budget: '%s' given twice (as "
                         "'%s')", v[i], o);
        ooc_strv_free(v, n);
        return rc;
      }
    }
    nb[g->n_budgets + i] = b;
  }
  return axis_append(&g->budgets, &g->n_budgets, v, n, "--budget", err);
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
  if ((rc = ooc_strv_split(hs.name, '+', "--hw-set key", &hs.keys, &hs.n_keys, err)))
    goto fail;
  if ((rc = ooc_strv_split(eq + 1, ',', "--hw-set values", &hs.values, &hs.n_values,
                  err)))
    goto fail;
  for (int i = 0; i < hs.n_values; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(hs.values[i], hs.values[j]) == 0) {
        rc = ooc_err_set(err, OOC_EINVAL, "--hw-set %s: '%s' given twice",
                         hs.name, hs.values[i]);
        goto fail;
      }
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
  ooc_strv_free(hs.keys, hs.n_keys);
  ooc_strv_free(hs.values, hs.n_values);
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
    if (g->n_hwsets > OOC_SWEEP_MAX_HWSETS || nk > 64)
      return ooc_err_set(err, OOC_EINVAL, "--hw-set: at most 32 axes and 64 "
                         "keys in all");
  }
  if (ooc_sweep_too_big(g))
    return ooc_err_set(err, OOC_EINVAL, "sweep: the grid has more than %lld "
                       "points (the product of its axes); split it into "
                       "several sweeps", (long long)OOC_SWEEP_MAX_POINTS);
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
  if (g->n_dtypes == 0)
    rc = ooc_sweep_parse_dtypes(g, ooc_dtype_name(m->dtype), err);
  ooc_model_free(m);
  if (rc)
    return rc;
  if (g->n_optimizers == 0 &&
      (rc = ooc_sweep_parse_optimizers(g, "momentum", err)))
    return rc;
  for (i = 0; i < g->n_planners; i++)
    if (!ooc_planner_find(g->planners[i], err))
      return err ? (err->code ? err->code : OOC_ENOTFOUND) : OOC_ENOTFOUND;
  for (i = 0; i < g->n_allocators; i++)
    if ((rc = ooc_scenario_check_allocator(g->allocators[i], err)) < 0)
      return ooc_err_prefix(err, rc, "--allocator: ");
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

int
ooc_sweep_too_big(const ooc_sweep_grid *g)
{
  int64_t f[7 + OOC_SWEEP_MAX_HWSETS], n = 1;
  int k = 0;

  f[k++] = g->n_hw;
  f[k++] = g->n_dtypes;
  f[k++] = g->n_optimizers;
  f[k++] = g->n_allocators;
  f[k++] = g->n_budgets;
  f[k++] = g->n_planners;
  f[k++] = g->maxbatch ? 1 : g->n_batches;
  for (int i = 0; i < g->n_hwsets && i < OOC_SWEEP_MAX_HWSETS; i++)
    f[k++] = g->hwsets[i].n_values;
  for (int i = 0; i < k; i++) {
    if (f[i] <= 1)
      continue;                 /* an axis not filled in yet counts as 1 */
    if (n > OOC_SWEEP_MAX_POINTS / f[i])
      return 1;
    n *= f[i];
  }
  return 0;                     /* the guard kept n <= the limit */
}

int64_t
ooc_sweep_npoints(const ooc_sweep_grid *g)
{
  int64_t n = (int64_t)g->n_hw * g->n_dtypes * g->n_optimizers *
              g->n_allocators * g->n_budgets * g->n_planners *
              (g->maxbatch ? 1 : g->n_batches);
  for (int i = 0; i < g->n_hwsets; i++)
    n *= g->hwsets[i].n_values;
  return n;
}

void
ooc_sweep_point_decode(const ooc_sweep_grid *g, int64_t i,
                       ooc_sweep_point *p)
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
  p->optimizer = (int)(i % g->n_optimizers);
  i /= g->n_optimizers;
  p->dtype = (int)(i % g->n_dtypes);
  i /= g->n_dtypes;
  for (int k = g->n_hwsets - 1; k >= 0; k--) {
    p->hwset[k] = (int)(i % g->hwsets[k].n_values);
    i /= g->hwsets[k].n_values;
  }
  p->hw = (int)i;
}

int
ooc_sweep_ncoords(const ooc_sweep_grid *g)
{
  /* model, set, hw, hw_set:*, allocator, budget, planner, batch,
   * precision, dtype, optimizer */
  return 8 + g->n_hwsets + (g->maxbatch ? 0 : 1) + (g->precision != 0);
}

int
ooc_sweep_point_coords(const ooc_sweep_grid *g, int64_t i, char **cells)
{
  ooc_sweep_point p;
  int k = 0;
  char buf[32];

  ooc_sweep_point_decode(g, i, &p);
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
  if (g->precision) {
    ooc_dtype dt;
    ooc_precision pr;
    ooc_sweep_point_dtype(g, p.dtype, &dt, &pr);
    cells[k++] = strdup(g->dtypes[p.dtype]);
    cells[k++] = strdup(ooc_dtype_name(dt));
  } else {
    cells[k++] = strdup(g->dtypes[p.dtype]);
  }
  cells[k++] = strdup(g->optimizers[p.optimizer]);
  for (int j = 0; j < k; j++)
    if (!cells[j])
      return OOC_ENOMEM;
  return OOC_OK;
}
