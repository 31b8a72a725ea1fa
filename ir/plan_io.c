/* ir/plan_io.c — plan.json writer and validating reader (plan_io.h,
 * docs/plan-format.md).
 *
 * One idea: the file is the program verbatim (tensor table, instructions
 * with their args and waits) plus the scenario that made it; every number
 * is an exact integer, so a round trip is byte-exact. The writer prints
 * one tensor or instruction per line (cJSON only escapes the scenario's
 * strings); the reader checks each field's type and range and rebuilds
 * the program with the builder, then runs ooc_program_validate.
 *
 * Ownership: see plan_io.h. Cost: O(file size); the reader holds the cJSON
 * tree only while converting.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir/semantics.h"
#include "ir/algo.h"
#include "ir/plan_io.h"
#include "base/util.h"

static const char *const kind_names[OOC_I_COUNT] = {
  "compute", "h2d", "d2h", "alloc", "free", "host",
};
static const char *const phase_names[OOC_PH_COUNT] = {
  "fwd", "bwd", "recomp", "update", "none",
};
static const char *const where_names[2] = { "device", "host" };

static const char *const tkind_names[OOC_T_COUNT] = {
  "param", "input", "act", "grad", "workspace", "wgrad", "optstate",
};
static const char *const dtype_names[3] = { "fp32", "fp16", "bf16" };
static const char *const optim_names[3] = { "sgd-momentum", "sgd", "adam" };

/* 2^53 - 1: every integer up to it is exact in a double, and a number
 * read as more may have been rounded from what the file says (2^53 + 1
 * reads as 2^53). */
#define MAX_EXACT 9007199254740991.0

/* --- writer ------------------------------------------------------------------ */

static cJSON *
kv_object(const ooc_kv *kv, int n)
{
  cJSON *o = cJSON_CreateObject();
  int i;

  for (i = 0; o != NULL && i < n; i++)
    if (cJSON_AddStringToObject(o, kv[i].key ? kv[i].key : "",
                                kv[i].value ? kv[i].value : "") == NULL) {
      cJSON_Delete(o);
      return NULL;
    }
  return o;
}

static cJSON *
scenario_json(const ooc_plan_file *pf)
{
  cJSON *s = cJSON_CreateObject(), *o;
  int i;

#define STR(k, v) \
  if (cJSON_AddStringToObject(s, (k), (v) ? (v) : "") == NULL) goto fail
#define NUM(k, v) \
  if (cJSON_AddNumberToObject(s, (k), (double)(v)) == NULL) goto fail
  if (s == NULL)
    return NULL;
  STR("model", pf->model);
  STR("model_path", pf->model_path);
  NUM("batch", pf->batch);
  STR("dtype", (unsigned)pf->dtype < 3 ? dtype_names[pf->dtype] : "fp32");
  if (pf->precision != OOC_PREC_NONE)
    STR("precision", ooc_precision_name(pf->precision));
  STR("optimizer", (unsigned)pf->optimizer < 3 ? optim_names[pf->optimizer]
                                                : "sgd-momentum");
  if ((o = kv_object(pf->sets, pf->n_sets)) == NULL)
    goto fail;
  cJSON_AddItemToObject(s, "set", o);
  STR("hw", pf->hw);
  if ((o = cJSON_CreateObject()) == NULL)
    goto fail;
  cJSON_AddItemToObject(s, "hw_set", o);
  for (i = 0; i < pf->n_hw_sets; i++)
    if (cJSON_AddStringToObject(o, pf->hw_sets[i].key ? pf->hw_sets[i].key : "",
                                pf->hw_sets[i].value ? pf->hw_sets[i].value
                                                     : "") == NULL)
      goto fail;
  STR("planner", pf->planner);
  if ((o = kv_object(pf->opts, pf->n_opts)) == NULL)
    goto fail;
  cJSON_AddItemToObject(s, "opts", o);
  STR("allocator", pf->allocator);
  NUM("budget_bytes", pf->budget_bytes);
  if (pf->iterations > 0)
    NUM("iterations", pf->iterations);
  if (pf->steady && cJSON_AddBoolToObject(s, "steady", 1) == NULL)
    goto fail;
  STR("note", pf->note);
#undef STR
#undef NUM
  return s;
fail:
  cJSON_Delete(s);
  return NULL;
}

