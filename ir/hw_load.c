/* ir/hw_load.c — load, override and check a hardware profile (hw.h).
 *
 * One idea: a profile is read against a fixed schema table (`fields[]`):
 * every JSON field has an object path, a type, a range check, a unit scale
 * (GiB -> bytes, GB/s -> B/s, TFLOP/s -> FLOP/s, us -> ns) and the struct
 * member it fills. The same table drives the --hw-set overrides (dotted keys
 * applied to the cJSON tree before conversion), the unknown-key check and
 * the "valid keys" lists in error messages, so the three cannot disagree.
 * Keys that start with '_' are comments (sources, notes) anywhere.
 *
 * This is the only file of the hardware module that uses cJSON. Calibrated
 * per-layer times are sorted by (FNV-1a hash, signature) so that
 * ooc_hw_calib_find() is a binary search, O(log n).
 *
 * Ownership: the ooc_hw and every string and array in it belong to the
 * caller, freed by ooc_hw_free(). Cost: O(fields + calibration entries
 * x log) per load, done once per run.
 *
 * Follows ARCHITECTURE.md (spine: hwprofiles/NAME.json -> hw) and
 * hwprofiles/README.md (the format).
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir/hw.h"
#include "base/util.h"

#define GiB 1073741824.0
#define MiB 1048576.0

/* --- the schema ------------------------------------------------------- */

typedef enum { T_NUM, T_INT, T_BOOL, T_STR } ftype;
typedef enum { C_ANY, C_POS, C_NONNEG, C_FRAC, C_GE1 } fcheck;
typedef enum { D_DBL, D_U64, D_NS, D_INT, D_STR } fdest;

typedef struct field {
  const char *obj;      /* object path: "" is the top level */
  const char *key;
  ftype type;
  fcheck check;
  int optional;         /* may be absent: the member keeps its default */
  double scale;         /* JSON unit -> struct unit */
  fdest dest;
  size_t off;           /* offsetof(ooc_hw, member) */
} field;

#define F(o, k, t, c, s, d, m) \
  { .obj = o, .key = k, .type = t, .check = c, .scale = s, .dest = d, \
    .off = offsetof(ooc_hw, m) }
#define OPT(o, k, t, c, s, d, m) \
  { .obj = o, .key = k, .type = t, .check = c, .optional = 1, .scale = s, \
    .dest = d, .off = offsetof(ooc_hw, m) }

