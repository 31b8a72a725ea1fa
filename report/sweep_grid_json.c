/* report/sweep_grid_json.c — grid.json (sweep_grid.h): the axes of a grid
 * as JSON (cJSON), written beside every sweep's results and read back by
 * --merge to restore the grid order of shard rows.
 *
 * Ownership: the text is the caller's (free); a grid read back owns its
 * strings like any other. Cost: O(axis values).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "analysis/plansim.h"
#include "base/util.h"
#include "report/sweep_grid.h"

char *
ooc_sweep_grid_to_json(const ooc_sweep_grid *g)
{
  cJSON *o = cJSON_CreateObject(), *a;
  char *s;
  int i;

  if (!o)
    return NULL;
  cJSON_AddStringToObject(o, "model", g->model);
  cJSON_AddStringToObject(o, "set", g->set_label ? g->set_label : "");
  cJSON_AddBoolToObject(o, "maxbatch", g->maxbatch);
  /* The count the rows were simulated with: the default written as its
   * value, so that a sweep resumed or sharded with --iterations 2 and one
   * without it have the same grid. */
  cJSON_AddNumberToObject(o, "iterations", g->iterations > 0
                                               ? g->iterations
                                               : OOC_PLANSIM_ITERATIONS);
  if (g->steady)        /* absent otherwise: older sweeps still resume */
    cJSON_AddBoolToObject(o, "steady", 1);
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
  a = cJSON_AddArrayToObject(o, g->precision ? "precision" : "dtype");
  for (i = 0; i < g->n_dtypes; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(g->dtypes[i]));
  a = cJSON_AddArrayToObject(o, "optimizer");
  for (i = 0; i < g->n_optimizers; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(g->optimizers[i]));
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

/* Array key of strings into *v, *n (owned by the grid once set). */
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
    if (!cJSON_IsString(it))
      return OOC_EPARSE;
    if (!((*v)[k++] = strdup(it->valuestring)))
      return OOC_ENOMEM;
  }
  return OOC_OK;
}