int
ooc_plan_file_write(FILE *f, const ooc_plan_file *pf, ooc_err *err)
{
  const ooc_program *p = &pf->program;
  cJSON *sc;
  char *txt;
  int32_t i, k;

  if (pf->budget_bytes == 0 || pf->budget_bytes > (uint64_t)MAX_EXACT ||
      pf->batch < 0)
    return ooc_err_set(err, OOC_ERANGE, "budget or batch out of range");
  for (i = 0; i < p->n_tensors; i++)
    if (p->tensors[i].bytes > (uint64_t)MAX_EXACT)
      return ooc_err_set(err, OOC_ERANGE, "tensor %d is larger than 2^53 "
                         "bytes", i);
  sc = scenario_json(pf);
  if (sc == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  txt = cJSON_PrintUnformatted(sc);
  cJSON_Delete(sc);
  if (txt == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  fprintf(f, "{\n\"format\": \"%s\",\n\"version\": %d,\n\"scenario\": %s,\n",
          OOC_PLAN_FILE_FORMAT, OOC_PLAN_FILE_VERSION, txt);
  cJSON_free(txt);
  fprintf(f, "\"model_fingerprint\": \"%016" PRIx64 "\",\n"
             "\"n_layers\": %" PRId32 ",\n\"prologue_end\": %" PRId32 ",\n"
             "\"tensors\": [",
          p->model_fingerprint, p->n_layers, p->prologue_end);
  for (i = 0; i < p->n_tensors; i++) {
    const ooc_ptensor *t = &p->tensors[i];
    fprintf(f, "%s\n[\"%s\",%" PRId32 ",%" PRIu64 "]", i ? "," : "",
            t->kind < OOC_T_COUNT ? tkind_names[t->kind] : "?", t->layer,
            t->bytes);
  }
  fprintf(f, "\n],\n\"program\": [");
  for (i = 0; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    fprintf(f, "%s\n[\"%s\",%d,\"%s\",\"%s\",%" PRId32 ",%" PRId32 ",[",
            i ? "," : "", in->kind < OOC_I_COUNT ? kind_names[in->kind] : "?",
            in->stream, in->phase < OOC_PH_COUNT ? phase_names[in->phase] : "?",
            in->where < 2 ? where_names[in->where] : "?", in->layer,
            in->tensor);
    for (k = 0; k < in->n_args; k++) {
      int32_t a = p->args[in->arg_first + k];
      int32_t t = OOC_ARG_TENSOR(a);
      fprintf(f, "%s%" PRId32, k ? "," : "",
              (a & OOC_ARG_WRITE) ? -1 - t : t);
    }
    fputs("],[", f);
    for (k = 0; k < in->n_waits; k++)
      fprintf(f, "%s%" PRId32, k ? "," : "", p->waits[in->wait_first + k]);
    fputs("]", f);
    if (in->algo != OOC_ALGO_DEFAULT)
      fprintf(f, ",\"%s\"", ooc_algo_name((ooc_algo)in->algo));
    fputs("]", f);
  }
  fputs("\n]\n}\n", f);
  if (ferror(f))
    return ooc_err_set(err, OOC_EIO, "write error: %s", strerror(errno));
  return OOC_OK;
}

/* --- reader ------------------------------------------------------------------ */

struct ooc_plan_file_store {
  char **strs;
  int n_strs, cap_strs;
  ooc_kv *sets, *opts;
  ooc_hw_override *hw_sets;
};

typedef struct reader {
  const char *origin;
  ooc_plan_file *pf;
  struct ooc_plan_file_store *st;
  ooc_err *err;
} reader;

static int
bad(reader *R, int code, const char *field, const char *what)
{
  return ooc_err_set(R->err, code, "%s: %s: %s", R->origin, field, what);
}

/* Keep a copy of s; NULL on out of memory. */
static const char *
keep(reader *R, const char *s)
{
  struct ooc_plan_file_store *st = R->st;
  char *c;

  if (st->n_strs == st->cap_strs) {
    int cap = st->cap_strs ? 2 * st->cap_strs : 16;
    char **q = realloc(st->strs, (size_t)cap * sizeof *q);
    if (q == NULL)
      return NULL;
    st->strs = q;
    st->cap_strs = cap;
  }
  c = strdup(s);
  if (c == NULL)
    return NULL;
  st->strs[st->n_strs++] = c;
  return c;
}

static int
get_str(reader *R, const cJSON *o, const char *key, const char *field,
        const char **out)
{
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

  if (it == NULL)
    return bad(R, OOC_EPARSE, field, "missing");
  if (!cJSON_IsString(it))
    return bad(R, OOC_EPARSE, field, "must be a string");
  if ((*out = keep(R, it->valuestring)) == NULL)
    return bad(R, OOC_ENOMEM, field, "out of memory");
  return OOC_OK;
}

/* An exact integer in [lo, hi]. */
static int
as_int(reader *R, const cJSON *it, double lo, double hi, const char *field,
       int64_t *out)
{
  char msg[128];

  if (it == NULL)
    return bad(R, OOC_EPARSE, field, "missing");
  if (!cJSON_IsNumber(it))
    return bad(R, OOC_EPARSE, field, "must be an integer");
  /* A double beyond 2^53 has no fraction, and converting one outside
   * int64_t is undefined: only those within are tested for a fraction,
   * and the others are integers out of range. */
  if (isinf(it->valuedouble)) {
    /* Digits past a double's range (400 of them, or 1e999). */
    snprintf(msg, sizeof msg, "%s is out of range [%.0f, %.0f]",
             it->valuedouble > 0 ? "a number beyond 1e308"
                                 : "a number below -1e308", lo, hi);
    return bad(R, OOC_EINVAL, field, msg);
  }
  if (!isfinite(it->valuedouble) ||
      (it->valuedouble >= -MAX_EXACT && it->valuedouble <= MAX_EXACT &&
       it->valuedouble != (double)(int64_t)it->valuedouble))
    return bad(R, OOC_EPARSE, field, "must be an integer");
  if (it->valuedouble < lo || it->valuedouble > hi) {
    /* Digits up to 20 of them; beyond, an exponent (1e+300). Past
     * 2^53 - 1 the digits read may not be the file's. */
    double a = fabs(it->valuedouble);
    snprintf(msg, sizeof msg,
             a <= MAX_EXACT ? "%.0f is out of range [%.0f, %.0f]"
             : a < 1e20 ? "a number past 2^53 - 1 (read as %.0f) is out "
                          "of range [%.0f, %.0f]"
                        : "%g is out of range [%.0f, %.0f]",
             it->valuedouble, lo, hi);
    return bad(R, OOC_EINVAL, field, msg);
  }
  *out = (int64_t)it->valuedouble;
  return OOC_OK;
}

static int
name_index(reader *R, const cJSON *it, const char *const *names, int n,
           const char *field, int *out)
{
  char msg[160];
  size_t off = 0;
  int i;

  if (!cJSON_IsString(it))
    return bad(R, OOC_EPARSE, field, "must be a string");
  for (i = 0; i < n; i++)
    if (strcmp(it->valuestring, names[i]) == 0) {
      *out = i;
      return OOC_OK;
    }
  off = (size_t)snprintf(msg, sizeof msg, "unknown value '%.40s' (valid:",
                         it->valuestring);
  for (i = 0; i < n && off < sizeof msg; i++)
    off += (size_t)snprintf(msg + off, sizeof msg - off, "%s %s",
                            i ? "," : "", names[i]);
  if (off < sizeof msg)
    snprintf(msg + off, sizeof msg - off, ")");
  return bad(R, OOC_EINVAL, field, msg);
}

/* A {"key": "value"} object into a new array of 2n strings (key, value
 * copies kept by the store); the caller frees the array. */
static int
get_kv(reader *R, const cJSON *o, const char *key, const char *field,
       const char ***pairs, int *n)
{
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key), *e;
  const char **v;
  int k = 0;

  *pairs = NULL;
  *n = 0;
  if (it == NULL)
    return bad(R, OOC_EPARSE, field, "missing");
  if (!cJSON_IsObject(it))
    return bad(R, OOC_EPARSE, field, "must be an object of strings");
  *n = cJSON_GetArraySize(it);
  v = calloc((size_t)*n * 2 + 1, sizeof *v);
  if (v == NULL)
    return bad(R, OOC_ENOMEM, field, "out of memory");
  cJSON_ArrayForEach(e, it) {
    if (!cJSON_IsString(e)) {
      free(v);
      return bad(R, OOC_EPARSE, field, "values must be strings");
    }
    v[2 * k] = keep(R, e->string ? e->string : "");
    v[2 * k + 1] = keep(R, e->valuestring);
    if (v[2 * k] == NULL || v[2 * k + 1] == NULL) {
      free(v);
      return bad(R, OOC_ENOMEM, field, "out of memory");
    }
    k++;
  }
  *pairs = v;
  return OOC_OK;
}

/* Every key of object o must be one of known (NULL-terminated): else
 * "FILE: WHERE.KEY: unknown key (valid: ...)", WHERE.KEY being KEY at the
 * top level (where == NULL). O(keys x known). */
static int
known_keys(reader *R, const cJSON *o, const char *where,
           const char *const *known)
{
  const cJSON *it;
  char list[256];
  size_t off;
  int i;

  cJSON_ArrayForEach(it, o) {
    for (i = 0; known[i] != NULL; i++)
      if (strcmp(it->string, known[i]) == 0)
        break;
    if (known[i] != NULL)
      continue;
    off = 0;
    list[0] = '\0';
    for (i = 0; known[i] != NULL && off < sizeof list; i++)
      off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
                              i ? ", " : "", known[i]);
    return ooc_err_set(R->err, OOC_EPARSE, "%s: %s%s%.60s: unknown key "
                       "(valid: %s)", R->origin, where ? where : "",
                       where ? "." : "", it->string, list);
  }
  return OOC_OK;
}

