/* ir/model_load.c — JSON model files to ooc_model structs (model.h).
 *
 * The format is documented in models/README.md. Loading runs in two
 * passes. Pass 1 walks the JSON: it evaluates params (after --set), `let`
 * and `check`, then expands `repeat` and `if` blocks, templating names and
 * evaluating every attribute expression with the repeat variables in
 * scope; each emitted layer gets its attributes and its input references
 * (resolved at once for @prev/@in, kept as names otherwise). Pass 2
 * resolves the names through a hash table (a name defined later than its
 * user is a cycle, since layers are topological), infers every shape with
 * the op table (ir/ops.c) and sums the totals.
 *
 * Cost: O(layers + JSON size); layer names are found through an
 * open-addressing hash table, so a 10^4-layer ResNet loads in a few
 * milliseconds, and params, lets and repeat variables through the chained
 * one of ooc_expr_scope, so 2*10^5 params load in a fraction of a second.
 * Every error is one line "FILE: layer 'NAME': FIELD: what" (or
 * "FILE: FIELD: what" outside layers); nothing leaks on any path.
 *
 * This is the only file of the model module that sees cJSON.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir/expr.h"
#include "ir/model.h"
#include "base/util.h"

#define MAX_LAYERS OOC_MODEL_MAX_LAYERS
/* The work of expanding the layer list: every repeat iteration and every
 * item of a layers or in list visited, in all. 2^24 is 16 per layer at
 * OOC_MODEL_MAX_LAYERS, and a few seconds at worst (a repeat of a body
 * of ifs that emit nothing would otherwise run unbounded). */
#define MAX_WORK ((int64_t)1 << 24)
#define MAX_DIM ((int64_t)1 << 40)   /* any one dimension or width */
#define MAX_SMALL (1 << 24)          /* kernel, stride, heads, ... */

struct ref {
  int idx;        /* layer index, or -1: resolve name in pass 2 */
  size_t name;    /* pool offset of the referenced name */
};

struct ld {
  const char *origin;
  ooc_err *err;
  int64_t batch;
  ooc_dtype dt;
  ooc_optimizer opt;
  /* Word parameters ("attention": ["eager", "flash"]): the var holding
   * the chosen word's index, and the words. */
  struct wparam { int var; const cJSON *words; } *wp;
  int n_wp, cap_wp;
  /* The framework block's op rules (ooc_model fw_*). */
  int fw_index_bytes, fw_relu_in_place, fw_add_in_place;
  /* Where we are, for messages; formatted only when an error occurs. */
  enum { CTX_NONE, CTX_INDEX, CTX_NAME, CTX_LAYER, CTX_REPEAT, CTX_IF } ctx;
  int ctx_i;               /* CTX_INDEX: layer index */
  const char *ctx_s;       /* CTX_NAME: a name that outlives the error */
  size_t ctx_off;          /* CTX_LAYER, _REPEAT, _IF: pool offset */

  ooc_expr_scope sc;       /* scope stack: params, lets, repeat vars */
  int n_params;            /* the first n_params vars are the params */
  uint8_t *param_set;

  char *pool;              /* names, NUL-terminated, by offset */
  size_t pool_len, pool_cap;

  ooc_layer *L;
  size_t *name_off;
  int n, cap, cap_names;

  struct ref *refs;
  int n_refs, cap_refs;

  int32_t *ht;             /* name -> layer index; -1 empty */
  size_t ht_cap;

  int64_t work;            /* repeat iterations and list items so far
                              (bounded by MAX_WORK) */
  const cJSON **dead;      /* lists checked though not expanded (an if's
                              branch not taken, a repeat of 0): once */
  int n_dead, cap_dead;
  int in_repeat;           /* emitting a repeat's body: rep_off names it */
  size_t rep_off;
};

/* ---- errors -------------------------------------------------------------- */