static const field fields[] = {
  F("", "name", T_STR, C_ANY, 1, D_STR, name),
  F("", "gpu", T_STR, C_ANY, 1, D_STR, gpu),
  F("memory", "total_GiB", T_NUM, C_POS, GiB, D_U64, mem_total),
  F("memory", "usable_GiB", T_NUM, C_POS, GiB, D_U64, mem_usable),
  F("host", "memory_GiB", T_NUM, C_POS, GiB, D_U64, host_mem),
  OPT("host", "pinned_GiB", T_NUM, C_POS, GiB, D_U64, host_pinned_max),
  OPT("host", "iteration_us", T_NUM, C_NONNEG, 1e3, D_NS, host_iter_ns),
  OPT("host", "op_us", T_NUM, C_NONNEG, 1e3, D_NS, host_op_ns),
  OPT("host", "optimizer_param_us", T_NUM, C_NONNEG, 1e3, D_NS,
      host_opt_param_ns),
  OPT("host", "optimizer_GBps", T_NUM, C_POS, 1e9, D_DBL, host_opt_Bps),
  OPT("host", "optimizer_call_us", T_NUM, C_NONNEG, 1e3, D_NS,
      host_opt_call_ns),
  OPT("host", "event_sync_us", T_NUM, C_NONNEG, 1e3, D_NS, event_sync_ns),
  F("compute", "fp32_TFLOPS", T_NUM, C_POS, 1e12, D_DBL, peak_flops[OOC_FP32]),
  F("compute", "fp16_TFLOPS", T_NUM, C_POS, 1e12, D_DBL, peak_flops[OOC_FP16]),
  F("compute", "bf16_TFLOPS", T_NUM, C_POS, 1e12, D_DBL, peak_flops[OOC_BF16]),
  F("compute", "tensor_fp16_TFLOPS", T_NUM, C_NONNEG, 1e12, D_DBL,
    tensor_flops[OOC_FP16]),
  F("compute", "tensor_bf16_TFLOPS", T_NUM, C_NONNEG, 1e12, D_DBL,
    tensor_flops[OOC_BF16]),
  F("compute", "tensor_tf32_TFLOPS", T_NUM, C_NONNEG, 1e12, D_DBL,
    tensor_flops[OOC_FP32]),
  F("compute", "fp32_uses_tf32", T_BOOL, C_ANY, 1, D_INT, fp32_uses_tf32),
  F("compute", "hbm_GBps", T_NUM, C_POS, 1e9, D_DBL, hbm_Bps),
  F("compute", "mem_eff", T_NUM, C_FRAC, 1, D_DBL, mem_eff),
  F("compute", "launch_us", T_NUM, C_NONNEG, 1e3, D_NS, launch_ns),
  OPT("compute", "sms", T_INT, C_GE1, 1, D_INT, sms),
  OPT("compute", "gemm_tile", T_INT, C_GE1, 1, D_INT, gemm_tile),
  OPT("compute", "max_split_k", T_INT, C_GE1, 1, D_INT, max_split_k),
  F("compute.efficiency", "conv", T_NUM, C_FRAC, 1, D_DBL, eff[OOC_CLASS_CONV]),
  F("compute.efficiency", "gemm", T_NUM, C_FRAC, 1, D_DBL, eff[OOC_CLASS_GEMM]),
  F("compute.efficiency", "norm", T_NUM, C_FRAC, 1, D_DBL, eff[OOC_CLASS_NORM]),
  F("compute.efficiency", "eltwise", T_NUM, C_FRAC, 1, D_DBL,
    eff[OOC_CLASS_ELTWISE]),
  F("compute.efficiency", "pool", T_NUM, C_FRAC, 1, D_DBL, eff[OOC_CLASS_POOL]),
  F("compute.efficiency", "other", T_NUM, C_FRAC, 1, D_DBL,
    eff[OOC_CLASS_OTHER]),
  OPT("compute.tensor_efficiency", "conv", T_NUM, C_FRAC, 1, D_DBL,
      tensor_eff[OOC_CLASS_CONV]),
  OPT("compute.tensor_efficiency", "gemm", T_NUM, C_FRAC, 1, D_DBL,
      tensor_eff[OOC_CLASS_GEMM]),
  OPT("compute.tensor_efficiency_fp16", "conv", T_NUM, C_FRAC, 1, D_DBL,
      tensor_eff16[OOC_CLASS_CONV]),
  OPT("compute.tensor_efficiency_fp16", "gemm", T_NUM, C_FRAC, 1, D_DBL,
      tensor_eff16[OOC_CLASS_GEMM]),
  OPT("compute.copy_interference", "conv", T_NUM, C_NONNEG, 1, D_DBL,
      interference[OOC_CLASS_CONV]),
  OPT("compute.copy_interference", "gemm", T_NUM, C_NONNEG, 1, D_DBL,
      interference[OOC_CLASS_GEMM]),
  OPT("compute.copy_interference", "norm", T_NUM, C_NONNEG, 1, D_DBL,
      interference[OOC_CLASS_NORM]),
  OPT("compute.copy_interference", "eltwise", T_NUM, C_NONNEG, 1, D_DBL,
      interference[OOC_CLASS_ELTWISE]),
  OPT("compute.copy_interference", "pool", T_NUM, C_NONNEG, 1, D_DBL,
      interference[OOC_CLASS_POOL]),
  OPT("compute.copy_interference", "other", T_NUM, C_NONNEG, 1, D_DBL,
      interference[OOC_CLASS_OTHER]),
  OPT("compute.conv_algorithms", "implicit_gemm", T_NUM, C_POS, 1, D_DBL,
      algo_factor[OOC_ALGO_IMPLICIT_GEMM]),
  OPT("compute.conv_algorithms", "precomp_gemm", T_NUM, C_POS, 1, D_DBL,
      algo_factor[OOC_ALGO_PRECOMP_GEMM]),
  OPT("compute.conv_algorithms", "fft", T_NUM, C_POS, 1, D_DBL,
      algo_factor[OOC_ALGO_FFT]),
  OPT("compute.conv_algorithms", "fft_tiling", T_NUM, C_POS, 1, D_DBL,
      algo_factor[OOC_ALGO_FFT_TILING]),
  OPT("compute.conv_algorithms", "winograd", T_NUM, C_POS, 1, D_DBL,
      algo_factor[OOC_ALGO_WINOGRAD]),
  OPT("compute.conv_algorithms", "winograd_nonfused", T_NUM, C_POS, 1, D_DBL,
      algo_factor[OOC_ALGO_WINOGRAD_NONFUSED]),
  F("link", "h2d_GBps", T_NUM, C_POS, 1e9, D_DBL, h2d_Bps),
  F("link", "d2h_GBps", T_NUM, C_POS, 1e9, D_DBL, d2h_Bps),
  F("link", "h2d_pageable_GBps", T_NUM, C_POS, 1e9, D_DBL, h2d_pageable_Bps),
  F("link", "d2h_pageable_GBps", T_NUM, C_POS, 1e9, D_DBL, d2h_pageable_Bps),
  F("link", "duplex_h2d_GBps", T_NUM, C_POS, 1e9, D_DBL, duplex_h2d_Bps),
  F("link", "duplex_d2h_GBps", T_NUM, C_POS, 1e9, D_DBL, duplex_d2h_Bps),
  F("link", "latency_us", T_NUM, C_NONNEG, 1e3, D_NS, copy_latency_ns),
  F("link", "copy_engines", T_INT, C_GE1, 1, D_INT, copy_engines),
  OPT("link", "issue_us", T_NUM, C_NONNEG, 1e3, D_NS, copy_issue_ns),
  F("allocator", "malloc_us", T_NUM, C_NONNEG, 1e3, D_NS, malloc_ns),
  F("allocator", "malloc_us_per_GiB", T_NUM, C_NONNEG, 1e3, D_DBL,
    malloc_ns_per_GiB),
  F("allocator", "free_us", T_NUM, C_NONNEG, 1e3, D_NS, free_ns),
  OPT("allocator", "free_syncs", T_BOOL, C_ANY, 1, D_INT, free_syncs),
  F("allocator", "va_chunk_MiB", T_NUM, C_POS, MiB, D_U64, va_chunk_bytes),
  F("allocator", "va_granularity_MiB", T_NUM, C_POS, MiB, D_U64,
    va_granularity),
  F("allocator", "va_map_us", T_NUM, C_NONNEG, 1e3, D_NS, va_map_ns),
  OPT("allocator", "va_create_us", T_NUM, C_NONNEG, 1e3, D_NS, va_create_ns),
  OPT("allocator", "va_access_us", T_NUM, C_NONNEG, 1e3, D_NS,
      va_access_ns),
  OPT("allocator", "va_unmap_us", T_NUM, C_NONNEG, 1e3, D_NS, va_unmap_ns),
  OPT("allocator", "va_unmap_syncs", T_BOOL, C_ANY, 1, D_INT,
      va_unmap_syncs),
  OPT("allocator", "va_release_us", T_NUM, C_NONNEG, 1e3, D_NS,
      va_release_ns),
  F("allocator", "host_alloc_us", T_NUM, C_NONNEG, 1e3, D_NS, host_alloc_ns),
};
#define N_FIELDS ((int)(sizeof fields / sizeof fields[0]))

/* Objects: path, parent path, key in the parent, whether a profile may
 * leave it out; "calibration" holds the optional table. */
static const struct {
  const char *path, *parent, *key;
  int optional;
} objects[] = {
  { "", NULL, NULL, 0 },
  { "memory", "", "memory", 0 },
  { "host", "", "host", 0 },
  { "compute", "", "compute", 0 },
  { "compute.efficiency", "compute", "efficiency", 0 },
  { "compute.tensor_efficiency", "compute", "tensor_efficiency", 1 },
  { "compute.tensor_efficiency_fp16", "compute", "tensor_efficiency_fp16",
    1 },
  { "compute.conv_algorithms", "compute", "conv_algorithms", 1 },
  { "compute.copy_interference", "compute", "copy_interference", 1 },
  { "link", "", "link", 0 },
  { "allocator", "", "allocator", 0 },
  { "calibration", "", "calibration", 1 },
};
#define N_OBJECTS ((int)(sizeof objects / sizeof objects[0]))

static int
find_object(const char *path)
{
  int i;
  for (i = 0; i < N_OBJECTS; i++)
    if (strcmp(objects[i].path, path) == 0)
      return i;
  return -1;
}

/* The child object `key` of object path `parent`, or -1. */
static int
find_child_object(const char *parent, const char *key)
{
  int i;
  for (i = 1; i < N_OBJECTS; i++)
    if (strcmp(objects[i].parent, parent) == 0 &&
        strcmp(objects[i].key, key) == 0)
      return i;
  return -1;
}

static int
find_field(const char *obj, const char *key)
{
  int i;
  for (i = 0; i < N_FIELDS; i++)
    if (strcmp(fields[i].obj, obj) == 0 && strcmp(fields[i].key, key) == 0)
      return i;
  return -1;
}

/* "link.h2d_GBps" for messages. */
static void
dotted(char *buf, size_t n, const char *obj, const char *key)
{
  snprintf(buf, n, "%s%s%s", obj, obj[0] ? "." : "", key);
}