static const char *const scenario_keys[] = {
  "model", "model_path", "batch", "dtype", "precision", "optimizer", "set",
  "hw", "hw_set", "planner", "opts", "allocator", "budget_bytes",
  "iterations", "steady", "note", NULL,
};
static const char *const top_keys[] = {
  "format", "version", "scenario", "model_fingerprint", "n_layers",
  "prologue_end", "tensors", "program", NULL,
};

static int
read_scenario(reader *R, const cJSON *s)
{
  ooc_plan_file *pf = R->pf;
  const char **pairs;
  const char *str;
  int64_t v;
  int rc, i, n, ix;

  if (!cJSON_IsObject(s))
    return bad(R, OOC_EPARSE, "scenario", s ? "must be an object" : "missing");
#define TRY(x) do { if ((rc = (x)) != OOC_OK) return rc; } while (0)
  TRY(known_keys(R, s, "scenario", scenario_keys));
  TRY(get_str(R, s, "model", "scenario.model", &pf->model));
  TRY(get_str(R, s, "model_path", "scenario.model_path", &pf->model_path));
  TRY(as_int(R, cJSON_GetObjectItemCaseSensitive(s, "batch"), 1, MAX_EXACT,
             "scenario.batch", &v));
  pf->batch = v;
  TRY(name_index(R, cJSON_GetObjectItemCaseSensitive(s, "dtype"), dtype_names,
                 3, "scenario.dtype", &ix));
  pf->dtype = (ooc_dtype)ix;
  pf->precision = OOC_PREC_NONE;
  {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(s, "precision");
    if (p != NULL && (!cJSON_IsString(p) ||
                      ooc_precision_parse(p->valuestring, &pf->precision)
                          != OOC_OK))
      return bad(R, OOC_EINVAL, "scenario.precision", "expected fp32, tf32, "
                 "amp-fp16 or amp-bf16");
  }
  TRY(name_index(R, cJSON_GetObjectItemCaseSensitive(s, "optimizer"),
                 optim_names, 3, "scenario.optimizer", &ix));
  pf->optimizer = (ooc_optimizer)ix;
  TRY(get_kv(R, s, "set", "scenario.set", &pairs, &n));
  R->st->sets = calloc((size_t)n + 1, sizeof *R->st->sets);
  if (R->st->sets == NULL) {
    free(pairs);
    return bad(R, OOC_ENOMEM, "scenario.set", "out of memory");
  }
  for (i = 0; i < n; i++)
    R->st->sets[i] = (ooc_kv){ .key = pairs[2 * i], .value = pairs[2 * i + 1] };
  free(pairs);
  pf->sets = R->st->sets;
  pf->n_sets = n;
  TRY(get_str(R, s, "hw", "scenario.hw", &pf->hw));
  rc = get_kv(R, s, "hw_set", "scenario.hw_set", &pairs, &n);
  if (rc == OOC_OK) {
    R->st->hw_sets = calloc((size_t)n + 1, sizeof *R->st->hw_sets);
    if (R->st->hw_sets == NULL)
      rc = bad(R, OOC_ENOMEM, "scenario.hw_set", "out of memory");
    for (i = 0; rc == OOC_OK && i < n; i++)
      R->st->hw_sets[i] = (ooc_hw_override){ .via = "scenario.hw_set",
                                             .key = pairs[2 * i],
                                             .value = pairs[2 * i + 1] };
    pf->hw_sets = R->st->hw_sets;
    pf->n_hw_sets = n;
  }
  free(pairs);
  if (rc != OOC_OK)
    return rc;
  TRY(get_str(R, s, "planner", "scenario.planner", &pf->planner));
  rc = get_kv(R, s, "opts", "scenario.opts", &pairs, &n);
  if (rc == OOC_OK) {
    R->st->opts = calloc((size_t)n + 1, sizeof *R->st->opts);
    if (R->st->opts == NULL)
      rc = bad(R, OOC_ENOMEM, "scenario.opts", "out of memory");
    for (i = 0; rc == OOC_OK && i < n; i++)
      R->st->opts[i] = (ooc_kv){ .key = pairs[2 * i], .value = pairs[2 * i + 1] };
    pf->opts = R->st->opts;
    pf->n_opts = n;
  }
  free(pairs);
  if (rc != OOC_OK)
    return rc;
  TRY(get_str(R, s, "allocator", "scenario.allocator", &pf->allocator));
  TRY(as_int(R, cJSON_GetObjectItemCaseSensitive(s, "budget_bytes"), 1,
             MAX_EXACT, "scenario.budget_bytes", &v));
  pf->budget_bytes = (uint64_t)v;
  /* How the planner simulated (absent: the defaults, as older files). */
  pf->iterations = 0;
  if (cJSON_GetObjectItemCaseSensitive(s, "iterations") != NULL) {
    TRY(as_int(R, cJSON_GetObjectItemCaseSensitive(s, "iterations"), 1, 1000,
               "scenario.iterations", &v));
    pf->iterations = (int)v;
  }
  {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "steady");
    if (st != NULL && !cJSON_IsBool(st))
      return bad(R, OOC_EPARSE, "scenario.steady", "must be true or false");
    pf->steady = cJSON_IsTrue(st);
  }
  TRY(get_str(R, s, "note", "scenario.note", &str));
  pf->note = str;