static int
ferr(struct ld *ld, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
ctx_fmt(const struct ld *ld, char *buf, size_t n)
{
  switch (ld->ctx) {
  case CTX_INDEX: snprintf(buf, n, "layer #%d: ", ld->ctx_i); break;
  case CTX_NAME: snprintf(buf, n, "layer '%.120s': ", ld->ctx_s); break;
  case CTX_LAYER:
    snprintf(buf, n, "layer '%.120s': ", ld->pool + ld->ctx_off);
    break;
  case CTX_REPEAT:
    snprintf(buf, n, "repeat after layer '%.120s': ", ld->pool + ld->ctx_off);
    break;
  case CTX_IF:
    snprintf(buf, n, "if after layer '%.120s': ", ld->pool + ld->ctx_off);
    break;
  case CTX_NONE:
  default: buf[0] = '\0'; break;
  }
}

/* "ORIGIN: CTX: FIELD: message" (CTX and FIELD when set). */
static int
ferr(struct ld *ld, int code, const char *field, const char *fmt, ...)
{
  char msg[OOC_ERR_MSG_MAX], ctx[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ctx_fmt(ld, ctx, sizeof ctx);
  return ooc_err_set(ld->err, code, "%s: %s%s%s%s", ld->origin, ctx,
                     field ? field : "", field ? ": " : "", msg);
}

/* Prefix an error already in ld->err (from expr or infer). */
static int
fprefix(struct ld *ld, int code, const char *field)
{
  char ctx[300];
  if (ld->err == NULL)
    return code;
  ld->err->code = code;
  ctx_fmt(ld, ctx, sizeof ctx);
  return ooc_err_prefix(ld->err, code, "%s: %s%s%s", ld->origin, ctx,
                        field ? field : "", field ? ": " : "");
}

static int
nomem(struct ld *ld)
{
  return ooc_err_set(ld->err, OOC_ENOMEM, "%s: out of memory", ld->origin);
}

static int
grow(struct ld *ld, void **p, int *cap, int need, size_t elsz)
{
  int ncap;
  void *np;
  if (need <= *cap)
    return OOC_OK;
  ncap = *cap ? *cap : 64;
  while (ncap < need)
    ncap *= 2;
  np = realloc(*p, (size_t)ncap * elsz);
  if (np == NULL)
    return nomem(ld);
  *p = np;
  *cap = ncap;
  return OOC_OK;
}

/* ---- string pool and name table ------------------------------------------ */

static int
pool_add(struct ld *ld, const char *s, size_t len, size_t *off)
{
  if (ld->pool_len + len + 1 > ld->pool_cap) {
    size_t nc = ld->pool_cap ? ld->pool_cap : 4096;
    char *np;
    while (nc < ld->pool_len + len + 1)
      nc *= 2;
    np = realloc(ld->pool, nc);
    if (np == NULL)
      return nomem(ld);
    ld->pool = np;
    ld->pool_cap = nc;
  }
  memcpy(ld->pool + ld->pool_len, s, len);
  ld->pool[ld->pool_len + len] = '\0';
  *off = ld->pool_len;
  ld->pool_len += len + 1;
  return OOC_OK;
}

static uint64_t
name_hash(const char *s)
{
  return ooc_hash64(s, strlen(s), OOC_HASH_SEED);
}

static const char *
lname(const struct ld *ld, int i)
{
  return ld->pool + ld->name_off[i];
}

static int
ht_find(const struct ld *ld, const char *name)
{
  size_t mask = ld->ht_cap - 1, h = (size_t)name_hash(name) & mask;
  while (ld->ht[h] >= 0) {
    if (strcmp(lname(ld, ld->ht[h]), name) == 0)
      return ld->ht[h];
    h = (h + 1) & mask;
  }
  return -1;
}

static void
ht_put(struct ld *ld, int idx)
{
  size_t mask = ld->ht_cap - 1,
         h = (size_t)name_hash(lname(ld, idx)) & mask;
  while (ld->ht[h] >= 0)
    h = (h + 1) & mask;
  ld->ht[h] = idx;
}

/* Make room for one more name (load factor <= 1/2). */
static int
ht_reserve(struct ld *ld, int n)
{
  size_t cap = ld->ht_cap ? ld->ht_cap : 256, i;
  int32_t *nt;
  if ((size_t)n * 2 <= ld->ht_cap)
    return OOC_OK;
  while ((size_t)n * 2 > cap)
    cap *= 2;
  nt = malloc(cap * sizeof *nt);
  if (nt == NULL)
    return nomem(ld);
  for (i = 0; i < cap; i++)
    nt[i] = -1;
  free(ld->ht);
  ld->ht = nt;
  ld->ht_cap = cap;
  for (i = 0; i < (size_t)ld->n; i++)
    ht_put(ld, (int)i);
  return OOC_OK;
}

/* ---- values -------------------------------------------------------------- */

static int
push_var(struct ld *ld, const char *name, ooc_value v)
{
  return ooc_expr_scope_push(&ld->sc, name, v) ? nomem(ld) : OOC_OK;
}

static int
valid_ident(const char *s)
{
  if (!isalpha((unsigned char)*s) && *s != '_')
    return 0;
  for (s++; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return 0;
  return 1;
}

/* A number, an expression string or a boolean. */
static int
eval_item(struct ld *ld, const cJSON *it, const char *field, ooc_value *out)
{
  int rc;
  if (cJSON_IsNumber(it)) {
    if (!isfinite(it->valuedouble))
      return ferr(ld, OOC_ERANGE, field, "number out of range");
    *out = ooc_value_from_number(it->valuedouble);
    return OOC_OK;
  }
  if (cJSON_IsBool(it)) {
    *out = ooc_value_int(cJSON_IsTrue(it) ? 1 : 0);
    return OOC_OK;
  }
  if (cJSON_IsString(it)) {
    rc = ooc_expr_eval_scope(it->valuestring, &ld->sc, out, ld->err);
    return rc ? fprefix(ld, rc, field) : OOC_OK;
  }
  return ferr(ld, OOC_EINVAL, field,
              "expected a number or an expression string");
}

static void
value_str(ooc_value v, char *buf, size_t n)
{
  if (v.is_int)
    snprintf(buf, n, "%lld", (long long)v.i);
  else
    snprintf(buf, n, "%g", v.d);
}

/* An integer in [lo, hi]. */
static int
int_item(struct ld *ld, const cJSON *it, const char *field, int64_t lo,
         int64_t hi, int64_t *out)
{
  ooc_value v;
  char s[64];
  int rc = eval_item(ld, it, field, &v);
  if (rc)
    return rc;
  value_str(v, s, sizeof s);
  if (!v.is_int) {
    if (v.d != floor(v.d) || fabs(v.d) > 9e18)
      return ferr(ld, v.d == floor(v.d) ? OOC_ERANGE : OOC_EINVAL, field,
                  v.d == floor(v.d) ? "%s is out of range (at most %lld)"
                                    : "%s is not an integer",
                  s, (long long)hi);
    v = ooc_value_int((int64_t)v.d);
  }
  if (v.i < lo)
    return ferr(ld, OOC_EINVAL, field, "%s must be at least %lld", s,
                (long long)lo);
  if (v.i > hi)
    return ferr(ld, OOC_ERANGE, field, "%s is out of range (at most %lld)",
                s, (long long)hi);
  *out = v.i;
  return OOC_OK;
}

/* Expand "{expr}" templates in a name. */
/* The chosen word when name is a word parameter in scope (not shadowed
 * by a repeat variable), else NULL. */
static const char *
word_of(const struct ld *ld, const char *name)
{
  int i = ooc_expr_scope_find(&ld->sc, name, strlen(name));
  int lo = 0, hi = ld->n_wp;

  /* wp is in the order of its variables: a binary search. */
  while (i >= 0 && lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (ld->wp[mid].var == i)
      return cJSON_GetArrayItem(ld->wp[mid].words,
                                (int)ld->sc.vars[i].v.i)->valuestring;
    if (ld->wp[mid].var < i)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static int
template_name(struct ld *ld, const char *src, const char *field, char *out,
              size_t n)
{
  size_t o = 0;
  const char *p = src;
  int over = 0;         /* a byte did not fit */
  while (*p) {
    if (*p == '{') {
      const char *q = strchr(p, '}');
      char ex[256], num[32];
      ooc_value v;
      int rc;
      size_t k;
      if (q == NULL || (size_t)(q - p - 1) >= sizeof ex)
        return ferr(ld, OOC_EINVAL, field, "'%s': unbalanced '{' in name",
                    src);
      memcpy(ex, p + 1, (size_t)(q - p - 1));
      ex[q - p - 1] = '\0';
      {
        const char *w = word_of(ld, ex);
        if (w != NULL) {
          for (k = 0; w[k]; k++)
            if (o + 1 < n)
              out[o++] = w[k];
          p = q + 1;
          continue;
        }
      }
      rc = ooc_expr_eval_scope(ex, &ld->sc, &v, ld->err);
      if (rc)
        return fprefix(ld, rc, field);
      if (!v.is_int && v.d == floor(v.d) && fabs(v.d) < 9e18)
        v = ooc_value_int((int64_t)v.d);
      if (!v.is_int)
        return ferr(ld, OOC_EINVAL, field,
                    "'%s': {%s} is not an integer", src, ex);
      snprintf(num, sizeof num, "%lld", (long long)v.i);
      for (k = 0; num[k]; k++)
        if (o + 1 < n)
          out[o++] = num[k];
        else
          over = 1;
      p = q + 1;
    } else if (*p == '}') {
      return ferr(ld, OOC_EINVAL, field, "'%s': unbalanced '}' in name", src);
    } else {
      if (o + 1 < n)
        out[o++] = *p;
      else
        over = 1;
      p++;
    }
  }
  if (over)
    return ferr(ld, OOC_EINVAL, field,
                "'%.40s...' is too long (at most %zu bytes)", src, n - 1);
  out[o] = '\0';
  if (o == 0)
    return ferr(ld, OOC_EINVAL, field, "empty name");
  return OOC_OK;
}

/* ---- attributes ---------------------------------------------------------- */

enum attr_id {
  A_OUT, A_KERNEL, A_STRIDE, A_PAD, A_DILATION, A_OUT_PAD, A_GROUPS, A_BIAS,
  A_IN_PLACE, A_AXIS, A_CEIL, A_SCALE, A_HEADS, A_CAUSAL, A_VOCAB,
  A_POSITIONS, A_TIED, A_TB, A_SIZE, A_P, A_ACT, A_MODE, A_SHAPE, A_IMPL, A_KV_HEADS, A_HEAD_DIM, A_ROTATE, A_PREPEND, A_TYPES,
  A_START, A_LENGTH, A_COUNT
};

static const char *const attr_names[A_COUNT] = {
  [A_OUT] = "out", [A_KERNEL] = "kernel", [A_STRIDE] = "stride",
  [A_PAD] = "pad", [A_DILATION] = "dilation", [A_OUT_PAD] = "out_pad",
  [A_GROUPS] = "groups", [A_BIAS] = "bias", [A_IN_PLACE] = "in_place",
  [A_AXIS] = "axis", [A_CEIL] = "ceil_mode", [A_SCALE] = "scale",
  [A_HEADS] = "heads", [A_CAUSAL] = "causal", [A_VOCAB] = "vocab",
  [A_POSITIONS] = "positions", [A_TIED] = "tied", [A_TB] = "transpose_b",
  [A_SIZE] = "size", [A_P] = "p", [A_ACT] = "act", [A_MODE] = "mode", [A_IMPL] = "impl",
  [A_KV_HEADS] = "kv_heads", [A_HEAD_DIM] = "head_dim", [A_ROTATE] = "rotate",
  [A_PREPEND] = "prepend", [A_TYPES] = "types", [A_START] = "start",
  [A_LENGTH] = "length",
  [A_SHAPE] = "shape",
};

/* Is `word` one of the space-separated words in `list`? */
static int
in_list(const char *list, const char *word)
{
  size_t n = strlen(word);
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ' ');
    size_t k = e ? (size_t)(e - p) : strlen(p);
    if (k == n && strncmp(p, word, n) == 0)
      return 1;
    if (e == NULL)
      break;
    p = e + 1;
  }
  return 0;
}

static int
spatial_item(struct ld *ld, const cJSON *it, const char *field, int64_t lo,
             int v[3], int *n_given)
{
  int64_t x;
  int rc, k, n;
  if (cJSON_IsArray(it)) {
    n = cJSON_GetArraySize(it);
    if (n != 2 && n != 3)
      return ferr(ld, OOC_EINVAL, field,
                  "expected a number or a list of 2 or 3, got %d values", n);
    for (k = 0; k < n; k++) {
      if ((rc = int_item(ld, cJSON_GetArrayItem(it, k), field, lo, MAX_SMALL,
                         &x)))
        return rc;
      v[k] = (int)x;
    }
    if (n == 2)
      v[2] = v[1];
    *n_given = n;
    return OOC_OK;
  }
  if ((rc = int_item(ld, it, field, lo, MAX_SMALL, &x)))
    return rc;
  v[0] = v[1] = v[2] = (int)x;
  *n_given = 0;
  return OOC_OK;
}

static int
str_item(struct ld *ld, const cJSON *it, const char *field, char *out,
         size_t n)
{
  if (!cJSON_IsString(it))
    return ferr(ld, OOC_EINVAL, field, "expected a string");
  if (strlen(it->valuestring) >= n)
    return ferr(ld, OOC_EINVAL, field,
                "'%.40s...' is too long (at most %zu characters)",
                it->valuestring, n - 1);
  strcpy(out, it->valuestring);
  return OOC_OK;
}

static int
parse_attr(struct ld *ld, ooc_attrs *a, enum attr_id id, const cJSON *it)
{
  const char *f = attr_names[id];
  int64_t x;
  ooc_value v;
  int rc = OOC_OK, k;

  switch (id) {
  case A_OUT:
    rc = int_item(ld, it, f, 1, MAX_DIM, &a->out);
    break;
  case A_VOCAB:
    rc = int_item(ld, it, f, 1, MAX_DIM, &a->vocab);
    break;
  case A_POSITIONS:
    rc = int_item(ld, it, f, 0, MAX_DIM, &a->positions);
    break;
  case A_ROTATE:
    rc = int_item(ld, it, f, 0, MAX_DIM, &a->rotate);
    break;
  case A_PREPEND:
    rc = int_item(ld, it, f, 0, MAX_DIM, &a->prepend);
    break;
  case A_TYPES:
    rc = int_item(ld, it, f, 0, MAX_DIM, &a->types);
    break;
  case A_START:
    rc = int_item(ld, it, f, 0, MAX_DIM, &a->start);
    break;
  case A_LENGTH:
    rc = int_item(ld, it, f, 1, MAX_DIM, &a->length);
    break;
  case A_KV_HEADS:
  case A_HEAD_DIM:
    if ((rc = int_item(ld, it, f, 1, MAX_SMALL, &x)))
      break;
    if (id == A_KV_HEADS) a->kv_heads = (int)x;
    else a->head_dim = (int)x;
    break;
  case A_KERNEL:
    rc = spatial_item(ld, it, f, 1, a->kernel, &a->spatial_n[0]);
    break;
  case A_STRIDE:
    rc = spatial_item(ld, it, f, 1, a->stride, &a->spatial_n[1]);
    break;
  case A_PAD:
    rc = spatial_item(ld, it, f, 0, a->pad, &a->spatial_n[2]);
    break;
  case A_DILATION:
    rc = spatial_item(ld, it, f, 1, a->dilation, &a->spatial_n[3]);
    break;
  case A_OUT_PAD:
    rc = spatial_item(ld, it, f, 0, a->out_pad, &a->spatial_n[4]);
    break;
  case A_GROUPS:
  case A_SCALE:
  case A_HEADS:
  case A_SIZE:
    if ((rc = int_item(ld, it, f, 1, MAX_SMALL, &x)))
      break;
    if (id == A_GROUPS) a->groups = (int)x;
    else if (id == A_SCALE) a->scale = (int)x;
    else if (id == A_HEADS) a->heads = (int)x;
    else a->lrn_size = (int)x;
    break;
  case A_AXIS:
    if ((rc = int_item(ld, it, f, -OOC_MAX_DIMS, OOC_MAX_DIMS - 1, &x)))
      break;
    a->axis = (int)x;
    break;
  case A_BIAS:
  case A_IN_PLACE:
  case A_CEIL:
  case A_CAUSAL:
  case A_TIED:
  case A_TB:
    if ((rc = eval_item(ld, it, f, &v)))
      break;
    k = v.is_int ? v.i != 0 : v.d != 0;
    if (id == A_BIAS) a->bias = k;
    else if (id == A_IN_PLACE) { a->in_place = k; a->in_place_set = 1; }
    else if (id == A_CEIL) a->ceil_mode = k;
    else if (id == A_CAUSAL) a->causal = k;
    else if (id == A_TIED) a->tied = k;
    else a->transpose_b = k;
    break;
  case A_P:
    if ((rc = eval_item(ld, it, f, &v)))
      break;
    if (!(v.d >= 0 && v.d < 1))
      return ferr(ld, OOC_EINVAL, f, "%g must be in [0, 1)", v.d);
    a->p = v.d;
    break;
  case A_ACT:
    rc = str_item(ld, it, f, a->act, sizeof a->act);
    break;
  case A_IMPL: {
    char w[64];
    if (!cJSON_IsString(it))
      return ferr(ld, OOC_EINVAL, f, "expected a string");
    if ((rc = template_name(ld, it->valuestring, f, w, sizeof w)))
      break;
    if (strcmp(w, "eager") == 0)
      a->flash = 0;
    else if (strcmp(w, "flash") == 0)
      a->flash = 1;
    else
      return ferr(ld, OOC_EINVAL, f, "unknown implementation '%s' (use "
                  "eager or flash)", w);
    break;
  }
  case A_MODE:
    if ((rc = str_item(ld, it, f, a->mode, sizeof a->mode)))
      break;
    if (strcmp(a->mode, "nearest") != 0 && strcmp(a->mode, "bilinear") != 0)
      return ferr(ld, OOC_EINVAL, f,
                  "unknown mode '%s' (use nearest or bilinear)", a->mode);
    break;
  case A_SHAPE: {
    int n, wild = 0;
    if (!cJSON_IsArray(it) || (n = cJSON_GetArraySize(it)) < 1 ||
        n > OOC_MAX_DIMS)
      return ferr(ld, OOC_EINVAL, f, "expected a list of 1 to %d dims",
                  OOC_MAX_DIMS);
    for (k = 0; k < n; k++) {
      if ((rc = int_item(ld, cJSON_GetArrayItem(it, k), f, -1, MAX_DIM, &x)))
        return rc;
      if (x == 0)
        return ferr(ld, OOC_EINVAL, f, "dim %d is 0", k);
      if (x == -1 && wild++)
        return ferr(ld, OOC_EINVAL, f, "more than one -1");
      a->shape[k] = x;
    }
    a->ndim = n;
    break;
  }
  default:
    break;
  }
  return rc;
}

/* ---- pass 1: emit layers ------------------------------------------------- */

static int emit_list(struct ld *ld, const cJSON *arr, int block_in);
static int check_dead(struct ld *ld, const cJSON *arr, const char *where);

static int
add_ref(struct ld *ld, int idx, size_t name)
{
  int rc = grow(ld, (void **)&ld->refs, &ld->cap_refs, ld->n_refs + 1,
                sizeof *ld->refs);
  if (rc)
    return rc;
  ld->refs[ld->n_refs].idx = idx;
  ld->refs[ld->n_refs].name = name;
  ld->n_refs++;
  return OOC_OK;
}

static int parse_ref(struct ld *ld, const cJSON *it, int block_in);

/* The expansion went past MAX_WORK. */
static int
too_much(struct ld *ld, const char *field)
{
  return ferr(ld, OOC_ERANGE, field, "the layer list expands too far: more "
              "than %lld repeat iterations and list items in all",
              (long long)MAX_WORK);
}

/* A name, a list, or a generator object (parse_ref) under "in". */
static int
parse_refs(struct ld *ld, const cJSON *v, int block_in)
{
  const cJSON *it;
  int rc = OOC_OK;
  if (!cJSON_IsArray(v))
    return parse_ref(ld, v, block_in);
  cJSON_ArrayForEach(it, v) {
    if (++ld->work > MAX_WORK)
      return too_much(ld, "in");
    if ((rc = parse_ref(ld, it, block_in)))
      break;
  }
  return rc;
}

/* Generator objects in an input list, for layers that read a run of
 * earlier layers (a DenseNet layer concatenating every earlier feature
 * map):
 *   { "repeat": EXPR, "var": "t", "in": REFS }  REFS once per t = 0..
 *   { "if": EXPR, "in": REFS, "else": REFS }    REFS or the else REFS
 * REFS is a name, a list or another generator object. */
static int
parse_ref_gen(struct ld *ld, const cJSON *obj, int block_in)
{
  const cJSON *rep = cJSON_GetObjectItemCaseSensitive(obj, "repeat");
  const cJSON *cond = cJSON_GetObjectItemCaseSensitive(obj, "if");
  const cJSON *var = cJSON_GetObjectItemCaseSensitive(obj, "var");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(obj, "in");
  const cJSON *no = cJSON_GetObjectItemCaseSensitive(obj, "else");
  const char *valid = rep ? "repeat, var, in" : "if, in, else";
  const cJSON *it;
  int64_t n, i;
  int rc;

  if ((rep == NULL) == (cond == NULL))
    return ferr(ld, OOC_EINVAL, "in", "an object in 'in' needs either "
                "\"repeat\" or \"if\"");
  cJSON_ArrayForEach(it, obj)
    if (it->string[0] != '_' && !in_list(rep ? "repeat var in" : "if in else",
                                         it->string))
      return ferr(ld, OOC_EINVAL, "in", "'%s' is not a field of an input "
                  "generator (valid: %s)", it->string, valid);
  if (in == NULL)
    return ferr(ld, OOC_EINVAL, "in", "an input generator needs \"in\"");
  if (cond != NULL) {
    ooc_value v;
    if ((rc = eval_item(ld, cond, "in", &v)))
      return rc;
    if (v.is_int ? v.i != 0 : v.d != 0)
      return parse_refs(ld, in, block_in);
    return no ? parse_refs(ld, no, block_in) : OOC_OK;
  }
  if (var != NULL && (!cJSON_IsString(var) || !valid_ident(var->valuestring)))
    return ferr(ld, OOC_EINVAL, "in", "var: expected a name");
  if ((rc = int_item(ld, rep, "in", 0, MAX_LAYERS, &n)))
    return rc;
  for (i = 0; i < n; i++) {
    int saved = ld->sc.n;
    if (++ld->work > MAX_WORK)
      return too_much(ld, "in");
    if (var != NULL &&
        (rc = push_var(ld, var->valuestring, ooc_value_int(i))))
      return rc;
    rc = parse_refs(ld, in, block_in);
    ooc_expr_scope_pop_to(&ld->sc, saved);
    if (rc)
      return rc;
  }
  return OOC_OK;
}

static int
parse_ref(struct ld *ld, const cJSON *it, int block_in)
{
  char name[256];
  size_t off;
  int rc;
  if (cJSON_IsObject(it))
    return parse_ref_gen(ld, it, block_in);
  if (!cJSON_IsString(it))
    return ferr(ld, OOC_EINVAL, "in", "expected a layer name or a list of "
                                      "names");
  if (strcmp(it->valuestring, "@prev") == 0)
    return add_ref(ld, ld->n - 1, 0);
  if (strcmp(it->valuestring, "@in") == 0) {
    if (block_in < 0)
      return ferr(ld, OOC_EINVAL, "in",
                  "'@in' is only defined inside a repeat or if block");
    return add_ref(ld, block_in, 0);
  }
  if ((rc = template_name(ld, it->valuestring, "in", name, sizeof name)))
    return rc;
  if ((rc = pool_add(ld, name, strlen(name), &off)))
    return rc;
  return add_ref(ld, -1, off);
}

static int
emit_layer(struct ld *ld, const cJSON *obj, int block_in)
{
  const cJSON *op_it = cJSON_GetObjectItemCaseSensitive(obj, "op");
  const cJSON *name_it = cJSON_GetObjectItemCaseSensitive(obj, "name");
  const cJSON *in_it = cJSON_GetObjectItemCaseSensitive(obj, "in");
  const cJSON *it;
  const ooc_op_type *op;
  ooc_layer *l;
  char name[256];
  uint32_t seen = 0;
  int rc, dup, idx = ld->n;

  ld->ctx = CTX_INDEX;
  ld->ctx_i = idx;
  if (name_it != NULL) {
    if (!cJSON_IsString(name_it))
      return ferr(ld, OOC_EINVAL, "name", "expected a string");
    ld->ctx = CTX_NAME;
    ld->ctx_s = name_it->valuestring;
    if ((rc = template_name(ld, name_it->valuestring, "name", name,
                            sizeof name)))
      return rc;
  } else {
    snprintf(name, sizeof name, "%.200s_%d",
             cJSON_IsString(op_it) ? op_it->valuestring : "layer", idx);
  }
  ld->ctx = CTX_NAME;
  ld->ctx_s = name;
  if (op_it == NULL)
    return ferr(ld, OOC_EINVAL, "op", "missing");
  if (!cJSON_IsString(op_it))
    return ferr(ld, OOC_EINVAL, "op", "expected a string");
  op = ooc_op_find(op_it->valuestring);
  if (op == NULL || op->kind == OOC_OPK_INPUT) {
    char list[400];
    size_t o = 0;
    int k;
    list[0] = '\0';
    for (k = 1; k < OOC_OPK_COUNT; k++)
      o += (size_t)snprintf(list + o, o < sizeof list ? sizeof list - o : 0,
                            "%s%s", k > 1 ? ", " : "", ooc_op_name(k));
    return ferr(ld, OOC_EINVAL, "op", "unknown op '%s' (valid: %s)",
                op_it->valuestring, list);
  }
  if (ld->n >= MAX_LAYERS)
    return ferr(ld, OOC_ERANGE, NULL, "more than %d layers", MAX_LAYERS);
  if ((rc = grow(ld, (void **)&ld->L, &ld->cap, ld->n + 1, sizeof *ld->L)) ||
      (rc = grow(ld, (void **)&ld->name_off, &ld->cap_names, ld->n + 1,
                 sizeof *ld->name_off)))
    return rc;
  l = &ld->L[idx];
  memset(l, 0, sizeof *l);
  l->op = op->kind;
  l->cls = op->cls;
  l->alias_of = -1;
  l->a.stride[0] = l->a.stride[1] = l->a.stride[2] = 1;
  l->a.dilation[0] = l->a.dilation[1] = l->a.dilation[2] = 1;
  l->a.groups = 1;
  l->a.bias = op->kind == OOC_OPK_LINEAR;
  l->a.scale = 2;
  l->a.lrn_size = 5;
  l->a.p = 0.5;
  if (op->kind == OOC_OPK_UPSAMPLE)
    strcpy(l->a.mode, "nearest");
  if (op->kind == OOC_OPK_TOKENS)
    l->a.prepend = 1;

  /* inputs */
  l->in_first = ld->n_refs;
  if (in_it == NULL) {
    rc = add_ref(ld, idx - 1, 0);
  } else {
    if (cJSON_IsArray(in_it) && cJSON_GetArraySize(in_it) == 0)
      return ferr(ld, OOC_EINVAL, "in", "empty list");
    rc = parse_refs(ld, in_it, block_in);
  }
  if (rc)
    return rc;
  l->n_in = ld->n_refs - l->in_first;
  if (l->n_in == 0)
    return ferr(ld, OOC_EINVAL, "in", "the input generators gave no "
                                      "inputs");

  /* attributes */
  cJSON_ArrayForEach(it, obj) {
    const char *k = it->string;
    int id;
    if (strcmp(k, "name") == 0 || strcmp(k, "op") == 0 ||
        strcmp(k, "in") == 0 || k[0] == '_')
      continue;
    if (strcmp(k, "recompute") == 0) {
      ooc_value v;
      if ((rc = eval_item(ld, it, k, &v)))
        return rc;
      l->recompute = v.is_int ? v.i != 0 : v.d != 0;
      continue;
    }
    for (id = 0; id < A_COUNT; id++)
      if (strcmp(attr_names[id], k) == 0)
        break;
    if (id == A_COUNT || !in_list(op->attrs, k))
      return ferr(ld, OOC_EINVAL, k, "not an attribute of %s (valid: %s)",
                  op->name, op->attrs[0] ? op->attrs : "none");
    if (seen & (1u << id))
      return ferr(ld, OOC_EINVAL, k, "given twice");
    seen |= 1u << id;
    if ((rc = parse_attr(ld, &l->a, (enum attr_id)id, it)))
      return rc;
  }
  {
    int id;
    for (id = 0; id < A_COUNT; id++)
      if (!(seen & (1u << id)) && in_list(op->required, attr_names[id]))
        return ferr(ld, OOC_EINVAL, attr_names[id], "missing");
  }
  if (op->kind == OOC_OPK_UPSAMPLE && l->n_in == 2) {
    /* Resize to the second input's spatial size (PyTorch's
     * interpolate(x, size=y.shape[2:])): no scale. */
    if (seen & (1u << A_SCALE))
      return ferr(ld, OOC_EINVAL, "scale", "not with a second input (the "
                  "output takes that input's spatial size)");
    l->a.scale = 0;
  }
  if ((op->kind == OOC_OPK_MAXPOOL || op->kind == OOC_OPK_AVGPOOL) &&
      !(seen & (1u << A_STRIDE))) {
    memcpy(l->a.stride, l->a.kernel, sizeof l->a.stride);
    l->a.spatial_n[1] = l->a.spatial_n[0];
  }

  /* name */
  /* JSON lets a control character in escaped ("\u001b"); info, the
   * reports and the traces would print it as it is. */
  if ((rc = ooc_control_char(name)) >= 0) {
    ld->ctx = CTX_INDEX;      /* not the name: it would reach the terminal */
    ld->ctx_i = idx;
    return ferr(ld, OOC_EINVAL, "name", "holds control character 0x%02x "
                "(names are printed as they are)", rc);
  }
  /* "in" resolves @prev and @in before names: a layer so named could
   * never be referred to. */
  if (name[0] == '@')
    return ferr(ld, OOC_EINVAL, "name", "'%s' starts with '@', which \"in\" "
                "keeps for @prev and @in", name);
  if ((rc = pool_add(ld, name, strlen(name), &ld->name_off[idx])))
    return rc;
  if ((rc = ht_reserve(ld, ld->n + 1)))
    return rc;
  dup = ht_find(ld, name);
  if (dup == 0)
    return ferr(ld, OOC_EINVAL, "name", "'input' is reserved for the "
                                        "implicit input layer");
  if (dup > 0)
    return ferr(ld, OOC_EINVAL, "name", "'%s' is not unique (also layer %d)",
                name, dup);
  ld->n++;
  ht_put(ld, idx);
  return OOC_OK;
}

static int
emit_repeat(struct ld *ld, const cJSON *obj)
{
  const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(obj, "repeat");
  const cJSON *var = cJSON_GetObjectItemCaseSensitive(obj, "var");
  const cJSON *body = cJSON_GetObjectItemCaseSensitive(obj, "layers");
  const cJSON *it;
  size_t off = ld->name_off[ld->n - 1];   /* the repeat's context */
  int64_t n, i;
  int rc;

  ld->ctx = CTX_REPEAT;
  ld->ctx_off = off;
  cJSON_ArrayForEach(it, obj)
    if (strcmp(it->string, "repeat") != 0 && strcmp(it->string, "var") != 0 &&
        strcmp(it->string, "layers") != 0 && it->string[0] != '_')
      return ferr(ld, OOC_EINVAL, it->string, "not a field of repeat (valid: "
                                              "repeat, var, layers)");
  if (var != NULL && (!cJSON_IsString(var) || !valid_ident(var->valuestring)))
    return ferr(ld, OOC_EINVAL, "var", "expected a name");
  if (!cJSON_IsArray(body))
    return ferr(ld, OOC_EINVAL, "layers", "expected a list of layers");
  if ((rc = int_item(ld, cnt, "repeat", 0, MAX_LAYERS, &n)))
    return rc;
  if (n == 0)
    return check_dead(ld, body, "layers");
  for (i = 0; i < n; i++) {
    int saved = ld->sc.n;
    if (++ld->work > MAX_WORK) {
      ld->ctx = CTX_REPEAT;     /* the body's items set it to theirs */
      ld->ctx_off = off;
      return too_much(ld, "repeat");
    }
    if (var != NULL && (rc = push_var(ld, var->valuestring,
                                      ooc_value_int(i))))
      return rc;
    {
      int was_in = ld->in_repeat;
      size_t was_off = ld->rep_off;
      ld->in_repeat = 1;
      ld->rep_off = off;
      rc = emit_list(ld, body, ld->n - 1);
      ld->in_repeat = was_in;
      ld->rep_off = was_off;
    }
    ooc_expr_scope_pop_to(&ld->sc, saved);
    if (rc)
      return rc;
  }
  return OOC_OK;
}

/* check_dead()'s message: where, what, and why it is checked at all. */
static int
dead_err(struct ld *ld, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
dead_err(struct ld *ld, const char *where, const char *fmt, ...)
{
  char msg[400];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ferr(ld, OOC_EINVAL, where, "%s (in a list these parameters do "
              "not expand)", msg);
}

/* Whether list arr was checked already; else note it (ld->dead, an open
 * addressing set of the lists' nodes, so that an if inside a repeat of
 * 10^4 costs one check, not one per iteration or per list checked). 1:
 * seen, 0: noted, or an error. */
static int
dead_seen(struct ld *ld, const cJSON *arr)
{
  size_t h, mask;
  int k;

  if (2 * (ld->n_dead + 1) > ld->cap_dead) {
    int cap = ld->cap_dead ? 2 * ld->cap_dead : 64;
    const cJSON **t = calloc((size_t)cap, sizeof *t);
    if (t == NULL)
      return nomem(ld);
    for (k = 0; k < ld->cap_dead; k++)
      if (ld->dead[k] != NULL) {
        for (h = ((uintptr_t)ld->dead[k] >> 4) * 0x9E3779B97F4A7C15ull &
                 (size_t)(cap - 1);
             t[h] != NULL; h = (h + 1) & (size_t)(cap - 1))
          ;
        t[h] = ld->dead[k];
      }
    free(ld->dead);
    ld->dead = t;
    ld->cap_dead = cap;
  }
  mask = (size_t)ld->cap_dead - 1;
  for (h = ((uintptr_t)arr >> 4) * 0x9E3779B97F4A7C15ull & mask;
       ld->dead[h] != NULL; h = (h + 1) & mask)
    if (ld->dead[h] == arr)
      return 1;
  ld->dead[h] = arr;
  ld->n_dead++;
  return 0;
}

/* A list these parameters do not expand (an if's branch not taken, a
 * repeat's body run 0 times) is checked for what holds whatever the
 * parameters: items are objects; an if's and a repeat's fields and lists;
 * a layer's op (known), name (a string), in (a name, a generator or a
 * list of them), its fields (the op's attributes, present when
 * required). Values are not evaluated: they may depend on what made the
 * branch untaken. A typo there would otherwise surface only for the
 * parameters that take it. `where` names the list ("else",
 * "layers[2].layers"); the context is the caller's (the if or repeat).
 * Each list once per file (dead_seen). */
static int
check_dead(struct ld *ld, const cJSON *arr, const char *where)
{
  const cJSON *it, *f;
  char w[200];
  int i = 0, k, rc;

  if ((rc = dead_seen(ld, arr)) != 0)
    return rc < 0 ? rc : OOC_OK;
  cJSON_ArrayForEach(it, arr) {
    const cJSON *op_it = cJSON_GetObjectItemCaseSensitive(it, "op");
    const cJSON *in_it = cJSON_GetObjectItemCaseSensitive(it, "in");
    const ooc_op_type *op;
    snprintf(w, sizeof w, "%.150s[%d]", where, i++);
    if (!cJSON_IsObject(it))
      return dead_err(ld, w, "expected an object");
    if (cJSON_GetObjectItemCaseSensitive(it, "repeat") != NULL ||
        cJSON_GetObjectItemCaseSensitive(it, "if") != NULL) {
      int rep = cJSON_GetObjectItemCaseSensitive(it, "repeat") != NULL;
      const cJSON *yes = cJSON_GetObjectItemCaseSensitive(it, "layers");
      const cJSON *no = cJSON_GetObjectItemCaseSensitive(it, "else");
      char sub[240];
      cJSON_ArrayForEach(f, it)
        if (strcmp(f->string, rep ? "repeat" : "if") != 0 &&
            strcmp(f->string, "layers") != 0 && f->string[0] != '_' &&
            strcmp(f->string, rep ? "var" : "else") != 0)
          return dead_err(ld, w, "%s: not a field of %s (valid: %s)",
                          f->string, rep ? "repeat" : "if",
                          rep ? "repeat, var, layers" : "if, layers, else");
      if (!cJSON_IsArray(yes) || (!rep && no != NULL && !cJSON_IsArray(no)))
        return dead_err(ld, w, "%s: expected a list of layers",
                        cJSON_IsArray(yes) ? "else" : "layers");
      snprintf(sub, sizeof sub, "%s.layers", w);
      if ((rc = check_dead(ld, yes, sub)))
        return rc;
      snprintf(sub, sizeof sub, "%s.else", w);
      if (no != NULL && (rc = check_dead(ld, no, sub)))
        return rc;
      continue;
    }
    if (!cJSON_IsString(op_it))
      return dead_err(ld, w, "op: %s",
                      op_it ? "expected a string" : "missing");
    op = ooc_op_find(op_it->valuestring);
    if (op == NULL || op->kind == OOC_OPK_INPUT)
      return dead_err(ld, w, "op: unknown op '%.60s'", op_it->valuestring);
    f = cJSON_GetObjectItemCaseSensitive(it, "name");
    if (f != NULL && !cJSON_IsString(f))
      return dead_err(ld, w, "name: expected a string");
    if (in_it != NULL && !cJSON_IsString(in_it) &&
        !cJSON_IsObject(in_it)) {
      const cJSON *r;
      if (!cJSON_IsArray(in_it))
        return dead_err(ld, w, "in: expected a name, a list or an "
                        "input generator");
      cJSON_ArrayForEach(r, in_it)
        if (!cJSON_IsString(r) && !cJSON_IsObject(r))
          return dead_err(ld, w, "in: expected a name, a list or "
                          "an input generator");
    }
    cJSON_ArrayForEach(f, it) {
      const char *key = f->string;
      if (strcmp(key, "name") == 0 || strcmp(key, "op") == 0 ||
          strcmp(key, "in") == 0 || strcmp(key, "recompute") == 0 ||
          key[0] == '_')
        continue;
      for (k = 0; k < A_COUNT; k++)
        if (strcmp(attr_names[k], key) == 0)
          break;
      if (k == A_COUNT || !in_list(op->attrs, key))
        return dead_err(ld, w, "%s: not an attribute of %s (valid: %s)",
                        key, op->name, op->attrs[0] ? op->attrs : "none");
    }
    for (k = 0; k < A_COUNT; k++)
      if (in_list(op->required, attr_names[k]) &&
          cJSON_GetObjectItemCaseSensitive(it, attr_names[k]) == NULL)
        return dead_err(ld, w, "%s: missing", attr_names[k]);
  }
  return OOC_OK;
}

static int
emit_if(struct ld *ld, const cJSON *obj)
{
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, "if");
  const cJSON *yes = cJSON_GetObjectItemCaseSensitive(obj, "layers");
  const cJSON *no = cJSON_GetObjectItemCaseSensitive(obj, "else");
  const cJSON *it;
  ooc_value v;
  int rc;

  ld->ctx = CTX_IF;
  ld->ctx_off = ld->name_off[ld->n - 1];
  cJSON_ArrayForEach(it, obj)
    if (strcmp(it->string, "if") != 0 && strcmp(it->string, "layers") != 0 &&
        strcmp(it->string, "else") != 0 && it->string[0] != '_')
      return ferr(ld, OOC_EINVAL, it->string, "not a field of if (valid: "
                                              "if, layers, else)");
  if (!cJSON_IsArray(yes))
    return ferr(ld, OOC_EINVAL, "layers", "expected a list of layers");
  if (no != NULL && !cJSON_IsArray(no))
    return ferr(ld, OOC_EINVAL, "else", "expected a list of layers");
  if ((rc = eval_item(ld, c, "if", &v)))
    return rc;
  if (v.is_int ? v.i != 0 : v.d != 0) {
    if (no != NULL && (rc = check_dead(ld, no, "else")))
      return rc;
    return emit_list(ld, yes, ld->n - 1);
  }
  if ((rc = check_dead(ld, yes, "layers")))
    return rc;
  return no ? emit_list(ld, no, ld->n - 1) : OOC_OK;
}

static int
emit_list(struct ld *ld, const cJSON *arr, int block_in)
{
  const cJSON *it;
  int rc;
  cJSON_ArrayForEach(it, arr) {
    if (!cJSON_IsObject(it)) {
      ld->ctx = CTX_INDEX;
      ld->ctx_i = ld->n;
      return ferr(ld, OOC_EINVAL, NULL, "expected an object");
    }
    if (++ld->work > MAX_WORK) {
      /* Name the repeat whose body expands (the items of an if or a
       * nested repeat set the context to theirs). */
      if (ld->in_repeat) {
        ld->ctx = CTX_REPEAT;
        ld->ctx_off = ld->rep_off;
        return too_much(ld, "repeat");
      }
      ld->ctx = CTX_INDEX;
      ld->ctx_i = ld->n;
      return too_much(ld, NULL);
    }
    if (cJSON_GetObjectItemCaseSensitive(it, "repeat") != NULL)
      rc = emit_repeat(ld, it);
    else if (cJSON_GetObjectItemCaseSensitive(it, "if") != NULL)
      rc = emit_if(ld, it);
    else
      rc = emit_layer(ld, it, block_in);
    if (rc)
      return rc;
  }
  return OOC_OK;
}

/* ---- top level ----------------------------------------------------------- */

/* The value of `--set name=V` in o, if given (the last one wins): sets
 * *found and *v, or fails when V is not a number. */
static int
set_value(struct ld *ld, const ooc_model_opts *o, const char *name,
          ooc_value *v, int *found)
{
  int k, rc;

  *found = 0;
  for (k = o != NULL ? o->n_sets - 1 : -1; k >= 0; k--)
    if (strcmp(o->sets[k].key, name) == 0) {
      const char *sv = o->sets[k].value, *p = sv + (sv[0] == '-');
      char what[200];
      double d;
      /* An integer is taken whole, not through a double: past 2^53 a
       * double would change it, and a message would echo another value
       * than the one given. */
      if (*p >= '0' && *p <= '9' && strspn(p, "0123456789") == strlen(p)) {
        char *end;
        long long iv;
        errno = 0;
        iv = strtoll(sv, &end, 10);
        if (errno == 0 && *end == '\0') {
          *v = ooc_value_int((int64_t)iv);
          *found = 1;
          break;
        }
      }
      snprintf(what, sizeof what, "%s: --set %.60s", ld->origin, name);
      if ((rc = ooc_parse_double(sv, what, &d, ld->err)))
        return rc;
      *v = ooc_value_from_number(d);
      *found = 1;
      break;
    }
  return OOC_OK;
}

/* A word parameter: a list of distinct words, the first the default
 * (`"attention": ["eager", "flash"]`); its value is the chosen word's
 * index, and "{name}" in a name or string attribute is the word. A --set
 * value must be one of the words. */
static int
word_param(struct ld *ld, const cJSON *it, const char *field,
           const ooc_model_opts *o, ooc_value *v)
{
  const cJSON *w, *w2;
  char list[200];
  size_t off = 0;
  int n = cJSON_GetArraySize(it), k, idx = 0, rc;

  list[0] = '\0';
  if (n < 1)
    return ferr(ld, OOC_EINVAL, field, "expected a number, an expression "
                "or a non-empty list of words");
  k = 0;
  cJSON_ArrayForEach(w, it) {
    if (!cJSON_IsString(w) || !valid_ident(w->valuestring))
      return ferr(ld, OOC_EINVAL, field, "word %d: expected a word "
                  "([A-Za-z_][A-Za-z0-9_]*)", k + 1);
    for (w2 = it->child; w2 != w; w2 = w2->next)
      if (strcmp(w2->valuestring, w->valuestring) == 0)
        return ferr(ld, OOC_EINVAL, field, "'%s' is listed twice",
                    w->valuestring);
    off += (size_t)snprintf(list + off, off < sizeof list ? sizeof list - off
                                                          : 0,
                            "%s%s", k ? ", " : "", w->valuestring);
    k++;
  }
  for (k = o != NULL ? o->n_sets - 1 : -1; k >= 0; k--)
    if (strcmp(o->sets[k].key, it->string) == 0) {
      int j = 0;
      cJSON_ArrayForEach(w, it) {
        if (strcmp(w->valuestring, o->sets[k].value) == 0)
          break;
        j++;
      }
      if (w == NULL)
        return ooc_err_set(ld->err, OOC_EINVAL, "%s: --set %s: '%.60s' is "
                           "not one of %s", ld->origin, it->string,
                           o->sets[k].value, list);
      idx = j;
      break;
    }
  if ((rc = grow(ld, (void **)&ld->wp, &ld->cap_wp, ld->n_wp + 1,
                 sizeof *ld->wp)))
    return rc;
  ld->wp[ld->n_wp].var = ld->sc.n;
  ld->wp[ld->n_wp].words = it;
  ld->n_wp++;
  *v = ooc_value_int(idx);
  return OOC_OK;
}

/* Define the variables of object obj, the top-level field what ("params"
 * or "let"), in order, each evaluated with those before it in scope; keys
 * starting with '_' are comments. With sets (params only), a --set value
 * replaces the default as the variable is defined, so a later default
 * that uses it sees the override. */
static int
load_vars(struct ld *ld, const cJSON *obj, const char *what,
          const ooc_model_opts *sets)
{
  const cJSON *it;
  int rc;

  if (obj != NULL && !cJSON_IsObject(obj))
    return ferr(ld, OOC_EINVAL, what, "expected an object");
  cJSON_ArrayForEach(it, obj) {
    ooc_value v;
    char field[160];
    int set;
    if (it->string[0] == '_')
      continue; /* a comment */
    snprintf(field, sizeof field, "%s: %.100s", what, it->string);
    if (!valid_ident(it->string))
      return ferr(ld, OOC_EINVAL, field, "not a valid name");
    if (ooc_expr_scope_find(&ld->sc, it->string, strlen(it->string)) >= 0)
      return ferr(ld, OOC_EINVAL, field, "defined twice");
    if (cJSON_IsArray(it) && strcmp(what, "params") == 0) {
      if ((rc = word_param(ld, it, field, sets, &v)) ||
          (rc = push_var(ld, it->string, v)))
        return rc;
      continue;
    }
    if ((rc = set_value(ld, sets, it->string, &v, &set)) ||
        (!set && (rc = eval_item(ld, it, field, &v))) ||
        (rc = push_var(ld, it->string, v)))
      return rc;
  }
  return OOC_OK;
}

static int
load_params(struct ld *ld, const cJSON *root, const ooc_model_opts *o)
{
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "params");
  int i, k, rc;

  if ((rc = load_vars(ld, ps, "params", o)))
    return rc;
  ld->n_params = ld->sc.n;
  ld->param_set = calloc((size_t)ld->n_params + 1, 1);
  if (ld->param_set == NULL)
    return nomem(ld);
  /* Values were applied by load_vars(); here every key must be a param. */
  for (k = 0; o != NULL && k < o->n_sets; k++) {
    const char *key = o->sets[k].key;
    /* Only params are in scope yet. */
    i = ooc_expr_scope_find(&ld->sc, key, strlen(key));
    if (i < 0) {
      char list[300];
      size_t off = 0;
      int j;
      list[0] = '\0';
      for (j = 0; j < ld->n_params; j++)
        off += (size_t)snprintf(list + off,
                                off < sizeof list ? sizeof list - off : 0,
                                "%s%s", j ? ", " : "", ld->sc.vars[j].name);
      return ooc_err_set(ld->err, OOC_ENOTFOUND,
                         "%s: --set %s: unknown parameter (%s%s)",
                         ld->origin, key,
                         ld->n_params ? "valid: " : "the model has none",
                         list);
    }
    ld->param_set[i] = 1;
  }
  return OOC_OK;
}

static int
load_lets_checks(struct ld *ld, const cJSON *root)
{
  const cJSON *lets = cJSON_GetObjectItemCaseSensitive(root, "let");
  const cJSON *checks = cJSON_GetObjectItemCaseSensitive(root, "check");
  const cJSON *it;
  int rc;

  if ((rc = load_vars(ld, lets, "let", NULL)))
    return rc;
  if (checks != NULL && !cJSON_IsArray(checks))
    return ferr(ld, OOC_EINVAL, "check", "expected a list of "
                                         "[expression, message]");
  cJSON_ArrayForEach(it, checks) {
    const cJSON *e = cJSON_GetArrayItem(it, 0);
    const cJSON *msg = cJSON_GetArrayItem(it, 1);
    ooc_value v;
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 ||
        !cJSON_IsString(e) || !cJSON_IsString(msg))
      return ferr(ld, OOC_EINVAL, "check", "expected a list of "
                                           "[expression, message]");
    if ((rc = eval_item(ld, e, "check", &v)))
      return rc;
    if (!(v.is_int ? v.i != 0 : v.d != 0))
      return ferr(ld, OOC_EINVAL, "check", "%s ('%s' is false)",
                  msg->valuestring, e->valuestring);
  }
  return OOC_OK;
}

static int
load_input(struct ld *ld, const cJSON *root)
{
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "input");
  ooc_layer *l;
  int n, k, rc;
  size_t off;

  if (in == NULL)
    return ferr(ld, OOC_EINVAL, "input", "missing");
  if (!cJSON_IsArray(in) || (n = cJSON_GetArraySize(in)) < 1 ||
      n > OOC_MAX_DIMS)
    return ferr(ld, OOC_EINVAL, "input", "expected a list of 1 to %d dims",
                OOC_MAX_DIMS);
  if ((rc = grow(ld, (void **)&ld->L, &ld->cap, 1, sizeof *ld->L)) ||
      (rc = grow(ld, (void **)&ld->name_off, &ld->cap_names, 1,
                 sizeof *ld->name_off)))
    return rc;
  l = &ld->L[0];
  memset(l, 0, sizeof *l);
  l->op = OOC_OPK_INPUT;
  l->cls = OOC_CLASS_OTHER;
  l->alias_of = -1;
  l->out.ndim = n;
  for (k = 0; k < n; k++)
    if ((rc = int_item(ld, cJSON_GetArrayItem(in, k), "input", 1, MAX_DIM,
                       &l->out.d[k])))
      return rc;
  if ((rc = pool_add(ld, "input", 5, &off)))
    return rc;
  ld->name_off[0] = off;
  if ((rc = ht_reserve(ld, 1)))
    return rc;
  ld->n = 1;
  ht_put(ld, 0);
  return OOC_OK;
}