/* "valid keys of link: a, b, c" for object path obj. */
static void
valid_keys(char *buf, size_t n, const char *obj)
{
  size_t off;
  int i, first = 1;

  off = (size_t)snprintf(buf, n, "valid keys %s%s: ",
                         obj[0] ? "of " : "at top level", obj);
  for (i = 0; i < N_FIELDS && off < n; i++)
    if (strcmp(fields[i].obj, obj) == 0) {
      off += (size_t)snprintf(buf + off, n - off, "%s%s", first ? "" : ", ",
                              fields[i].key);
      first = 0;
    }
  for (i = 1; i < N_OBJECTS && off < n; i++)
    if (strcmp(objects[i].parent, obj) == 0) {
      off += (size_t)snprintf(buf + off, n - off, "%s%s", first ? "" : ", ",
                              objects[i].key);
      first = 0;
    }
  if (strcmp(obj, "calibration") == 0 && off < n)
    snprintf(buf + off, n - off, "%slayers", first ? "" : ", ");
}

/* The value of a JSON item for messages, truncated. */
static void
show(char *buf, size_t n, const cJSON *it)
{
  char *s = cJSON_PrintUnformatted(it);

  if (s == NULL) {
    snprintf(buf, n, "?");
    return;
  }
  if (strlen(s) > 40)
    snprintf(buf, n, "%.37s...", s);
  else
    snprintf(buf, n, "%s", s);
  cJSON_free(s);
}

/* --- overrides -------------------------------------------------------- */

/* Apply one dotted-key override to the tree. `overridden[i]` is set to
 * where field i's value came from (ov->via, "--hw-set" when NULL), so
 * that range errors can say so. */
static int
apply_override(cJSON *root, const ooc_hw_override *ov, const char *origin,
               const char **overridden, ooc_err *err)
{
  char path[256], keybuf[256], keys[OOC_ERR_MSG_MAX / 2];
  char *comp, *dot;
  cJSON *node = root, *val = NULL, *child;
  const char *via = ov->via != NULL ? ov->via : "--hw-set";
  int f;

  if (ov->key == NULL || ov->key[0] == '\0')
    return ooc_err_set(err, OOC_EINVAL, "%s: %s: empty key", origin, via);
  if (ov->value == NULL)
    return ooc_err_set(err, OOC_EINVAL, "%s: %s %s: missing value",
                       origin, via, ov->key);
  if (strlen(ov->key) >= sizeof keybuf)
    return ooc_err_set(err, OOC_EINVAL, "%s: %s: key too long", origin, via);
  path[0] = '\0';
  snprintf(keybuf, sizeof keybuf, "%s", ov->key);
  comp = keybuf;
  /* Walk the object components. */
  while ((dot = strchr(comp, '.')) != NULL) {
    int o;
    *dot = '\0';
    o = find_child_object(path, comp);
    if (o >= 0 && strcmp(objects[o].path, "calibration") == 0)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: %s %s: the calibration table cannot be "
                         "overridden", origin, via, ov->key);
    if (o < 0) {
      valid_keys(keys, sizeof keys, path);
      return ooc_err_set(err, OOC_ENOTFOUND,
                         "%s: %s %s: unknown key '%s' (%s)", origin,
                         via, ov->key, comp, keys);
    }
    child = cJSON_GetObjectItemCaseSensitive(node, comp);
    if (child == NULL) {
      child = cJSON_AddObjectToObject(node, comp);
      if (child == NULL)
        goto nomem;
    } else if (!cJSON_IsObject(child)) {
      cJSON *fresh = cJSON_CreateObject();
      if (fresh == NULL)
        goto nomem;
      cJSON_ReplaceItemInObjectCaseSensitive(node, comp, fresh);
      child = fresh;
    }
    snprintf(path, sizeof path, "%s", objects[o].path);
    node = child;
    comp = dot + 1;
  }
  f = find_field(path, comp);
  if (f < 0) {
    if (path[0] == '\0' && strcmp(comp, "calibration") == 0)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: %s %s: the calibration table cannot be "
                         "overridden", origin, via, ov->key);
    if (find_child_object(path, comp) >= 0)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: %s %s: is an object, set one of its keys",
                         origin, via, ov->key);
    valid_keys(keys, sizeof keys, path);
    return ooc_err_set(err, OOC_ENOTFOUND,
                       "%s: %s %s: unknown key '%s' (%s)", origin,
                       via, ov->key, comp, keys);
  }
  switch (fields[f].type) {
  case T_NUM:
  case T_INT: {
    double v;
    ooc_err e2;
    if (ooc_parse_double(ov->value, ov->key, &v, &e2) < 0)
      return ooc_err_set(err, e2.code, "%s: %s %s", origin, via, e2.msg);
    val = cJSON_CreateNumber(v);
    break;
  }
  case T_BOOL:
    if (strcmp(ov->value, "true") == 0 || strcmp(ov->value, "1") == 0)
      val = cJSON_CreateTrue();
    else if (strcmp(ov->value, "false") == 0 || strcmp(ov->value, "0") == 0)
      val = cJSON_CreateFalse();
    else
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: %s %s: '%s' is not true or false", origin,
                         via, ov->key, ov->value);
    break;
  case T_STR:
    val = cJSON_CreateString(ov->value);
    break;
  }
  if (val == NULL)
    goto nomem;
  if (cJSON_GetObjectItemCaseSensitive(node, comp) != NULL)
    cJSON_ReplaceItemInObjectCaseSensitive(node, comp, val);
  else
    cJSON_AddItemToObject(node, comp, val);
  overridden[f] = via;
  return OOC_OK;
nomem:
  return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
}

/* Setting link.h2d_GBps (d2h_GBps) alone scales link.duplex_h2d_GBps
 * (duplex_d2h_GBps) by the same ratio, so that a what-if on the link rate
 * also holds while both directions run; a duplex rate set explicitly is
 * kept. `orig` holds the four link rates read before the overrides (0 where
 * absent or not a number; then nothing is scaled). Runs on the tree, so
 * --hw-set and ooc_hw_derive give the same profile. */
static const char *const duplex_keys[4] = {
  "h2d_GBps", "d2h_GBps", "duplex_h2d_GBps", "duplex_d2h_GBps"
};

static void
read_link_rates(const cJSON *root, double orig[4])
{
  const cJSON *link = cJSON_GetObjectItemCaseSensitive(root, "link");
  int i;

  for (i = 0; i < 4; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(link, duplex_keys[i]);
    orig[i] = cJSON_IsNumber(v) ? v->valuedouble : 0;
  }
}