#undef TRY
  return OOC_OK;
}

/* A layer index of entry `field` (which names it: "tensors[3] layer"),
 * in [-1, n_layers): one past the file's own n_layers names that bound
 * (the field is labelled only then, not for every entry). */
static int
as_layer(reader *R, const cJSON *it, int64_t n_layers, const char *field,
         int64_t *out)
{
  char lfield[96];

  if (cJSON_IsNumber(it) && it->valuedouble >= (double)n_layers &&
      isfinite(it->valuedouble)) {
    snprintf(lfield, sizeof lfield, "%s (n_layers is %" PRId64 ")",
             field, n_layers);
    field = lfield;
  }
  return as_int(R, it, -1, (double)n_layers - 1, field, out);
}

/* Entry `field`'s element named `what` ("program[3] phase"), into buf. */
static const char *
elem(char *buf, size_t n, const char *field, const char *what)
{
  snprintf(buf, n, "%s %s", field, what);
  return buf;
}

static int
read_program(reader *R, const cJSON *root)
{
  ooc_program *p = &R->pf->program;
  const cJSON *it, *e, *x;
  char field[64], f2[96];
  int64_t v, n_layers;
  int rc, ix;
  int32_t i;
  char *end;
  unsigned long long fp;

#define TRY(x) do { if ((rc = (x)) != OOC_OK) return rc; } while (0)
  it = cJSON_GetObjectItemCaseSensitive(root, "model_fingerprint");
  if (it == NULL)
    return bad(R, OOC_EPARSE, "model_fingerprint", "missing");
  if (!cJSON_IsString(it) || it->valuestring[0] == '\0' ||
      strlen(it->valuestring) > 16)
    return bad(R, OOC_EPARSE, "model_fingerprint",
               "must be a string of 1 to 16 hex digits");
  errno = 0;
  fp = strtoull(it->valuestring, &end, 16);
  if (*end != '\0' || errno != 0)
    return bad(R, OOC_EPARSE, "model_fingerprint",
               "must be a string of 1 to 16 hex digits");
  TRY(as_int(R, cJSON_GetObjectItemCaseSensitive(root, "n_layers"), 1,
             OOC_MODEL_MAX_LAYERS, "n_layers", &n_layers));
  p->model_fingerprint = (uint64_t)fp;
  p->n_layers = (int32_t)n_layers;

  it = cJSON_GetObjectItemCaseSensitive(root, "tensors");
  if (!cJSON_IsArray(it))
    return bad(R, OOC_EPARSE, "tensors", it ? "must be an array" : "missing");
  i = 0;
  cJSON_ArrayForEach(e, it) {
    int64_t layer, bytes;
    snprintf(field, sizeof field, "tensors[%d]", i);
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 3)
      return bad(R, OOC_EPARSE, field, "must be [kind, layer, bytes]");
    TRY(name_index(R, cJSON_GetArrayItem(e, 0), tkind_names, OOC_T_COUNT,
                   elem(f2, sizeof f2, field, "kind"), &ix));
    TRY(as_layer(R, cJSON_GetArrayItem(e, 1), n_layers,
                 elem(f2, sizeof f2, field, "layer"), &layer));
    TRY(as_int(R, cJSON_GetArrayItem(e, 2), 0, MAX_EXACT,
               elem(f2, sizeof f2, field, "bytes"), &bytes));
    if (ooc_program_tensor(p, (ooc_tensor_kind)ix, (int32_t)layer,
                           (uint64_t)bytes) < 0)
      return bad(R, OOC_ENOMEM, field, "out of memory");
    i++;
  }

  it = cJSON_GetObjectItemCaseSensitive(root, "program");
  if (!cJSON_IsArray(it))
    return bad(R, OOC_EPARSE, "program", it ? "must be an array" : "missing");
  i = 0;
  cJSON_ArrayForEach(e, it) {
    int kind, phase, where;
    int64_t stream, layer, tensor;
    const cJSON *args, *waits;
    snprintf(field, sizeof field, "program[%d]", i);
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) < 8 ||
        cJSON_GetArraySize(e) > 9)
      return bad(R, OOC_EPARSE, field, "must be [kind, stream, phase, where, "
                 "layer, tensor, [args], [waits] (, algorithm)]");
    TRY(name_index(R, cJSON_GetArrayItem(e, 0), kind_names, OOC_I_COUNT,
                   elem(f2, sizeof f2, field, "kind"), &kind));
    TRY(as_int(R, cJSON_GetArrayItem(e, 1), 0, OOC_NSTREAMS - 1,
               elem(f2, sizeof f2, field, "stream"), &stream));
    TRY(name_index(R, cJSON_GetArrayItem(e, 2), phase_names, OOC_PH_COUNT,
                   elem(f2, sizeof f2, field, "phase"), &phase));
    TRY(name_index(R, cJSON_GetArrayItem(e, 3), where_names, 2,
                   elem(f2, sizeof f2, field, "where"), &where));
    TRY(as_layer(R, cJSON_GetArrayItem(e, 4), n_layers,
                 elem(f2, sizeof f2, field, "layer"), &layer));
    TRY(as_int(R, cJSON_GetArrayItem(e, 5), -1, (double)p->n_tensors - 1,
               elem(f2, sizeof f2, field, "tensor"), &tensor));
    /* A copy's or an allocation's layer is its tensor's (ir/program.h):
     * traces and timelines label the instruction by it. */
    if (kind != OOC_I_COMPUTE && kind != OOC_I_HOST && tensor >= 0 &&
        layer != p->tensors[tensor].layer) {
      char why[96];
      snprintf(why, sizeof why, "%lld is not the layer of tensor %lld (%d)",
               (long long)layer, (long long)tensor,
               (int)p->tensors[tensor].layer);
      return bad(R, OOC_EINVAL, elem(f2, sizeof f2, field, "layer"), why);
    }
    args = cJSON_GetArrayItem(e, 6);
    waits = cJSON_GetArrayItem(e, 7);
    if (!cJSON_IsArray(args))
      return bad(R, OOC_EPARSE, elem(f2, sizeof f2, field, "args"),
                 "must be an array");
    if (!cJSON_IsArray(waits))
      return bad(R, OOC_EPARSE, elem(f2, sizeof f2, field, "waits"),
                 "must be an array");
    if (ooc_program_emit(p, (ooc_instr_kind)kind, (int)stream,
                         (ooc_phase)phase, (int32_t)layer, (int32_t)tensor,
                         where) < 0)
      return bad(R, OOC_ENOMEM, field, "out of memory");
    if (cJSON_GetArraySize(e) == 9) {
      TRY(name_index(R, cJSON_GetArrayItem(e, 8), ooc_algo_names, OOC_ALGO_COUNT,
                     elem(f2, sizeof f2, field, "algorithm"), &ix));
      if (ooc_program_algo(p, ix) != OOC_OK)
        return bad(R, OOC_EINVAL, elem(f2, sizeof f2, field, "algorithm"),
                   "bad kernel algorithm");
    }
    cJSON_ArrayForEach(x, args) {
      TRY(as_int(R, x, -(double)p->n_tensors, (double)p->n_tensors - 1,
                 elem(f2, sizeof f2, field, "args"), &v));
      if (ooc_program_arg(p, (int32_t)(v < 0 ? -1 - v : v), v < 0) != OOC_OK)
        return bad(R, OOC_ENOMEM, field, "out of memory");
    }
    cJSON_ArrayForEach(x, waits) {
      TRY(as_int(R, x, 0, (double)i - 1, elem(f2, sizeof f2, field, "waits"),
                 &v));
      if (ooc_program_wait(p, (int32_t)v) != OOC_OK)
        return bad(R, OOC_ENOMEM, field, "out of memory");
    }
    i++;
  }
  TRY(as_int(R, cJSON_GetObjectItemCaseSensitive(root, "prologue_end"), 0,
             p->n_instr, "prologue_end", &v));
  p->prologue_end = (int32_t)v;