static int
check_top_fields(struct ld *ld, const cJSON *root)
{
  const char *const known = "format name description dtype params let check "
                             "input layers framework";
  const cJSON *it;
  cJSON_ArrayForEach(it, root)
    if (it->string[0] != '_' && !in_list(known, it->string))
      return ferr(ld, OOC_EINVAL, it->string,
                  "unknown top-level field (valid: %s; fields starting "
                  "with '_' are free)", known);
  return OOC_OK;
}

/* The optional "framework" block: a name, host costs that replace the
 * profile's (us, >= 0), and how the framework builds ops (max-pool
 * indices, in-place relu and add). Defaults: PyTorch's. */
static int
load_framework(struct ld *ld, const cJSON *root, ooc_model *m)
{
  const char *const keys = "name host_op_us host_iteration_us "
                           "host_optimizer_param_us maxpool_indices "
                           "relu_in_place add_in_place";
  const cJSON *fw = cJSON_GetObjectItemCaseSensitive(root, "framework");
  const cJSON *it;

  snprintf(m->framework, sizeof m->framework, "pytorch");
  m->fw_host_op_us = m->fw_host_iteration_us =
      m->fw_host_optimizer_param_us = -1;
  ld->fw_index_bytes = 8;      /* max_pool2d_with_indices: int64 */
  ld->fw_relu_in_place = ld->fw_add_in_place = -1;
  m->fw_maxpool_index_bytes = ld->fw_index_bytes;
  m->fw_relu_in_place = m->fw_add_in_place = -1;
  if (fw == NULL)
    return OOC_OK;
  if (!cJSON_IsObject(fw))
    return ferr(ld, OOC_EINVAL, "framework", "expected an object");
  cJSON_ArrayForEach(it, fw) {
    char f[96];
    double *dst;
    if (it->string[0] == '_')
      continue;
    snprintf(f, sizeof f, "framework.%.60s", it->string);
    if (!in_list(keys, it->string))
      return ferr(ld, OOC_EINVAL, f, "unknown field (valid: %s)", keys);
    if (strcmp(it->string, "name") == 0) {
      if (!cJSON_IsString(it) || it->valuestring[0] == '\0' ||
          strlen(it->valuestring) >= sizeof m->framework)
        return ferr(ld, OOC_EINVAL, f, "expected a non-empty string of at "
                    "most %d characters", (int)sizeof m->framework - 1);
      snprintf(m->framework, sizeof m->framework, "%s", it->valuestring);
      continue;
    }
    if (strcmp(it->string, "maxpool_indices") == 0) {
      static const struct { const char *n; int b; } ix[] = {
        { "int64", 8 }, { "int32", 4 }, { "none", 0 } };
      size_t k;
      for (k = 0; cJSON_IsString(it) && k < sizeof ix / sizeof ix[0]; k++)
        if (strcmp(it->valuestring, ix[k].n) == 0)
          break;
      if (!cJSON_IsString(it) || k == sizeof ix / sizeof ix[0])
        return ferr(ld, OOC_EINVAL, f, "expected \"int64\" (PyTorch), "
                    "\"int32\" (Caffe) or \"none\" (the backward reads "
                    "the input and the output, as cuDNN's does)");
      ld->fw_index_bytes = m->fw_maxpool_index_bytes = ix[k].b;
      continue;
    }
    if (strcmp(it->string, "relu_in_place") == 0 ||
        strcmp(it->string, "add_in_place") == 0) {
      int v;
      if (!cJSON_IsBool(it))
        return ferr(ld, OOC_EINVAL, f, "expected true or false");
      v = cJSON_IsTrue(it);
      if (it->string[0] == 'r')
        ld->fw_relu_in_place = m->fw_relu_in_place = v;
      else
        ld->fw_add_in_place = m->fw_add_in_place = v;
      continue;
    }
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) ||
        !(it->valuedouble <= 1e9))
      return ferr(ld, OOC_EINVAL, f, "expected microseconds, a number in "
                  "[0, 1e9]");
    dst = strcmp(it->string, "host_op_us") == 0 ? &m->fw_host_op_us
        : strcmp(it->string, "host_iteration_us") == 0
            ? &m->fw_host_iteration_us
            : &m->fw_host_optimizer_param_us;
    *dst = it->valuedouble;
  }
  return OOC_OK;
}