static int
scale_duplex(cJSON *root, const char *const *overridden,
             const double orig[4], const char *origin, ooc_err *err)
{
  cJSON *link = cJSON_GetObjectItemCaseSensitive(root, "link");
  int d;

  for (d = 0; d < 2; d++) {
    int fs = find_field("link", duplex_keys[d]);
    int fd = find_field("link", duplex_keys[2 + d]);
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(link, duplex_keys[d]);
    cJSON *dup = cJSON_GetObjectItemCaseSensitive(link, duplex_keys[2 + d]);
    cJSON *val;

    if (!overridden[fs] || overridden[fd] || !cJSON_IsNumber(now) ||
        !cJSON_IsNumber(dup) || !(orig[d] > 0) || !(orig[2 + d] > 0))
      continue;
    val = cJSON_CreateNumber(orig[2 + d] * now->valuedouble / orig[d]);
    if (val == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
    cJSON_ReplaceItemInObjectCaseSensitive(link, duplex_keys[2 + d], val);
  }
  return OOC_OK;
}

/* --- checks and conversion -------------------------------------------- */

/* Does member it of obj repeat the key of an earlier member? (The parser
 * keeps both, and lookups see the first.) A profile's objects are small:
 * O(members) each. */
static int
repeats(const cJSON *obj, const cJSON *it)
{
  for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
    if (strcmp(prev->string, it->string) == 0)
      return 1;
  return 0;
}

/* Every key of every schema object must be known. */
static int
check_unknown(const cJSON *root, const char *origin, ooc_err *err)
{
  char keys[OOC_ERR_MSG_MAX / 2], name[160];
  int o;

  for (o = 0; o < N_OBJECTS; o++) {
    const cJSON *node = root, *it;
    if (o > 0) {
      const cJSON *parent = root;
      if (objects[o].parent[0] != '\0')
        parent = cJSON_GetObjectItemCaseSensitive(
            root, objects[find_object(objects[o].parent)].key);
      node = cJSON_GetObjectItemCaseSensitive(parent, objects[o].key);
    }
    if (!cJSON_IsObject(node))
      continue;
    cJSON_ArrayForEach(it, node) {
      const char *k = it->string;
      if (repeats(node, it)) {
        dotted(name, sizeof name, objects[o].path, k);
        return ooc_err_set(err, OOC_EINVAL, "%s: %s: duplicate key", origin,
                           name);
      }
      if (k[0] == '_')
        continue;
      if (find_field(objects[o].path, k) >= 0 ||
          find_child_object(objects[o].path, k) >= 0 ||
          (strcmp(objects[o].path, "calibration") == 0 &&
           strcmp(k, "layers") == 0))
        continue;
      valid_keys(keys, sizeof keys, objects[o].path);
      dotted(name, sizeof name, objects[o].path, k);
      return ooc_err_set(err, OOC_ENOTFOUND, "%s: %s: unknown key (%s)",
                         origin, name, keys);
    }
  }
  return OOC_OK;
}

/* The JSON node of object path `obj` (NULL if absent), checking that it
 * and its parents are objects. */
static int
get_object(const cJSON *root, const char *obj, const cJSON **out,
           const char *origin, ooc_err *err)
{
  char buf[200];
  const cJSON *node = root;
  int o = find_object(obj), rc;

  *out = NULL;
  if (o > 0) {
    const cJSON *parent;
    if ((rc = get_object(root, objects[o].parent, &parent, origin, err)) < 0)
      return rc;
    if (parent == NULL)
      return OOC_OK;
    node = cJSON_GetObjectItemCaseSensitive(parent, objects[o].key);
    if (node == NULL)
      return OOC_OK;
    if (!cJSON_IsObject(node)) {
      show(buf, sizeof buf, node);
      return ooc_err_set(err, OOC_EINVAL, "%s: %s: must be an object (got %s)",
                         origin, obj, buf);
    }
  }
  *out = node;
  return OOC_OK;
}

/* "ORIGIN: NAME: must be WHAT (got VALUE[, set by --hw-set])"; the value
 * is printed only here, on the error path. */
static int
type_error(ooc_err *err, const char *origin, const char *name,
           const char *what, const cJSON *it, const char *from)
{
  char got[64];

  show(got, sizeof got, it);
  return ooc_err_set(err, OOC_EINVAL, "%s: %s: must be %s (got %s%s)", origin,
                     name, what, got, from);
}

static int
convert_field(const cJSON *root, const field *fd, const char *via,
              ooc_hw *hw, const char *origin, ooc_err *err)
{
  char name[160], got[64], from[80];
  const cJSON *obj, *it;
  char *base = (char *)hw + fd->off;
  double v = 0, x;
  int rc;

  if (via != NULL)
    snprintf(from, sizeof from, ", set by %.60s", via);
  else
    from[0] = '\0';
  dotted(name, sizeof name, fd->obj, fd->key);
  if ((rc = get_object(root, fd->obj, &obj, origin, err)) < 0)
    return rc;
  it = obj ? cJSON_GetObjectItemCaseSensitive(obj, fd->key) : NULL;
  if (it == NULL && fd->optional)
    return OOC_OK;
  if (it == NULL)
    return ooc_err_set(err, OOC_EINVAL, "%s: %s: missing (required)", origin,
                       name);
  switch (fd->type) {
  case T_STR: {
    int c;
    if (!cJSON_IsString(it) || it->valuestring[0] == '\0')
      return type_error(err, origin, name, "a non-empty string", it, from);
    /* JSON lets one in escaped ("\n"); the tables, plots and reports
     * print names as they are. */
    if ((c = ooc_control_char(it->valuestring)) >= 0)
      return ooc_err_set(err, OOC_EINVAL, "%s: %s: holds control character "
                         "0x%02x (it is printed as it is)", origin, name, c);
    *(char **)base = strdup(it->valuestring);
    if (*(char **)base == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
    return OOC_OK;
  }
  case T_BOOL:
    if (!cJSON_IsBool(it))
      return type_error(err, origin, name, "true or false", it, from);
    *(int *)base = cJSON_IsTrue(it) ? 1 : 0;
    return OOC_OK;
  case T_NUM:
  case T_INT:
    if (!cJSON_IsNumber(it))
      return type_error(err, origin, name, "a number", it, from);
    v = it->valuedouble;
    snprintf(got, sizeof got, "%g", v);
    if (!isfinite(v))
      return ooc_err_set(err, OOC_ERANGE,
                         "%s: %s: must be a finite number (got %s%s)", origin,
                         name, got, from);
    break;
  }
  switch (fd->check) {
  case C_ANY:
    break;
  case C_POS:
    if (!(v > 0))
      return ooc_err_set(err, OOC_ERANGE, "%s: %s: must be > 0 (got %s%s)",
                         origin, name, got, from);
    break;
  case C_NONNEG:
    if (!(v >= 0))
      return ooc_err_set(err, OOC_ERANGE, "%s: %s: must be >= 0 (got %s%s)",
                         origin, name, got, from);
    break;
  case C_FRAC:
    if (!(v > 0 && v <= 1))
      return ooc_err_set(err, OOC_ERANGE,
                         "%s: %s: must be in (0, 1] (got %s%s)", origin, name,
                         got, from);
    break;
  case C_GE1:
    if (!(v >= 1) || v != floor(v) || v > 1e6)
      return ooc_err_set(err, OOC_ERANGE,
                         "%s: %s: must be an integer >= 1 (got %s%s)", origin,
                         name, got, from);
    break;
  }
  x = v * fd->scale;
  /* In the struct's units a value must stay a usable number: finite, and
   * a positive one not rounding to zero (a 1e-7 MiB granularity is 0
   * bytes, which the allocators would divide by; 1e-300 GiB of host memory
   * would read as "no limit"). */
  if (!isfinite(x))
    return ooc_err_set(err, OOC_ERANGE, "%s: %s: too large (got %s%s)",
                       origin, name, got, from);
  switch (fd->dest) {
  case D_DBL:
    if (fd->check == C_POS && !(x > 0))
      return ooc_err_set(err, OOC_ERANGE, "%s: %s: rounds to 0 (got %s%s)",
                         origin, name, got, from);
    *(double *)base = x;
    break;
  case D_U64:
    if (x >= 9.2e18)
      return ooc_err_set(err, OOC_ERANGE, "%s: %s: too large (got %s%s)",
                         origin, name, got, from);
    if (fd->check == C_POS && llround(x) < 1)
      return ooc_err_set(err, OOC_ERANGE, "%s: %s: rounds to 0 bytes (got "
                         "%s%s); it must be at least 1 byte", origin, name,
                         got, from);
    *(uint64_t *)base = (uint64_t)llround(x);
    break;
  case D_NS:
    if (x >= 4.6e18)
      return ooc_err_set(err, OOC_ERANGE, "%s: %s: too large (got %s%s)",
                         origin, name, got, from);
    *(int64_t *)base = (int64_t)llround(x);
    break;
  case D_INT:
    *(int *)base = (int)v;
    break;
  case D_STR:
    break;
  }
  return OOC_OK;
}

/* Flatten a _source value (string, number, array or object of them) into
 * one line: objects as "key: value; ...", arrays as "a, b". */
static int
flatten(const cJSON *it, char **buf, size_t *len, size_t *cap)
{
  char num[64];
  const char *s = NULL;
  const cJSON *c;
  int first = 1;

#define APPEND(str)                                                       \
  do {                                                                    \
    size_t L_ = strlen(str);                                              \
    if (*len + L_ + 1 > *cap) {                                           \
      size_t nc_ = (*cap + L_ + 1) * 2;                                   \
      char *nb_ = realloc(*buf, nc_);                                     \
      if (nb_ == NULL)                                                    \
        return OOC_ENOMEM;                                                \
      *buf = nb_;                                                         \
      *cap = nc_;                                                         \
    }                                                                     \
    memcpy(*buf + *len, str, L_ + 1);                                     \
    *len += L_;                                                           \
  } while (0)

  if (cJSON_IsString(it))
    s = it->valuestring;
  else if (cJSON_IsNumber(it)) {
    snprintf(num, sizeof num, "%g", it->valuedouble);
    s = num;
  } else if (cJSON_IsBool(it))
    s = cJSON_IsTrue(it) ? "true" : "false";
  if (s != NULL) {
    APPEND(s);
    return OOC_OK;
  }
  cJSON_ArrayForEach(c, it) {
    if (!first)
      APPEND(cJSON_IsObject(it) ? "; " : ", ");
    first = 0;
    if (cJSON_IsObject(it)) {
      APPEND(c->string);
      APPEND(": ");
    }
    if (flatten(c, buf, len, cap) < 0)
      return OOC_ENOMEM;
  }
  return OOC_OK;
#undef APPEND
}

typedef struct calib_tmp {
  ooc_calib_entry e;
  int idx;              /* position in the file, for messages */
} calib_tmp;

static int
cmp_calib(const void *a, const void *b)
{
  const calib_tmp *x = a, *y = b;
  int c;

  if (x->e.hash != y->e.hash)
    return x->e.hash < y->e.hash ? -1 : 1;
  c = strcmp(x->e.sig, y->e.sig);
  if (c != 0)
    return c;
  if (x->e.algo != y->e.algo)
    return x->e.algo < y->e.algo ? -1 : 1;
  return x->idx - y->idx;
}

/* One calibrated time: absent -> -1; else >= 0 us -> ns. */
static int
calib_time(const cJSON *ent, const char *key, int i, int64_t *out,
           const char *origin, ooc_err *err)
{
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(ent, key);
  char got[64];

  *out = -1;
  if (it == NULL)
    return OOC_OK;
  if (!cJSON_IsNumber(it)) {
    show(got, sizeof got, it);
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: calibration.layers[%d].%s: must be a number "
                       "(got %s)", origin, i, key, got);
  }
  if (!(it->valuedouble >= 0) || it->valuedouble > 4.6e15)
    return ooc_err_set(err, OOC_ERANGE,
                       "%s: calibration.layers[%d].%s: must be in [0, "
                       "4.6e15] microseconds (got %g)", origin, i, key,
                       it->valuedouble);
  *out = (int64_t)llround(it->valuedouble * 1e3);
  return OOC_OK;
}

/* The keys of a calibration entry. */
static const char *const calib_keys[] = {
  "sig", "algo", "offered", "fwd_us", "bwd_us", "recomp_us", NULL
};

/* Entry i of the table (ent) into e: its keys, signature, kernel algorithm,
 * whether it is offered, and its times. e->sig is a heap copy. */
static int
calib_entry(const cJSON *ent, int i, ooc_calib_entry *e, const char *origin,
            ooc_err *err)
{
  char names[160];
  const cJSON *sig, *algo, *offered, *k;
  int j, rc;

  if (!cJSON_IsObject(ent))
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: calibration.layers[%d]: must be an object",
                       origin, i);
  cJSON_ArrayForEach(k, ent) {
    if (repeats(ent, k))
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: calibration.layers[%d].%s: duplicate key",
                         origin, i, k->string);
    for (j = 0; calib_keys[j] != NULL; j++)
      if (strcmp(k->string, calib_keys[j]) == 0)
        break;
    if (k->string[0] == '_' || calib_keys[j] != NULL)
      continue;
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: calibration.layers[%d].%s: unknown key (valid "
                       "keys: %s)", origin, i, k->string,
                       ooc_join_names(calib_keys, names, sizeof names));
  }
  sig = cJSON_GetObjectItemCaseSensitive(ent, "sig");
  if (sig == NULL || !cJSON_IsString(sig) || sig->valuestring[0] == '\0')
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: calibration.layers[%d].sig: %s", origin, i,
                       sig == NULL ? "missing (required)"
                                   : "must be a non-empty string");
  e->algo = OOC_ALGO_DEFAULT;
  algo = cJSON_GetObjectItemCaseSensitive(ent, "algo");
  if (algo != NULL) {
    ooc_algo a;
    if (!cJSON_IsString(algo) || ooc_algo_parse(algo->valuestring, &a) < 0) {
      show(names, sizeof names, algo);
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: calibration.layers[%d].algo: unknown kernel "
                         "algorithm %s (valid: default, implicit_gemm, "
                         "precomp_gemm, fft, fft_tiling, winograd, "
                         "winograd_nonfused)", origin, i, names);
    }
    e->algo = (uint8_t)a;
  }
  e->offered = 1;
  offered = cJSON_GetObjectItemCaseSensitive(ent, "offered");
  if (offered != NULL) {
    if (!cJSON_IsBool(offered)) {
      show(names, sizeof names, offered);
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: calibration.layers[%d].offered: must be true "
                         "or false (got %s)", origin, i, names);
    }
    e->offered = cJSON_IsTrue(offered) ? 1 : 0;
  }
  if ((rc = calib_time(ent, "fwd_us", i, &e->fwd_ns, origin, err)) < 0 ||
      (rc = calib_time(ent, "bwd_us", i, &e->bwd_ns, origin, err)) < 0 ||
      (rc = calib_time(ent, "recomp_us", i, &e->recomp_ns, origin, err)) < 0)
    return rc;
  if (!e->offered) {
    if (e->algo == OOC_ALGO_DEFAULT)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: calibration.layers[%d].offered: false needs "
                         "an algo other than default (every layer has its "
                         "default kernel)", origin, i);
    if (e->fwd_ns >= 0 || e->bwd_ns >= 0 || e->recomp_ns >= 0)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: calibration.layers[%d]: an entry with offered "
                         "false has no times", origin, i);
  } else if (e->fwd_ns < 0 && e->bwd_ns < 0 && e->recomp_ns < 0) {
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: calibration.layers[%d]: needs fwd_us, bwd_us or "
                       "recomp_us", origin, i);
  }
  e->sig = strdup(sig->valuestring);
  if (e->sig == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
  e->hash = ooc_hash64(sig->valuestring, strlen(sig->valuestring),
                       OOC_HASH_SEED);
  return OOC_OK;
}