#undef TRY
  return OOC_OK;
}

/* 1 when the text ends inside a string or with brackets still open (or
 * is empty): the signature of a truncated file. */
static int
ends_open(const char *text, size_t len)
{
  size_t i;
  int depth = 0, in_str = 0, any = 0;

  for (i = 0; i < len; i++) {
    char c = text[i];
    if (in_str) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_str = 0;
      continue;
    }
    if (c == '"')
      in_str = 1;
    else if (c == '{' || c == '[')
      depth++;
    else if (c == '}' || c == ']')
      depth--;
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r')
      any = 1;
  }
  return !any || in_str || depth > 0;
}

int
ooc_plan_file_read_string(const char *text, size_t len, const char *origin,
                          ooc_plan_file *pf, ooc_err *err)
{
  reader R = { .origin = origin, .pf = pf, .err = err };
  const char *end = NULL;
  const cJSON *it;
  cJSON *root = NULL;
  int64_t v;
  int rc;

  memset(pf, 0, sizeof *pf);
  ooc_program_init(&pf->program);
  R.st = calloc(1, sizeof *R.st);
  if (R.st == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
  pf->store = R.st;
  if ((rc = ooc_json_precheck(text, len, OOC_PLAN_MAX_BYTES,
                              OOC_PLAN_MAX_DEPTH, origin, "a plan file",
                              err)) < 0)
    goto fail;
  root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (root == NULL) {
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    int line, col;
    ooc_text_pos(text, text + off, &line, &col);
    if (ends_open(text, len)) {
      ooc_text_pos(text, text + len, &line, &col);
      rc = ooc_err_set(err, OOC_EPARSE, "%s: not a complete JSON text: it "
                       "ends early at line %d (truncated file?)", origin,
                       line);
    } else {
      rc = ooc_err_set(err, OOC_EPARSE, "%s: invalid JSON at line %d, "
                       "column %d (corrupt file?)", origin, line, col);
    }
    goto fail;
  }
  {
    /* Nothing but white space may follow the JSON text. */
    size_t off = end != NULL && end >= text ? (size_t)(end - text) : len;
    while (off < len && (text[off] == ' ' || text[off] == '\n' ||
                         text[off] == '\r' || text[off] == '\t'))
      off++;
    if (off < len) {
      int line, col;
      ooc_text_pos(text, text + off, &line, &col);
      rc = ooc_err_set(err, OOC_EPARSE, "%s: more text after the JSON "
                       "object, at line %d, column %d (corrupt file?)",
                       origin, line, col);
      goto fail;
    }
  }
  if ((rc = ooc_json_strict(text, len, origin, "a plan file", err)) < 0 ||
      (rc = ooc_json_check_dups(root, origin, err)) < 0)
    goto fail;
  if (!cJSON_IsObject(root)) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: not a plan file (the top level "
                     "must be an object)", origin);
    goto fail;
  }
  it = cJSON_GetObjectItemCaseSensitive(root, "format");
  if (!cJSON_IsString(it) || strcmp(it->valuestring, OOC_PLAN_FILE_FORMAT)) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: not a plan file (field 'format' "
                     "must be \"%s\")", origin, OOC_PLAN_FILE_FORMAT);
    goto fail;
  }
  rc = as_int(&R, cJSON_GetObjectItemCaseSensitive(root, "version"), 0,
              MAX_EXACT, "version", &v);
  if (rc != OOC_OK)
    goto fail;
  if (v == 1) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: version: plan format version 1 "
                     "predates kernel algorithms and out-of-memory ALLOCs "
                     "(this oocsim reads version %d): write the plan again "
                     "with 'oocsim plan'", origin, OOC_PLAN_FILE_VERSION);
    goto fail;
  }
  if (v != OOC_PLAN_FILE_VERSION) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: version: plan format version "
                     "%" PRId64 " is not supported (this oocsim reads "
                     "version %d)", origin, v, OOC_PLAN_FILE_VERSION);
    goto fail;
  }
  rc = known_keys(&R, root, NULL, top_keys);
  if (rc == OOC_OK)
    rc = read_scenario(&R,
                       cJSON_GetObjectItemCaseSensitive(root, "scenario"));
  if (rc == OOC_OK)
    rc = read_program(&R, root);
  if (rc != OOC_OK)
    goto fail;
  cJSON_Delete(root);
  root = NULL;
  rc = ooc_program_validate(&pf->program, err);
  if (rc != OOC_OK) {
    ooc_err_prefix(err, rc, "%s: ", origin);
    goto fail;
  }
  pf->path = keep(&R, origin);
  if (pf->path == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
    goto fail;
  }
  return OOC_OK;