/* ---- pass 2: resolve, infer, total --------------------------------------- */

static int
resolve_infer(struct ld *ld, int *inputs)
{
  const ooc_shape **shp = NULL;
  uint8_t *rg = NULL;
  /* Per layer: the root of its storage (alias chains followed), and per
   * storage root the first layer whose backward reads that memory as its
   * input (need_in) or as its own output (need_out); -1 for none. An
   * in-place op may overwrite a storage only when neither is set. */
  int *root = NULL, *need_in = NULL, *need_out = NULL, *out_anc = NULL;
  int i, j, rc = OOC_OK, max_in = 1, soft;

  for (i = 0; i < ld->n; i++)
    if (ld->L[i].n_in > max_in)
      max_in = ld->L[i].n_in;
  shp = malloc((size_t)max_in * sizeof *shp);
  rg = calloc((size_t)ld->n, 1);
  root = malloc((size_t)ld->n * sizeof *root);
  need_in = malloc((size_t)ld->n * sizeof *need_in);
  need_out = malloc((size_t)ld->n * sizeof *need_out);
  out_anc = malloc((size_t)ld->n * sizeof *out_anc);
  if (shp == NULL || rg == NULL || root == NULL || need_in == NULL ||
      need_out == NULL || out_anc == NULL) {
    rc = nomem(ld);
    goto out;
  }
  for (i = 0; i < ld->n; i++)
    need_in[i] = need_out[i] = -1;
  for (i = 0; i < ld->n; i++) {
    ooc_layer *l = &ld->L[i];
    const ooc_op_type *op = ooc_op_get(l->op);
    ld->ctx = CTX_LAYER;
    ld->ctx_off = ld->name_off[i];
    for (j = 0; j < l->n_in; j++) {
      const struct ref *r = &ld->refs[l->in_first + j];
      int t = r->idx;
      if (t < 0) {
        const char *nm = ld->pool + r->name;
        t = ht_find(ld, nm);
        if (t < 0) {
          rc = ferr(ld, OOC_EINVAL, "in", "unknown layer '%s'", nm);
          goto out;
        }
        if (t == i) {
          rc = ferr(ld, OOC_EINVAL, "in", "'%s' refers to the layer itself "
                                          "(a cycle)", nm);
          goto out;
        }
        if (t > i) {
          rc = ferr(ld, OOC_EINVAL, "in",
                    "'%s' is defined after this layer (a cycle: layers must "
                    "be in topological order)", nm);
          goto out;
        }
      }
      inputs[l->in_first + j] = t;
      shp[j] = &ld->L[t].out;
      if (rg[t])
        l->grad_in = 1;
    }
    if (l->n_in < op->min_inputs ||
        (op->max_inputs >= 0 && l->n_in > op->max_inputs)) {
      if (op->max_inputs < 0)
        rc = ferr(ld, OOC_EINVAL, "in", "%s takes at least %d inputs, got %d",
                  op->name, op->min_inputs, l->n_in);
      else if (op->min_inputs == op->max_inputs)
        rc = ferr(ld, OOC_EINVAL, "in", "%s takes %d input%s, got %d",
                  op->name, op->min_inputs, op->min_inputs == 1 ? "" : "s",
                  l->n_in);
      else
        rc = ferr(ld, OOC_EINVAL, "in", "%s takes %d to %d inputs, got %d",
                  op->name, op->min_inputs, op->max_inputs, l->n_in);
      goto out;
    }
    /* The framework block's rules: an attribute written on the layer
     * wins; a framework-wide in-place applies only where it is legal
     * (soft), as a framework's model code writes it. */
    soft = 0;
    if (!l->a.in_place_set &&
        ((l->op == OOC_OPK_RELU && ld->fw_relu_in_place >= 0) ||
         (l->op == OOC_OPK_ADD && ld->fw_add_in_place >= 0))) {
      l->a.in_place = l->op == OOC_OPK_RELU ? ld->fw_relu_in_place
                                            : ld->fw_add_in_place;
      soft = l->a.in_place;
    }
    if (l->op == OOC_OPK_MAXPOOL)
      l->a.index_bytes = ld->fw_index_bytes;
    l->alias_of = -1;
    rc = ooc_op_infer(l, shp, l->n_in, ld->batch, ld->dt, ld->opt, ld->err);
    if (rc) {
      rc = fprefix(ld, rc, NULL);
      goto out;
    }
    if (l->alias_of >= 0) {
      int src = inputs[l->in_first + l->alias_of], t;
      const char *why = NULL;
      /* An in-place op overwrites the whole storage chain it aliases
       * (the nearest layer on it whose backward needs its output:
       * out_anc, so that a chain of n in-place layers costs n, not
       * n^2) ... */
      t = l->a.in_place ? out_anc[src] : -1;
      if (t >= 0)
        why = "output";
      if (why == NULL && l->a.in_place) {
        /* ... and every other reader whose backward needs that memory. */
        int r0 = root[src];
        t = need_out[r0] >= 0 ? need_out[r0] : need_in[r0];
        if (t >= 0)
          why = need_out[r0] >= 0 ? "output" : "input";
      }
      if (why == NULL && l->a.in_place && root[src] == 0) {
        /* ... and never the input batch: it stays as loaded for the
         * whole iteration (and has no gradient for a backward in its
         * storage to read). */
        t = 0;
        why = "batch";
      }
      if (why != NULL && soft) {
        /* Out of place after all: the op writes its own output (and the
         * op table sizes it). */
        l->a.in_place = 0;
        l->alias_of = -1;
        rc = ooc_op_infer(l, shp, l->n_in, ld->batch, ld->dt, ld->opt,
                          ld->err);
        if (rc) {
          rc = fprefix(ld, rc, NULL);
          goto out;
        }
      } else if (why != NULL && strcmp(why, "batch") == 0) {
        rc = ferr(ld, OOC_EINVAL, "in_place",
                  "overwrites the input batch '%s', which oocsim keeps as "
                  "loaded for the whole iteration (drop in_place)",
                  lname(ld, 0));
        goto out;
      } else if (why != NULL) {
        rc = ferr(ld, OOC_EINVAL, "in_place",
                  "overwrites the %s of '%s', which its %s",
                  why, lname(ld, t),
                  strcmp(why, "input") == 0 && !(ld->L[t].needs &
                                                  OOC_NEED_INPUT)
                      ? "recompute (recompute: true) reads"
                      : "backward needs");
        goto out;
      } else {
        l->alias_of = src;
      }
    }
    root[i] = l->alias_of >= 0 ? root[l->alias_of] : i;
    out_anc[i] = (l->needs & OOC_NEED_OUTPUT) ? i
                 : l->alias_of >= 0 ? out_anc[l->alias_of] : -1;
    /* A layer the framework recomputes reads its inputs again before its
     * backward, whatever the backward itself needs. */
    if ((l->needs & OOC_NEED_INPUT) || l->recompute)
      for (j = 0; j < l->n_in; j++) {
        int r = root[inputs[l->in_first + j]];
        if (need_in[r] < 0)
          need_in[r] = i;
      }
    if ((l->needs & OOC_NEED_OUTPUT) && need_out[root[i]] < 0)
      need_out[root[i]] = i;
    rg[i] = l->has_bwd;        /* depends on a parameter: its own, a tied
                                  table's, or an input's (ops.c) */
  }
out:
  free(shp);
  free(rg);
  free(root);
  free(need_in);
  free(need_out);
  free(out_anc);
  return rc;
}