int
ooc_sweep_grid_from_json(const char *text, const char *path,
                         ooc_sweep_grid *g, ooc_err *err)
{
  cJSON *o = cJSON_Parse(text), *it;
  const cJSON *m, *s, *mb, *b, *hs;
  const char *bad = NULL;       /* the field that is wrong */
  char why[96] = "", key[64];   /* key: a copy, o is freed before the
                                   message */
  int i, rc = OOC_OK;

  ooc_sweep_grid_init(g);
  if (!o || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return ooc_err_set(err, OOC_EPARSE, "%s: not a sweep grid file (not a "
                       "JSON object)", path);
  }
  /* Each key once (as in model and plan files), and only the keys it
   * writes: a grid edited by hand would otherwise be merged as the first
   * value says and copied on. */
  if ((rc = ooc_json_check_dups(o, path, err)) < 0) {
    cJSON_Delete(o);
    return rc;
  }
  {
    static const char *const keys[] = {
      "model", "set", "maxbatch", "iterations", "steady", "precision",
      "dtype", "hw", "hw_set", "optimizer", "allocator", "budget",
      "planner", "batch", NULL
    };
    cJSON_ArrayForEach(it, o) {
      for (i = 0; keys[i] != NULL && strcmp(keys[i], it->string) != 0; i++)
        ;
      if (keys[i] == NULL) {
        snprintf(key, sizeof key, "%s", it->string);
        bad = key;
        snprintf(why, sizeof why, ": unknown key");
        goto fail;
      }
    }
  }
  m = cJSON_GetObjectItemCaseSensitive(o, "model");
  s = cJSON_GetObjectItemCaseSensitive(o, "set");
  mb = cJSON_GetObjectItemCaseSensitive(o, "maxbatch");
  b = cJSON_GetObjectItemCaseSensitive(o, "batch");
  hs = cJSON_GetObjectItemCaseSensitive(o, "hw_set");
  if (!cJSON_IsString(m) || m->valuestring[0] == '\0')
    bad = "model";
  else if (!cJSON_IsString(s))
    bad = "set";
  else if (!cJSON_IsBool(mb))
    bad = "maxbatch";
  else if (!cJSON_IsArray(b))
    bad = "batch";
  else if (!cJSON_IsArray(hs))
    bad = "hw_set";
  if (bad)
    goto fail;
  if (!(g->model = strdup(m->valuestring)) ||
      !(g->set_label = strdup(s->valuestring)))
    goto oom;
  g->maxbatch = cJSON_IsTrue(mb);
  {
    /* How its rows were simulated (absent: the defaults, as written). */
    const cJSON *ni = cJSON_GetObjectItemCaseSensitive(o, "iterations");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "steady");
    double v = cJSON_IsNumber(ni) ? ni->valuedouble : 0;
    if (ni != NULL && !(cJSON_IsNumber(ni) && v >= 0 && v <= 1000 &&
                        v == (double)(int)v)) {
      bad = "iterations";
      snprintf(why, sizeof why, ": must be an integer from 1 to 1000, or "
               "0 for the default");
      goto fail;
    }
    if (st != NULL && !cJSON_IsBool(st)) {
      bad = "steady";
      snprintf(why, sizeof why, ": must be true or false");
      goto fail;
    }
    g->iterations = (int)v;
    g->steady = cJSON_IsTrue(st);
  }
  g->precision = cJSON_GetObjectItemCaseSensitive(o, "precision") != NULL;
  if (g->precision && cJSON_GetObjectItemCaseSensitive(o, "dtype") != NULL) {
    bad = "dtype";
    snprintf(why, sizeof why, ": a grid sweeps precision or dtype, not "
             "both");
    goto fail;
  }
  bad = g->precision ? "precision" : "dtype";
  if ((rc = json_strv(o, bad, &g->dtypes, &g->n_dtypes)) || g->n_dtypes == 0)
    goto fail;
  {
    /* The string axes: each a non-empty array of strings. */
    const struct { const char *key; char ***v; int *n; } axes[] = {
      { "hw", &g->hw, &g->n_hw },
      { "optimizer", &g->optimizers, &g->n_optimizers },
      { "allocator", &g->allocators, &g->n_allocators },
      { "budget", &g->budgets, &g->n_budgets },
      { "planner", &g->planners, &g->n_planners },
    };
    for (i = 0; i < (int)(sizeof axes / sizeof *axes); i++) {
      bad = axes[i].key;
      if ((rc = json_strv(o, bad, axes[i].v, axes[i].n)) || *axes[i].n == 0)
        goto fail;
    }
  }
  bad = "batch";
  g->batches = calloc((size_t)cJSON_GetArraySize(b) + 1, sizeof *g->batches);
  if (!g->batches)
    goto oom;
  cJSON_ArrayForEach(it, b) {
    double v = cJSON_IsNumber(it) ? it->valuedouble : 0;
    if (!(v >= 1 && v <= 1e12 && v == (double)(int64_t)v)) {
      char *t = cJSON_PrintUnformatted(it);
      snprintf(why, sizeof why, ": %.40s (item %d, from 0) is not an "
               "integer batch size >= 1", t != NULL ? t : "?", g->n_batches);
      cJSON_free(t);
      goto fail;
    }
    g->batches[g->n_batches++] = (int64_t)v;
  }
  if (!g->maxbatch && g->n_batches == 0)
    goto fail;
  bad = "hw_set";
  if (cJSON_GetArraySize(hs) > OOC_SWEEP_MAX_HWSETS) {
    snprintf(why, sizeof why, ": more than %d axes", OOC_SWEEP_MAX_HWSETS);
    goto fail;
  }
  g->hwsets = calloc((size_t)(cJSON_GetArraySize(hs) + 1), sizeof *g->hwsets);
  if (!g->hwsets)
    goto oom;
  cJSON_ArrayForEach(it, hs) {
    ooc_sweep_hwset *h = &g->hwsets[g->n_hwsets];
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "key");
    if (!cJSON_IsString(k))
      goto fail;
    g->n_hwsets++;
    if (!(h->name = strdup(k->valuestring)))
      goto oom;
    if ((rc = json_strv(it, "values", &h->values, &h->n_values)) ||
        h->n_values == 0)
      goto fail;
  }
  {
    /* A repeated value would only repeat rows (a sweep refuses it as it
     * parses its options; here a hand edit put it in). */
    char what[80];
    int r = ooc_sweep_grid_repeat(g, &bad, what, sizeof what);
    if (r < 0)
      goto oom;
    if (r > 0) {
      snprintf(why, sizeof why, ": %s", what);
      goto fail;
    }
  }
  bad = NULL;
  if (ooc_sweep_too_big(g)) {
    snprintf(why, sizeof why, " (more than %lld points)",
             (long long)OOC_SWEEP_MAX_POINTS);
    goto fail;
  }
  cJSON_Delete(o);
  return OOC_OK;
oom:
  cJSON_Delete(o);
  ooc_sweep_grid_fini(g);
  return ooc_err_set(err, OOC_ENOMEM, "out of memory");
fail:
  cJSON_Delete(o);
  ooc_sweep_grid_fini(g);
  if (rc == OOC_ENOMEM)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  if (bad)
    return ooc_err_set(err, OOC_EPARSE, "%s: not a sweep grid file (field "
                       "'%s'%s)", path, bad,
                       why[0] ? why : ": missing, of the wrong type or "
                                      "empty");
  return ooc_err_set(err, OOC_EPARSE, "%s: not a sweep grid file%s", path,
                     why);
}