static int
load_calibration(const cJSON *root, ooc_hw *hw, const char *origin,
                 ooc_err *err)
{
  const cJSON *cal, *layers, *ent;
  calib_tmp *tmp = NULL;
  int n, i, rc;

  if ((rc = get_object(root, "calibration", &cal, origin, err)) < 0)
    return rc;
  if (cal == NULL)
    return OOC_OK;
  layers = cJSON_GetObjectItemCaseSensitive(cal, "layers");
  if (layers == NULL)
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: calibration.layers: missing (required)", origin);
  if (!cJSON_IsArray(layers))
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: calibration.layers: must be an array", origin);
  n = cJSON_GetArraySize(layers);
  if (n == 0)
    return OOC_OK;
  tmp = calloc((size_t)n, sizeof *tmp);
  hw->calib = calloc((size_t)n, sizeof *hw->calib);
  if (tmp == NULL || hw->calib == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
    goto fail;
  }
  i = 0;
  cJSON_ArrayForEach(ent, layers) {
    tmp[i].idx = i;
    if ((rc = calib_entry(ent, i, &tmp[i].e, origin, err)) < 0)
      goto fail;
    hw->n_calib = ++i;
  }
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_calib);
  for (i = 0; i < n; i++) {
    hw->calib[i] = tmp[i].e;
    tmp[i].e.sig = NULL;
  }
  for (i = 1; i < n; i++)
    if (hw->calib[i].hash == hw->calib[i - 1].hash &&
        hw->calib[i].algo == hw->calib[i - 1].algo &&
        strcmp(hw->calib[i].sig, hw->calib[i - 1].sig) == 0) {
      rc = ooc_err_set(err, OOC_EINVAL,
                       "%s: calibration.layers[%d].sig: duplicate signature "
                       "'%s'%s%s%s (first at [%d])", origin, tmp[i].idx,
                       hw->calib[i].sig,
                       hw->calib[i].algo ? " with algo '" : "",
                       hw->calib[i].algo
                           ? ooc_algo_name((ooc_algo)hw->calib[i].algo) : "",
                       hw->calib[i].algo ? "'" : "", tmp[i - 1].idx);
      goto fail;
    }
  free(tmp);
  return OOC_OK;