/* A byte figure summed in double, for a message (saturated). */
static uint64_t
sat_bytes(double b)
{
  return b >= 1.8e19 ? UINT64_MAX : (uint64_t)b;
}

/* The model's totals (ooc_model), checked: an error naming the batch
 * when they come to more than OOC_MODEL_MAX_TOTAL_BYTES (each layer's
 * figures fit 64 bits, ops.c, but their sums need not). */
static int
totals(struct ld *ld, ooc_model *m)
{
  uint64_t ws = 0;
  double act = 0, state = 0;
  char b1[32], b2[32], b3[32], b4[32], b5[32];
  int i;

  for (i = 0; i < m->n_layers; i++) {
    const ooc_layer *l = &m->layers[i];
    act += (double)l->out_bytes + (double)l->saved_bytes;
    state += (double)l->param_bytes + (double)l->grad_bytes +
             (double)l->opt_bytes;
    if (l->workspace_bytes > ws)
      ws = l->workspace_bytes;
  }
  /* In double first: the 64-bit sums below cannot wrap once this holds
   * (the cap is 2^56, far from where double's rounding matters). */
  if (act + state + (double)ws >= (double)OOC_MODEL_MAX_TOTAL_BYTES) {
    ld->ctx = CTX_NONE;
    return ferr(ld, OOC_ERANGE, NULL,
                "at batch %lld its tensors come to %s (activations %s, "
                "weights, gradients and optimizer state %s, largest "
                "workspace %s), more than the %s oocsim can count",
                (long long)m->batch,
                ooc_fmt_bytes(sat_bytes(act + state + (double)ws), b1,
                              sizeof b1),
                ooc_fmt_bytes(sat_bytes(act), b2, sizeof b2),
                ooc_fmt_bytes(sat_bytes(state), b3, sizeof b3),
                ooc_fmt_bytes(ws, b4, sizeof b4),
                ooc_fmt_bytes(OOC_MODEL_MAX_TOTAL_BYTES, b5, sizeof b5));
  }
  /* A tied linear has no weights of its own: it computes with an
   * embedding's table, which must have its shape. */
  for (i = 0; i < m->n_layers; i++) {
    const ooc_layer *l = &m->layers[i];
    if (l->op == OOC_OPK_LINEAR && l->a.tied &&
        ooc_model_tied_embedding(m, i) < 0) {
      const ooc_shape *x = &m->layers[ooc_layer_input(m, l, 0)].out;
      ld->ctx = CTX_NAME;
      ld->ctx_s = l->name ? l->name : "?";
      return ferr(ld, OOC_EINVAL, "tied", "no embedding layer has vocab "
                  "%lld and width %lld, the table this layer's weights "
                  "would be ([out x input features])",
                  (long long)l->a.out, (long long)x->d[x->ndim - 1]);
    }
  }
  for (i = 0; i < m->n_layers; i++) {
    const ooc_layer *l = &m->layers[i];
    m->total_params += l->params;
    m->weight_bytes += l->param_bytes;
    m->grad_bytes += l->grad_bytes;
    m->opt_bytes += l->opt_bytes;
    m->activation_bytes += l->out_bytes + l->saved_bytes;
    m->fwd_flops += l->fwd_flops;
    m->bwd_flops += l->bwd_data_flops + l->bwd_weight_flops;
  }
  m->naive_peak_bytes = m->activation_bytes + m->weight_bytes +
                        m->grad_bytes + m->opt_bytes + ws;
  return OOC_OK;
}