fail:
  cJSON_Delete(root);
  ooc_plan_file_fini(pf);
  return rc;
}

int
ooc_plan_file_read(const char *path, ooc_plan_file *pf, ooc_err *err)
{
  char *text;
  size_t len;
  int rc;

  memset(pf, 0, sizeof *pf);
  rc = ooc_read_file(path, &text, &len, err);
  if (rc != OOC_OK)
    return rc;
  rc = ooc_plan_file_read_string(text, len, path, pf, err);
  free(text);
  return rc;
}

void
ooc_plan_file_fini(ooc_plan_file *pf)
{
  struct ooc_plan_file_store *st;
  int i;

  if (pf == NULL)
    return;
  st = pf->store;
  if (st != NULL) {
    for (i = 0; i < st->n_strs; i++)
      free(st->strs[i]);
    free(st->strs);
    free(st->sets);
    free(st->opts);
    free(st->hw_sets);
    free(st);
    ooc_program_fini(&pf->program);
  }
  memset(pf, 0, sizeof *pf);
}

int
ooc_plan_file_check_model(const ooc_plan_file *pf, const ooc_model *m,
                          ooc_err *err)
{
  if (pf->program.model_fingerprint == m->fingerprint &&
      pf->program.n_layers == m->n_layers)
    return OOC_OK;
  return ooc_err_set(err, OOC_EINVAL,
                     "%s: plan was made for a different model (fingerprint "
                     "%016" PRIx64 ", %d layers; '%s' at batch %" PRId64
                     " has %016" PRIx64 ", %d layers)",
                     pf->path ? pf->path : "plan.json",
                     pf->program.model_fingerprint, pf->program.n_layers,
                     m->name ? m->name : "?", m->batch, m->fingerprint,
                     m->n_layers);
}