fail:
  if (tmp != NULL)
    for (i = 0; i < n; i++)
      free((char *)tmp[i].e.sig);
  free(tmp);
  return rc;
}

/* Cross-field checks after conversion. */
static int
check_consistency(const ooc_hw *hw, const char *origin, ooc_err *err)
{
  if (hw->mem_usable > hw->mem_total)
    return ooc_err_set(err, OOC_ERANGE,
                       "%s: memory.usable_GiB: must be <= memory.total_GiB "
                       "(got %g > %g)", origin, (double)hw->mem_usable / GiB,
                       (double)hw->mem_total / GiB);
  if (hw->fp32_uses_tf32 && !(hw->tensor_flops[OOC_FP32] > 0))
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: compute.fp32_uses_tf32: true needs "
                       "compute.tensor_tf32_TFLOPS > 0", origin);
  if (hw->va_chunk_bytes % hw->va_granularity != 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: allocator.va_chunk_MiB: must be a multiple of "
                       "allocator.va_granularity_MiB (got %g and %g)", origin,
                       (double)hw->va_chunk_bytes / MiB,
                       (double)hw->va_granularity / MiB);
  /* The va allocator maps memory a chunk at a time: one larger than the
   * device would make every plan under it run out of memory. */
  if (hw->va_chunk_bytes > hw->mem_total)
    return ooc_err_set(err, OOC_ERANGE,
                       "%s: allocator.va_chunk_MiB: must be at most the "
                       "device's memory.total_GiB (got %g MiB > %g GiB)",
                       origin, (double)hw->va_chunk_bytes / MiB,
                       (double)hw->mem_total / GiB);
  return OOC_OK;
}

/* "malformed JSON at line L, column C" from the parser's stop position. */
static int
parse_error(const char *json, const char *end, const char *origin,
            ooc_err *err)
{
  int line, col;

  if (end == NULL)
    return ooc_err_set(err, OOC_EPARSE, "%s: malformed JSON", origin);
  ooc_text_pos(json, end, &line, &col);
  if (*end == '\0')
    return ooc_err_set(err, OOC_EPARSE,
                       "%s: malformed JSON: unexpected end of file at line "
                       "%d, column %d", origin, line, col);
  return ooc_err_set(err, OOC_EPARSE,
                     "%s: malformed JSON near line %d, column %d", origin, line,
                     col);
}