static void
ld_fini(struct ld *ld)
{
  ooc_expr_scope_fini(&ld->sc);
  free(ld->wp);
  free(ld->dead);
  free(ld->param_set);
  free(ld->pool);
  free(ld->L);
  free(ld->name_off);
  free(ld->refs);
  free(ld->ht);
}

int
ooc_model_load_string(const char *json, const char *origin,
                      const ooc_model_opts *opts, ooc_model **out,
                      ooc_err *err)
{
  struct ld ld = { .origin = origin ? origin : "<string>", .err = err };
  cJSON *root = NULL;
  ooc_model *m = NULL;
  const cJSON *it;
  const char *end = NULL;
  int rc, i;

  *out = NULL;
  ld.batch = opts ? opts->batch : 1;
  ld.opt = opts ? opts->optimizer : OOC_OPT_SGD_MOMENTUM;
  if (ld.batch < 1)
    return ooc_err_set(err, OOC_EINVAL, "batch must be >= 1 (got %lld)",
                       (long long)ld.batch);
  if (ld.opt != OOC_OPT_SGD_MOMENTUM && ld.opt != OOC_OPT_SGD &&
      ld.opt != OOC_OPT_ADAM)
    return ooc_err_set(err, OOC_EINVAL, "unknown optimizer %d", (int)ld.opt);
  if (json == NULL)
    return ooc_err_set(err, OOC_EINVAL, "%s: no JSON text", ld.origin);

  if ((rc = ooc_json_precheck(json, strlen(json), OOC_MODEL_MAX_BYTES,
                              OOC_MODEL_MAX_DEPTH, ld.origin, "a model",
                              err)) < 0)
    goto fail;
  root = cJSON_ParseWithOpts(json, &end, 1);
  if (root == NULL) {
    int line, col, at_end;
    const char *p;
    if (end == NULL || end < json)
      end = json;
    ooc_text_pos(json, end, &line, &col);
    for (p = end; *p && isspace((unsigned char)*p); p++)
      ;
    at_end = *p == '\0' || (p[0] != '\0' && p[1] == '\0');
    rc = ooc_err_set(err, OOC_EPARSE,
                     "%s: malformed JSON near line %d, column %d%s",
                     ld.origin, line, col,
                     at_end ? " (unexpected end: truncated?)" : "");
    goto fail;
  }
  if ((rc = ooc_json_strict(json, strlen(json), ld.origin, "a model",
                             err)) < 0 ||
      (rc = ooc_json_check_dups(root, ld.origin, err)) < 0)
    goto fail;
  if (!cJSON_IsObject(root)) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: expected a JSON object at the "
                                      "top level", ld.origin);
    goto fail;
  }
  if ((rc = check_top_fields(&ld, root)))
    goto fail;
  it = cJSON_GetObjectItemCaseSensitive(root, "format");
  if (it != NULL && !(cJSON_IsNumber(it) && it->valuedouble == 1)) {
    rc = ferr(&ld, OOC_EINVAL, "format", "unsupported version (expected 1)");
    goto fail;
  }
  m = calloc(1, sizeof *m);
  if (m == NULL) {
    rc = nomem(&ld);
    goto fail;
  }
  it = cJSON_GetObjectItemCaseSensitive(root, "name");
  if (!cJSON_IsString(it) || it->valuestring[0] == '\0') {
    rc = ferr(&ld, OOC_EINVAL, "name", it ? "expected a non-empty string"
                                          : "missing");
    goto fail;
  }
  if ((rc = ooc_control_char(it->valuestring)) >= 0) {
    rc = ferr(&ld, OOC_EINVAL, "name", "holds control character 0x%02x "
              "(names are printed as they are)", rc);
    goto fail;
  }
  m->name = strdup(it->valuestring);
  m->path = strdup(ld.origin);
  if (m->name == NULL || m->path == NULL) {
    rc = nomem(&ld);
    goto fail;
  }
  ld.dt = OOC_FP32;
  it = cJSON_GetObjectItemCaseSensitive(root, "dtype");
  if (it != NULL && (!cJSON_IsString(it) ||
                     ooc_dtype_parse(it->valuestring, &ld.dt) != OOC_OK)) {
    rc = ferr(&ld, OOC_EINVAL, "dtype", "expected fp32, fp16 or bf16");
    goto fail;
  }
  if (opts && opts->dtype_set)
    ld.dt = opts->dtype;
  if (opts && opts->precision != OOC_PREC_NONE) {
    if (opts->dtype_set) {
      rc = ooc_err_set(err, OOC_EINVAL, "--precision sets the dtype: give "
                       "--precision or --dtype, not both");
      goto fail;
    }
    ld.dt = ooc_precision_dtype(opts->precision);
  }

  if ((rc = load_params(&ld, root, opts)) ||
      (rc = load_lets_checks(&ld, root)) ||
      (rc = load_framework(&ld, root, m)))
    goto fail;
  if ((rc = load_input(&ld, root)))
    goto fail;
  it = cJSON_GetObjectItemCaseSensitive(root, "layers");
  if (!cJSON_IsArray(it)) {
    rc = ferr(&ld, OOC_EINVAL, "layers", it ? "expected a list" : "missing");
    goto fail;
  }
  if ((rc = emit_list(&ld, it, -1)))
    goto fail;
  if (ld.n < 2) {
    ld.ctx = CTX_NONE;
    rc = ferr(&ld, OOC_EINVAL, "layers", "no layers");
    goto fail;
  }

  m->inputs = malloc(((size_t)ld.n_refs + 1) * sizeof *m->inputs);
  if (m->inputs == NULL) {
    rc = nomem(&ld);
    goto fail;
  }
  if ((rc = resolve_infer(&ld, m->inputs)))
    goto fail;

  /* parameters: names into the pool, then fix pointers */
  m->n_params = ld.n_params;
  m->params = calloc((size_t)ld.n_params + 1, sizeof *m->params);
  if (m->params == NULL) {
    rc = nomem(&ld);
    goto fail;
  }
  {
    size_t *poff = calloc((size_t)ld.n_params + 1, sizeof *poff);
    if (poff == NULL) {
      rc = nomem(&ld);
      goto fail;
    }
    size_t *woff = calloc((size_t)ld.n_params + 1, sizeof *woff);
    if (woff == NULL) {
      free(poff);
      rc = nomem(&ld);
      goto fail;
    }
    for (i = 0; i < ld.n_params; i++) {
      const char *w = word_of(&ld, ld.sc.vars[i].name);
      woff[i] = (size_t)-1;
      if ((rc = pool_add(&ld, ld.sc.vars[i].name, strlen(ld.sc.vars[i].name),
                         &poff[i])) ||
          (w != NULL && (rc = pool_add(&ld, w, strlen(w), &woff[i])))) {
        free(poff);
        free(woff);
        goto fail;
      }
    }
    m->strings = ld.pool;
    ld.pool = NULL;
    for (i = 0; i < ld.n_params; i++) {
      m->params[i].name = m->strings + poff[i];
      m->params[i].value = ld.sc.vars[i].v.is_int ? (double)ld.sc.vars[i].v.i
                                                : ld.sc.vars[i].v.d;
      m->params[i].set = ld.param_set[i];
      m->params[i].word = woff[i] == (size_t)-1 ? NULL
                                                : m->strings + woff[i];
    }
    free(poff);
    free(woff);
  }
  for (i = 0; i < ld.n; i++)
    ld.L[i].name = m->strings + ld.name_off[i];
  m->layers = ld.L;
  ld.L = NULL;
  m->n_layers = ld.n;
  m->dtype = ld.dt;
  m->optimizer = ld.opt;
  m->batch = ld.batch;
  m->precision = opts ? opts->precision : OOC_PREC_NONE;
  if (m->precision == OOC_PREC_AMP_FP16 || m->precision == OOC_PREC_AMP_BF16) {
    /* Mixed precision: the half-precision weights and gradients the
     * op table counted, plus fp32 master weights and fp32 optimizer
     * state (4 B per state per parameter). */
    uint64_t states = ld.opt == OOC_OPT_ADAM ? 2 : ld.opt == OOC_OPT_SGD ? 0
                                                                        : 1;
    for (i = 0; i < ld.n; i++)
      m->layers[i].opt_bytes = m->layers[i].params * 4 * (states + 1);
  }
  if ((rc = totals(&ld, m)) < 0)
    goto fail;
  m->fingerprint = ooc_model_fingerprint(m);
  ld_fini(&ld);
  cJSON_Delete(root);
  *out = m;
  return OOC_OK;

fail:
  ld_fini(&ld);
  cJSON_Delete(root);
  ooc_model_free(m);
  return rc;
}

int
ooc_model_load(const char *name_or_path, const ooc_model_opts *opts,
               ooc_model **out, ooc_err *err)
{
  char *path = NULL, *text = NULL;
  int rc;

  *out = NULL;
  if ((rc = ooc_data_find("models", name_or_path, &path, err)))
    return rc;
  if ((rc = ooc_read_file(path, &text, NULL, err)) == OOC_OK)
    rc = ooc_model_load_string(text, path, opts, out, err);
  free(text);
  free(path);
  return rc;
}