static int
load_tree(const char *json, const char *origin, const char *path,
          const ooc_hw_override *ov, int n_ov, ooc_hw **out, ooc_err *err)
{
  const char *overridden[N_FIELDS];
  double orig[4];
  const char *end = NULL;
  const cJSON *src;
  cJSON *root;
  ooc_hw *hw = NULL;
  int i, rc;

  *out = NULL;
  memset(overridden, 0, sizeof overridden);
  if ((rc = ooc_json_precheck(json, strlen(json), OOC_HW_MAX_BYTES,
                              OOC_HW_MAX_DEPTH, origin, "a profile",
                              err)) < 0)
    return rc;
  root = cJSON_ParseWithOpts(json, &end, 1);
  if (root == NULL)
    return parse_error(json, end, origin, err);
  if ((rc = ooc_json_strict(json, strlen(json), origin, "a profile",
                            err)) < 0)
    goto fail;
  if (!cJSON_IsObject(root)) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: top level must be a JSON object",
                     origin);
    goto fail;
  }
  read_link_rates(root, orig);
  for (i = 0; i < n_ov; i++)
    if ((rc = apply_override(root, &ov[i], origin, overridden, err)) < 0)
      goto fail;
  if ((rc = scale_duplex(root, overridden, orig, origin, err)) < 0)
    goto fail;
  if ((rc = check_unknown(root, origin, err)) < 0)
    goto fail;
  hw = calloc(1, sizeof *hw);
  if (hw == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
    goto fail;
  }
  /* Optional fields: tensor_eff[c] < 0 means "as eff[c]". */
  for (i = 0; i < OOC_CLASS_COUNT; i++)
    hw->tensor_eff[i] = hw->tensor_eff16[i] = -1;
  hw->free_syncs = hw->va_unmap_syncs = 1;
  hw->gemm_tile = 128;
  hw->max_split_k = 32;
  for (i = 0; i < N_FIELDS; i++)
    if ((rc = convert_field(root, &fields[i], overridden[i], hw, origin,
                            err)) < 0)
      goto fail;
  for (i = 0; i < OOC_CLASS_COUNT; i++)
    if (hw->tensor_eff[i] < 0)
      hw->tensor_eff[i] = hw->eff[i];
  for (i = 0; i < OOC_CLASS_COUNT; i++)
    if (hw->tensor_eff16[i] < 0)
      hw->tensor_eff16[i] = hw->tensor_eff[i];
  hw->algo_factor[OOC_ALGO_DEFAULT] = 1;
  if ((rc = check_consistency(hw, origin, err)) < 0)
    goto fail;
  if ((rc = load_calibration(root, hw, origin, err)) < 0)
    goto fail;
  src = cJSON_GetObjectItemCaseSensitive(root, "_source");
  {
    size_t len = 0, cap = 0;
    hw->source = NULL;
    if (src != NULL && flatten(src, &hw->source, &len, &cap) < 0) {
      rc = ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
      goto fail;
    }
    if (hw->source == NULL)
      hw->source = strdup("");
  }
  hw->path = strdup(path);
  hw->origin = strdup(origin);
  if (hw->source == NULL || hw->path == NULL || hw->origin == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
    goto fail;
  }
  cJSON_Delete(root);
  *out = hw;
  return OOC_OK;
fail:
  cJSON_Delete(root);
  ooc_hw_free(hw);
  return rc;
}

int
ooc_hw_load_string(const char *json, const char *origin,
                   const ooc_hw_override *ov, int n_ov, ooc_hw **out,
                   ooc_err *err)
{
  if (out == NULL || json == NULL)
    return ooc_err_set(err, OOC_EINVAL, "ooc_hw_load_string: NULL argument");
  if (origin == NULL)
    origin = "<string>";
  return load_tree(json, origin, origin, ov, n_ov, out, err);
}

int
ooc_hw_load(const char *name_or_path, const ooc_hw_override *ov, int n_ov,
            ooc_hw **out, ooc_err *err)
{
  char origin[256];
  char *path = NULL, *text = NULL;
  size_t L;
  int rc;

  if (out == NULL || name_or_path == NULL)
    return ooc_err_set(err, OOC_EINVAL, "ooc_hw_load: NULL argument");
  *out = NULL;
  if ((rc = ooc_data_find("hwprofiles", name_or_path, &path, err)) < 0)
    return rc;
  L = strlen(name_or_path);
  /* Messages name the file as the user would: a zoo profile by its place in
   * the data directory, a path as given. */
  if (strchr(name_or_path, '/') == NULL &&
      !(L > 5 && strcmp(name_or_path + L - 5, ".json") == 0))
    snprintf(origin, sizeof origin, "hwprofiles/%s.json", name_or_path);
  else
    snprintf(origin, sizeof origin, "%s", name_or_path);
  if ((rc = ooc_read_file(path, &text, NULL, err)) < 0)
    goto done;
  rc = load_tree(text, origin, path, ov, n_ov, out, err);
done:
  free(text);
  free(path);
  return rc;
}

/* --- derived profiles (ooc_hw_derive) -------------------------------- */

/* Remove the optional field or object named by the dotted key from the
 * tree (nothing when absent). */
static int
remove_key(cJSON *root, const char *key, const char *origin, ooc_err *err)
{
  char keybuf[256], path[256];
  char *comp, *dot;
  cJSON *node = root;
  int f, o;

  if (strlen(key) >= sizeof keybuf)
    return ooc_err_set(err, OOC_EINVAL, "%s: key too long", origin);
  snprintf(keybuf, sizeof keybuf, "%s", key);
  path[0] = '\0';
  comp = keybuf;
  while ((dot = strchr(comp, '.')) != NULL) {
    *dot = '\0';
    if ((o = find_child_object(path, comp)) < 0)
      return ooc_err_set(err, OOC_ENOTFOUND, "%s: %s: unknown key '%s'",
                         origin, key, comp);
    snprintf(path, sizeof path, "%s", objects[o].path);
    node = node ? cJSON_GetObjectItemCaseSensitive(node, comp) : NULL;
    comp = dot + 1;
  }
  f = find_field(path, comp);
  o = find_child_object(path, comp);
  if (f < 0 && o < 0)
    return ooc_err_set(err, OOC_ENOTFOUND, "%s: %s: unknown key '%s'",
                       origin, key, comp);
  if ((f >= 0 && !fields[f].optional) || (f < 0 && !objects[o].optional))
    return ooc_err_set(err, OOC_EINVAL, "%s: %s: a required key cannot be "
                       "removed", origin, key);
  if (cJSON_IsObject(node))
    cJSON_DeleteItemFromObjectCaseSensitive(node, comp);
  return OOC_OK;
}

/* Microseconds from ns, three decimals: reads back as the same ns. */
static int
add_us(cJSON *o, const char *key, int64_t ns)
{
  return ns < 0 || cJSON_AddNumberToObject(o, key, (double)ns / 1e3) != NULL;
}

/* The calibration object of the n entries. */
static cJSON *
calib_tree(const ooc_calib_entry *e, int n, const char *source)
{
  cJSON *cal = cJSON_CreateObject(), *layers, *it;
  int i, ok;

  if (cal == NULL)
    return NULL;
  ok = (source == NULL ||
        cJSON_AddStringToObject(cal, "_source", source) != NULL) &&
       (layers = cJSON_AddArrayToObject(cal, "layers")) != NULL;
  for (i = 0; ok && i < n; i++) {
    ok = (it = cJSON_CreateObject()) != NULL &&
         cJSON_AddItemToArray(layers, it) &&
         cJSON_AddStringToObject(it, "sig", e[i].sig) != NULL &&
         (e[i].algo == OOC_ALGO_DEFAULT ||
          cJSON_AddStringToObject(it, "algo",
                                  ooc_algo_name((ooc_algo)e[i].algo))
              != NULL) &&
         (e[i].offered || cJSON_AddFalseToObject(it, "offered") != NULL) &&
         add_us(it, "fwd_us", e[i].fwd_ns) &&
         add_us(it, "bwd_us", e[i].bwd_ns) &&
         add_us(it, "recomp_us", e[i].recomp_ns);
  }
  if (!ok) {
    cJSON_Delete(cal);
    return NULL;
  }
  return cal;
}

/* cJSON's formatted output indents with tabs and puts one after each
 * colon: two spaces per level and one space instead, as the zoo
 * profiles are written. A raw tab only ever formats (strings escape
 * theirs). In place. */
static void
untab(char *text)
{
  char *r, *w;
  size_t extra = 0;

  for (r = text; *r; r++)
    extra += *r == '\t' && (r == text || r[-1] == '\n' || r[-1] == '\t');
  w = text + strlen(text) + extra;
  *w = '\0';
  for (r = text + strlen(text); r > text;) {
    r--;
    if (*r == '\t' && (r == text || r[-1] == '\n' || r[-1] == '\t')) {
      *--w = ' ';
      *--w = ' ';
    } else {
      *--w = *r == '\t' ? ' ' : *r;
    }
  }
}

int
ooc_hw_derive(const char *base, const ooc_hw_override *set, int n_set,
              const char *source, const ooc_calib_entry *entries,
              int n_entries, const char *calib_source, char **json,
              ooc_err *err)
{
  const char *overridden[N_FIELDS];
  double orig[4];
  char origin[256], *path = NULL, *text = NULL, *out = NULL, *grown;
  const char *end = NULL;
  cJSON *root = NULL, *item;
  ooc_hw *check = NULL;
  size_t L;
  int i, rc;

  if (json == NULL || base == NULL)
    return ooc_err_set(err, OOC_EINVAL, "ooc_hw_derive: NULL argument");
  *json = NULL;
  memset(overridden, 0, sizeof overridden);
  if ((rc = ooc_data_find("hwprofiles", base, &path, err)) < 0)
    return rc;
  L = strlen(base);
  if (strchr(base, '/') == NULL &&
      !(L > 5 && strcmp(base + L - 5, ".json") == 0))
    snprintf(origin, sizeof origin, "hwprofiles/%s.json", base);
  else
    snprintf(origin, sizeof origin, "%s", base);
  if ((rc = ooc_read_file(path, &text, NULL, err)) < 0 ||
      (rc = ooc_json_precheck(text, strlen(text), OOC_HW_MAX_BYTES,
                              OOC_HW_MAX_DEPTH, origin, "a profile",
                              err)) < 0)
    goto done;
  if ((root = cJSON_ParseWithOpts(text, &end, 1)) == NULL) {
    rc = parse_error(text, end, origin, err);
    goto done;
  }
  if ((rc = ooc_json_strict(text, strlen(text), origin, "a profile",
                            err)) < 0)
    goto done;
  if (!cJSON_IsObject(root)) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: top level must be a JSON object",
                     origin);
    goto done;
  }
  read_link_rates(root, orig);
  for (i = 0; i < n_set; i++) {
    rc = set[i].value == NULL
             ? remove_key(root, set[i].key, origin, err)
             : apply_override(root, &set[i], origin, overridden, err);
    if (rc < 0)
      goto done;
  }
  if ((rc = scale_duplex(root, overridden, orig, origin, err)) < 0)
    goto done;
  if (source != NULL) {
    cJSON *src = cJSON_Parse(source);
    if (src == NULL || !cJSON_IsObject(src)) {
      cJSON_Delete(src);
      rc = ooc_err_set(err, OOC_EINVAL, "ooc_hw_derive: _source is not a "
                       "JSON object");
      goto done;
    }
    if (cJSON_GetObjectItemCaseSensitive(root, "_source") != NULL)
      cJSON_ReplaceItemInObjectCaseSensitive(root, "_source", src);
    else
      cJSON_AddItemToObject(root, "_source", src);
  }
  if (n_entries >= 0)
    cJSON_DeleteItemFromObjectCaseSensitive(root, "calibration");
  if (n_entries > 0) {
    if ((item = calib_tree(entries, n_entries, calib_source)) == NULL)
      goto nomem;
    cJSON_AddItemToObject(root, "calibration", item);
  }
  if ((out = cJSON_Print(root)) == NULL)
    goto nomem;
  /* Room for the indentation (two spaces per tab) and a final newline. */
  L = strlen(out);
  if ((grown = realloc(out, 2 * L + 2)) == NULL)
    goto nomem;
  out = grown;
  untab(out);
  strcat(out, "\n");
  if ((rc = load_tree(out, origin, path, NULL, 0, &check, err)) < 0) {
    ooc_err_prefix(err, rc, "profile derived from ");
    goto done;
  }
  *json = out;
  out = NULL;
  rc = OOC_OK;
  goto done;
nomem:
  rc = ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
done:
  ooc_hw_free(check);
  cJSON_Delete(root);
  free(out);
  free(text);
  free(path);
  return rc;
}

void
ooc_hw_free(ooc_hw *hw)
{
  int i;

  if (hw == NULL)
    return;
  free(hw->name);
  free(hw->path);
  free(hw->origin);
  free(hw->gpu);
  free(hw->source);
  for (i = 0; i < hw->n_calib; i++)
    free((char *)hw->calib[i].sig);
  free(hw->calib);
  free(hw);
}

const ooc_calib_entry *
ooc_hw_calib_find_algo(const ooc_hw *hw, const char *sig, int algo)
{
  uint64_t h;
  int lo = 0, hi;

  if (hw == NULL || sig == NULL || hw->n_calib == 0)
    return NULL;
  h = ooc_hash64(sig, strlen(sig), OOC_HASH_SEED);
  hi = hw->n_calib;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (hw->calib[mid].hash < h)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (; lo < hw->n_calib && hw->calib[lo].hash == h; lo++)
    if (hw->calib[lo].algo == algo && strcmp(hw->calib[lo].sig, sig) == 0)
      return &hw->calib[lo];
  return NULL;
}

const ooc_calib_entry *
ooc_hw_calib_find(const ooc_hw *hw, const char *sig)
{
  return ooc_hw_calib_find_algo(hw, sig, OOC_ALGO_DEFAULT);
}
