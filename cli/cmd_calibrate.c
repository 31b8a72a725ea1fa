/* cli/cmd_calibrate.c — `oocsim calibrate`: measure this machine through
 * an executor backend and write a profile the simulator uses as it is
 * (executor/calibrate.h, docs/calibration.md).
 *
 * The profile is the base profile's JSON with the measured fields set and
 * a calibration table (ir/hw.h, ooc_hw_derive):
 *   - per layer signature: the forward and backward kernel times measured
 *     in the in-core replay, each with the replay's per-kernel overhead
 *     (a recompute costs the forward: the same kernel);
 *   - compute.launch_us: that overhead; compute.hbm_GBps: what makes the
 *     optimizer step's roofline equal its measured time;
 *     compute.copy_interference.*: per op class;
 *   - link: the fitted bandwidths and latency (pageable = pinned on a
 *     backend whose device memory is host memory);
 *   - allocator: segment malloc (fitted against size) and free, chunk
 *     create / map / unmap / release, a pinned host buffer;
 *   - memory and host memory: the machine's, on the cpu backend;
 *   - _source: what was measured, on which machine, with what, and when.
 *
 * Ownership: everything is local to one command run. Cost: the
 * measurement (minutes for a model whose iteration takes seconds).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "analysis/scenario.h"
#include "executor/calibrate.h"
#include "base/atomic.h"
#include "base/progress.h"
#include "base/util.h"

static const ooc_cli_doc calibrate_doc = {
  .name = "calibrate", .cmd = OOC_CMD_CALIBRATE,
  .usage = "Usage: oocsim calibrate [--backend cpu|cuda] -m MODEL -b BATCH "
           "[--base PROFILE]\n"
           "                        [--repeat N] [--link-GBps X] "
           "-o PROFILE.json\n",
  .about =
    "Measure this machine through an executor backend and write a\n"
    "hardware profile the simulator uses as it is: the model's kernels\n"
    "per layer signature (forward, backward; a recompute runs the\n"
    "forward) and the replay's per-kernel overhead, the optimizer step,\n"
    "how much kernels slow while copies run (per op class), copy\n"
    "bandwidth and latency per direction and both at once (fitted with\n"
    "GSL), and the allocator's driver actions. Fields it does not\n"
    "measure are the base profile's. docs/calibration.md.\n",
  .examples =
    "  oocsim calibrate --backend cpu -m resnet50 -b 16 --set image=64 "
    "--link-GBps 2 -o cpu.json\n",
};

/* Host memory from /proc/meminfo (kB lines), 0 when unknown. */
static uint64_t
meminfo(const char *key)
{
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  size_t k = strlen(key);
  uint64_t v = 0;

  if (f == NULL)
    return 0;
  while (fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, key, k) == 0 && line[k] == ':') {
      v = strtoull(line + k + 1, NULL, 10) * 1024;
      break;
    }
  fclose(f);
  return v;
}

typedef struct kv_list {
  ooc_hw_override kv[48];
  char val[48][48];
  int n;
} kv_list;

static void
kv_add(kv_list *l, const char *key, const char *fmt, double x)
{
  if (l->n >= 48)
    return;
  snprintf(l->val[l->n], sizeof l->val[l->n], fmt, x);
  l->kv[l->n] = (ooc_hw_override){ .key = key, .value = l->val[l->n] };
  l->n++;
}

static void
kv_str(kv_list *l, const char *key, const char *value)
{
  if (l->n >= 48)
    return;
  snprintf(l->val[l->n], sizeof l->val[l->n], "%s", value);
  l->kv[l->n] = (ooc_hw_override){ .key = key, .value = l->val[l->n] };
  l->n++;
}

/* Whether cudaFree waited for the queued work: it took more than half of
 * what the work takes (an idle cudaFree is microseconds). */
static int
free_waited(const ooc_calib_result *r)
{
  return r->api.free_busy_ns > r->api.busy_ns / 2;
}

static int
cmp_entry(const void *a, const void *b)
{
  const ooc_calib_entry *x = a, *y = b;
  int c = strcmp(x->sig, y->sig);

  return c != 0 ? c : (x->algo > y->algo) - (x->algo < y->algo);
}

static int
cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The median of the values of layers [i, j) in v (sorted copy in tmp);
 * -1 when none is measured. */
static int64_t
median_of(const int64_t *v, const int32_t *idx, int32_t n, int64_t *tmp)
{
  int32_t k, m = 0;

  for (k = 0; k < n; k++)
    if (v[idx[k]] >= 0)
      tmp[m++] = v[idx[k]];
  if (m == 0)
    return -1;
  qsort(tmp, (size_t)m, sizeof *tmp, cmp_i64);
  return m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
}

/* Whether any layer of idx[0..n) is OOC_CALIB_REFUSED in v. */
static int
any_refused(const int64_t *v, const int32_t *idx, int32_t n)
{
  int32_t k;

  for (k = 0; k < n; k++)
    if (v[idx[k]] == OOC_CALIB_REFUSED)
      return 1;
  return 0;
}

/* The calibration entries: per distinct layer signature and kernel
 * algorithm measured, the medians over the layers that share the
 * signature, plus the per-kernel overhead; a family the backend refused
 * for any layer of a signature gives an entry with offered false (the
 * simulator then never picks it for such layers). *out and each sig are
 * heap (the caller frees); *n_algo counts the non-default entries and
 * *n_refused those not offered. */
static int
build_entries(const ooc_model *m, const ooc_calib_result *r,
              ooc_calib_entry **out, int *n_out, int *n_algo,
              int *n_refused, ooc_err *err)
{
  size_t cap = ((size_t)m->n_layers + 1) * OOC_ALGO_COUNT;
  ooc_calib_entry *e = calloc(cap, sizeof *e);
  int32_t *idx = malloc(sizeof(int32_t) * (size_t)(m->n_layers + 1));
  int64_t *tmp = malloc(sizeof(int64_t) * (size_t)(m->n_layers + 1));
  uint8_t *seen = malloc((size_t)m->n_layers + 1);
  char **sig = calloc((size_t)m->n_layers + 1, sizeof *sig);
  int32_t i, j, n = 0;
  int a, rc = OOC_OK;

  *n_algo = *n_refused = 0;
  if (e == NULL || idx == NULL || tmp == NULL || seen == NULL ||
      sig == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto done;
  }
  for (i = 0; i < m->n_layers; i++) {
    int len;
    if (m->layers[i].op == OOC_OPK_INPUT)
      continue;
    len = ooc_layer_signature(m, i, NULL, 0);
    if ((sig[i] = malloc((size_t)len + 1)) == NULL) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto done;
    }
    ooc_layer_signature(m, i, sig[i], (size_t)len + 1);
  }
  for (a = 0; a < OOC_ALGO_COUNT; a++) {
    const int64_t *fv = a == 0 ? r->fwd_ns : r->algo_fwd_ns[a];
    const int64_t *bv = a == 0 ? r->bwd_ns : r->algo_bwd_ns[a];
    if (fv == NULL || bv == NULL)
      continue;
    memset(seen, 0, (size_t)m->n_layers + 1);
    for (i = 0; i < m->n_layers; i++) {
      int32_t k = 0;
      int64_t f, b;
      int refused;
      if (sig[i] == NULL || seen[i])
        continue;
      for (j = i; j < m->n_layers; j++)
        if (sig[j] != NULL && !seen[j] && strcmp(sig[j], sig[i]) == 0) {
          seen[j] = 1;
          idx[k++] = j;
        }
      refused = a > 0 && (any_refused(fv, idx, k) || any_refused(bv, idx, k));
      f = refused ? -1 : median_of(fv, idx, k, tmp);
      b = refused ? -1 : median_of(bv, idx, k, tmp);
      if (!refused && f < 0 && b < 0)
        continue;
      if ((e[n].sig = strdup(sig[i])) == NULL) {
        rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
        goto done;
      }
      e[n].algo = (uint8_t)a;
      e[n].offered = !refused;
      e[n].fwd_ns = f >= 0 ? f + r->overhead_ns : -1;
      e[n].bwd_ns = b >= 0 ? b + r->overhead_ns : -1;
      e[n].recomp_ns = -1;
      *n_algo += a > 0;
      *n_refused += refused;
      n++;
    }
  }
  qsort(e, (size_t)n, sizeof *e, cmp_entry);
  *out = e;
  *n_out = n;
  e = NULL;
done:
  if (e != NULL) {
    for (i = 0; i < n; i++)
      free((char *)e[i].sig);
    free(e);
  }
  if (sig != NULL)
    for (i = 0; i < m->n_layers; i++)
      free(sig[i]);
  free(sig);
  free(seen);
  free(idx);
  free(tmp);
  return rc;
}

static const char *const class_keys[OOC_CLASS_COUNT] = {
  "compute.copy_interference.conv", "compute.copy_interference.gemm",
  "compute.copy_interference.norm", "compute.copy_interference.eltwise",
  "compute.copy_interference.pool", "compute.copy_interference.other",
};

/* The measured fields of r as overrides of the base profile. */
static void
overrides(const ooc_cli_args *a, const ooc_model *m, const ooc_hw *base,
          const ooc_calib_result *r, int host_device, const char *name,
          kv_list *l)
{
  double ubytes = 2.0 * (double)m->weight_bytes + (double)m->grad_bytes +
                  2.0 * (double)m->opt_bytes;
  double upd = (double)(r->update_ns - (int64_t)r->update_launches *
                                           r->overhead_ns) * 1e-9;
  double lat = (r->h2d.intercept + r->d2h.intercept) / 2;
  int k;

  (void)a;
  l->kv[l->n] = (ooc_hw_override){ .key = "name", .value = name };
  l->n++;
  kv_add(l, "compute.launch_us", "%.3f", (double)r->overhead_ns * 1e-3);
  if (ubytes > 0 && upd > 0)
    kv_add(l, "compute.hbm_GBps", "%.6g", ubytes / upd / base->mem_eff * 1e-9);
  for (k = 0; k < OOC_CLASS_COUNT; k++)
    kv_add(l, class_keys[k], "%.4f", r->interference[k]);
  kv_add(l, "link.h2d_GBps", "%.6g", 1e-9 / r->h2d.slope);
  kv_add(l, "link.d2h_GBps", "%.6g", 1e-9 / r->d2h.slope);
  kv_add(l, "link.duplex_h2d_GBps", "%.6g", 1e-9 / r->dup_h2d.slope);
  kv_add(l, "link.duplex_d2h_GBps", "%.6g", 1e-9 / r->dup_d2h.slope);
  if (host_device) {
    kv_add(l, "link.h2d_pageable_GBps", "%.6g", 1e-9 / r->h2d.slope);
    kv_add(l, "link.d2h_pageable_GBps", "%.6g", 1e-9 / r->d2h.slope);
  }
  kv_add(l, "link.latency_us", "%.3f", lat > 0 ? lat * 1e6 : 0);
  kv_add(l, "allocator.malloc_us", "%.3f",
         r->seg_malloc.intercept > 0 ? r->seg_malloc.intercept * 1e6 : 0);
  kv_add(l, "allocator.malloc_us_per_GiB", "%.3f",
         r->seg_malloc.slope * 1073741824.0 * 1e6);
  kv_add(l, "allocator.free_us", "%.3f", (double)r->free_ns * 1e-3);
  kv_add(l, "allocator.va_create_us", "%.3f",
         (double)r->chunk_create_ns * 1e-3);
  if (r->has_api && r->api.map_ns > 0) {
    /* cuMemMap and cuMemSetAccess measured apart (the backend's map
     * action does both). */
    kv_add(l, "allocator.va_map_us", "%.3f", (double)r->api.map_ns * 1e-3);
    kv_add(l, "allocator.va_access_us", "%.3f",
           (double)r->api.access_ns * 1e-3);
  } else {
    kv_add(l, "allocator.va_map_us", "%.3f", (double)r->chunk_map_ns * 1e-3);
  }
  kv_add(l, "allocator.va_unmap_us", "%.3f",
         (double)r->chunk_unmap_ns * 1e-3);
  kv_add(l, "allocator.va_release_us", "%.3f",
         (double)r->chunk_release_ns * 1e-3);
  kv_add(l, "allocator.host_alloc_us", "%.3f",
         (double)r->host_alloc_ns * 1e-3);
  /* The host as the executor has it: its per-iteration cost, and a stream
   * thread waking another for an event; each stream thread issues its own
   * work synchronously, so per-kernel and per-copy issue costs are in
   * compute.launch_us and link.latency_us, not on one host clock. */
  kv_add(l, "host.iteration_us", "%.3f", (double)r->iter_overhead_ns * 1e-3);
  kv_add(l, "host.event_sync_us", "%.3f", (double)r->wake_ns * 1e-3);
  kv_add(l, "host.op_us", "%.0f", 0);
  kv_add(l, "host.optimizer_param_us", "%.0f", 0);
  if (r->host_opt_Bps > 0) {
    kv_add(l, "host.optimizer_GBps", "%.3f", r->host_opt_Bps * 1e-9);
    kv_add(l, "host.optimizer_call_us", "%.3f",
           (double)r->host_opt_call_ns * 1e-3);
  }
  kv_add(l, "link.issue_us", "%.0f", 0);
  if (r->has_api)
    kv_str(l, "allocator.free_syncs", free_waited(r) ? "true" : "false");
  if (host_device) {
    uint64_t tot = meminfo("MemTotal"), avail = meminfo("MemAvailable");
    if (tot > 0 && avail > 0) {
      kv_add(l, "memory.total_GiB", "%.3f", (double)tot / 1073741824.0);
      kv_add(l, "memory.usable_GiB", "%.3f",
             (double)avail * 0.9 / 1073741824.0);
      kv_add(l, "host.memory_GiB", "%.3f", (double)tot / 1073741824.0);
    }
  }
}

/* One line per convolution algorithm family measured: how many layers
 * ran it, how many the backend refused, and the median over the layers
 * that ran it of its forward + backward time over the default's. */
static void
print_algorithms(const ooc_model *m, const ooc_calib_result *r, int n_algo,
                 int n_refused)
{
  double *ratio = malloc(sizeof(double) * (size_t)(m->n_layers + 1));
  int a, i;

  if (n_algo == 0 && n_refused == 0) {
    free(ratio);
    return;
  }
  printf("algorithms  %d signature entries, %d of them refused by the "
         "backend\n", n_algo, n_refused);
  for (a = 1; a < OOC_ALGO_COUNT && ratio != NULL; a++) {
    int ran = 0, refused = 0, k;
    if (r->algo_fwd_ns[a] == NULL)
      continue;
    for (i = 0; i < m->n_layers; i++) {
      int64_t f = r->algo_fwd_ns[a][i], b = r->algo_bwd_ns[a][i];
      if (f == OOC_CALIB_REFUSED || b == OOC_CALIB_REFUSED)
        refused++;
      else if (f >= 0 && b >= 0 && r->fwd_ns[i] > 0 && r->bwd_ns[i] > 0)
        ratio[ran++] = (double)(f + b) / (double)(r->fwd_ns[i] +
                                                  r->bwd_ns[i]);
    }
    for (i = 1; i < ran; i++)             /* insertion sort: a few dozen */
      for (k = i; k > 0 && ratio[k - 1] > ratio[k]; k--) {
        double t = ratio[k];
        ratio[k] = ratio[k - 1];
        ratio[k - 1] = t;
      }
    printf("  %-18s ran on %d layers", ooc_algo_name((ooc_algo)a), ran);
    if (ran > 0)
      printf(" (median time x%.3f the default's)",
             ran % 2 ? ratio[ran / 2]
                     : (ratio[ran / 2 - 1] + ratio[ran / 2]) / 2);
    printf(", refused on %d%s%s\n", refused,
           r->algo_failed[a][0] ? ": " : "", r->algo_failed[a]);
  }
  free(ratio);
}

/* A JSON string literal of s into buf (quotes and backslashes escaped). */
static void
jstr(char *buf, size_t n, const char *s)
{
  size_t k = 0;

  if (n < 3)
    return;
  buf[k++] = '"';
  for (; *s != '\0' && k + 3 < n; s++) {
    if (*s == '"' || *s == '\\')
      buf[k++] = '\\';
    buf[k++] = (char)(*s == '\n' || *s == '\t' ? ' ' : *s);
  }
  buf[k++] = '"';
  buf[k] = '\0';
}

int
ooc_cmd_calibrate(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_scenario_spec spec;
  ooc_summary sum = { 0 };
  ooc_program prog;
  ooc_model *model = NULL;
  ooc_hw *base = NULL;
  ooc_scenario_out out = { .program = &prog, .model = &model, .hw = &base };
  const ooc_exec_backend *b;
  const ooc_allocator_type *at;
  ooc_calib_config cfg;
  ooc_calib_result r;
  ooc_calib_entry *ent = NULL;
  ooc_progress pg;
  kv_list kv = { .n = 0 };
  char host[64] = "unknown", date[32], name[128], *json = NULL;
  char src[4096], q1[1200], q2[600], q3[600], q4[700], scen[300];
  const char *base_name, *slash, *dot;
  int n_ent = 0, n_algo = 0, n_refused = 0, i, rc = 1, host_device;
  time_t now = time(NULL);
  struct tm tm;

  ooc_program_init(&prog);
  ooc_calib_result_init(&r);
  if (ooc_cli_args_start(&a, argc, argv, &calibrate_doc, 0,
                         OOC_CLI_MODEL | OOC_CLI_BATCH | OOC_CLI_OUTPUT,
                         &rc))
    goto done;
  if ((b = ooc_exec_backend_find(a.backend != NULL ? a.backend : "cpu",
                                 &err)) == NULL) {
    ooc_err_prefix(&err, OOC_EINVAL, "--backend: ");
    goto fail;
  }
  host_device = strcmp(ooc_exec_backend_name(b), "cpu") == 0;
  if (a.base == NULL && !host_device) {
    ooc_err_set(&err, OOC_EINVAL, "--base: the %s backend needs a base "
                "profile of its device (e.g. --base h100-pcie5)",
                ooc_exec_backend_name(b));
    goto fail;
  }
  base_name = a.base != NULL ? a.base : "cpu-host";
  if (a.dtype_set && a.dtype != OOC_FP32) {
    ooc_err_set(&err, OOC_EINVAL, "--dtype: the executor runs fp32 only");
    goto fail;
  }
  /* The profile's name: -o's file name without ".json". */
  slash = strrchr(a.output, '/');
  slash = slash != NULL ? slash + 1 : a.output;
  dot = strrchr(slash, '.');
  snprintf(name, sizeof name, "%.*s",
           (int)(dot != NULL && strcmp(dot, ".json") == 0 ? dot - slash
                                                          : (long)strlen(slash)),
           slash);
  if (name[0] == '\0') {
    ooc_err_set(&err, OOC_EINVAL, "-o: '%s' names no file", a.output);
    goto fail;
  }
  {
    /* The profile written is not the model or the base profile read,
     * named by path or zoo name. */
    const char *opt[1] = { "-o" }, *path[1] = { a.output };
    if (ooc_cli_check_not_inputs("-m", a.model, "--base", base_name, opt,
                                 path, 1, &err) < 0)
      goto fail;
    /* ... and can be written: said now, not after the measuring. */
    if (ooc_cli_check_outputs(opt, path, 1, 0, &err) < 0)
      goto fail;
  }
  if ((rc = ooc_exec_backend_probe(b, &err)) < 0)
    goto fail;
  /* The in-core program on the base profile. */
  ooc_cli_args_spec(&a, &spec);
  spec.hw = base_name;
  spec.planner = "incore";
  spec.allocator = "caching";
  spec.budget = 0;
  if (ooc_scenario_run(&spec, &sum, &out, &err) < 0)
    goto fail;
  if (!sum.feasible) {
    ooc_err_set(&err, OOC_EINVAL, "%s at batch %lld does not fit the base "
                "profile '%s' in core (%s): calibrate needs every tensor "
                "resident; use a smaller batch or a base with more memory",
                model != NULL ? model->name : a.model, (long long)a.batch,
                base_name, sum.oom.reason);
    goto fail;
  }
  at = ooc_allocator_find("caching", NULL, &err);
  cfg = (ooc_calib_config){
    .backend = b, .model = model, .program = &prog, .hw = base,
    .allocator = at, .budget = base->mem_usable, .threads = a.threads,
    .repeat = a.repeat > 0 ? a.repeat : 3, .link_GBps = a.link_GBps,
    .seed = 42, .algorithms = !a.no_algorithms, .progress = &pg,
  };
  ooc_progress_begin(&pg, isatty(2) ? stderr : NULL, "calibrate");
  rc = ooc_calib_run(&cfg, &r, &err);
  ooc_progress_end(&pg);
  if (rc < 0)
    goto fail;
  if (build_entries(model, &r, &ent, &n_ent, &n_algo, &n_refused, &err) < 0)
    goto fail;
  overrides(&a, model, base, &r, host_device, name, &kv);

  gethostname(host, sizeof host - 1);
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%MZ", &tm);
  snprintf(scen, sizeof scen, "%s, batch %lld, fp32%s", model->name,
           (long long)model->batch, a.n_sets > 0 ? ", with --set" : "");
  jstr(q1, sizeof q1, r.note);
  {
    char t[1100];
    snprintf(t, sizeof t, "[M] oocsim calibrate --backend %s on %s, %s: "
             "%s; %d in-core replay%s of %s (median iteration %.6f s), "
             "kernels per layer signature with the replay's per-kernel "
             "overhead of %.3f us",
             ooc_exec_backend_name(b), host, date, r.note, cfg.repeat,
             cfg.repeat == 1 ? "" : "s", scen,
             (double)r.iteration_ns * 1e-9, (double)r.overhead_ns * 1e-3);
    jstr(q1, sizeof q1, t);
    snprintf(t, sizeof t, "[M] copies of 64 KiB .. %.0f MiB through the "
             "backend (%s host buffers%s), t = latency + bytes / bandwidth "
             "by weighted least squares (GSL): H2D %.3f GB/s, D2H %.3f GB/s, "
             "both at once %.3f / %.3f GB/s, latency %.1f us",
             r.sizes[r.n_sizes - 1] / 1048576.0,
             r.pinned ? "pinned" : "pageable",
             a.link_GBps > 0 ? ", paced" : "",
             1e-9 / r.h2d.slope, 1e-9 / r.d2h.slope, 1e-9 / r.dup_h2d.slope,
             1e-9 / r.dup_d2h.slope,
             (r.h2d.intercept + r.d2h.intercept) / 2 * 1e6);
    jstr(q2, sizeof q2, t);
    snprintf(t, sizeof t, "[M] interference (x per copy in flight): conv "
             "%.3f, gemm %.3f, norm %.3f, eltwise %.3f, pool %.3f, other "
             "%.3f; driver actions measured; base profile %s for the rest",
             r.interference[0], r.interference[1], r.interference[2],
             r.interference[3], r.interference[4], r.interference[5],
             base_name);
    jstr(q3, sizeof q3, t);
  }
  {
    char t[600];
    snprintf(t, sizeof t, "[M] host: the replay's own cost per iteration "
             "%.1f us, a stream thread waking another %.1f us (event "
             "synchronisation)%s", (double)r.iter_overhead_ns * 1e-3,
             (double)r.wake_ns * 1e-3,
             r.has_api ? (free_waited(&r)
                              ? "; cudaFree waits for queued work (free_syncs)"
                              : "; cudaFree does not wait for queued work")
                       : "");
    jstr(q4, sizeof q4, t);
  }
  snprintf(src, sizeof src, "{ \"calibration\": %s, \"link\": %s, "
           "\"host\": %s, \"other\": %s }", q1, q2, q4, q3);
  if (ooc_hw_derive(base_name, kv.kv, kv.n, src, ent, n_ent,
                    "[M] oocsim calibrate: per layer signature, forward "
                    "and backward kernel times in us, overhead included",
                    &json, &err) < 0)
    goto fail;
  if (ooc_atomic_write(a.output, json, &err) < 0) {
    ooc_err_prefix(&err, err.code, "-o: ");
    goto fail;
  }
  printf("%s: profile '%s' calibrated on %s (%s)\n", a.output, name, host,
         r.note);
  printf("kernels     %d signatures from %d replay%s of %s: iteration "
         "%.6f s, overhead %.3f us per kernel, optimizer step %.6f s\n",
         n_ent - n_algo, cfg.repeat, cfg.repeat == 1 ? "" : "s", scen,
         (double)r.iteration_ns * 1e-9,
         (double)r.overhead_ns * 1e-3, (double)r.update_ns * 1e-9);
  print_algorithms(model, &r, n_algo, n_refused);
  printf("copies      H2D %.3f GB/s, D2H %.3f GB/s, both at once %.3f / "
         "%.3f GB/s, latency %.1f us (worst fit residual %.1f%%)%s\n",
         1e-9 / r.h2d.slope, 1e-9 / r.d2h.slope, 1e-9 / r.dup_h2d.slope,
         1e-9 / r.dup_d2h.slope,
         (r.h2d.intercept + r.d2h.intercept) / 2 * 1e6,
         100 * r.h2d.max_rel_residual, a.link_GBps > 0 ? ", paced" : "");
  printf("interference conv %.3f, gemm %.3f, norm %.3f, eltwise %.3f, pool "
         "%.3f, other %.3f (slowdown per copy in flight)\n",
         r.interference[0], r.interference[1], r.interference[2],
         r.interference[3], r.interference[4], r.interference[5]);
  printf("driver      segment malloc %.1f us + %.1f us/GiB, free %.1f us, "
         "chunk create %.1f / map %.1f / unmap %.1f / release %.1f us, "
         "pinned host buffer %.1f us\n",
         r.seg_malloc.intercept * 1e6,
         r.seg_malloc.slope * 1073741824.0 * 1e6, (double)r.free_ns * 1e-3,
         (double)r.chunk_create_ns * 1e-3, (double)r.chunk_map_ns * 1e-3,
         (double)r.chunk_unmap_ns * 1e-3, (double)r.chunk_release_ns * 1e-3,
         (double)r.host_alloc_ns * 1e-3);
  printf("host        replay overhead %.1f us per iteration, thread wake-up "
         "%.1f us, optimizer step (%s on the CPU) %.2f GB/s + %.1f us "
         "per step\n", (double)r.iter_overhead_ns * 1e-3,
         (double)r.wake_ns * 1e-3, ooc_optimizer_name(r.host_opt),
         r.host_opt_Bps * 1e-9,
         (double)r.host_opt_call_ns * 1e-3);
  if (r.has_api)
    printf("device API  async copy issue %.1f us, event record + synchronise "
           "%.1f us, cudaFree %.1f us idle and %.1f us with %.2f ms of work "
           "queued (%s)\n", (double)r.api.copy_issue_ns * 1e-3,
           (double)r.api.event_sync_ns * 1e-3,
           (double)r.api.free_idle_ns * 1e-3,
           (double)r.api.free_busy_ns * 1e-3, (double)r.api.busy_ns * 1e-6,
           free_waited(&r) ? "it synchronises" : "it does not wait");
  if (r.has_api && r.api.map_ns > 0)
    printf("            cuMemMap %.1f us, cuMemSetAccess %.1f us, cuMemUnmap "
           "%.1f us idle and %.1f us with work queued (%s; the executor "
           "synchronises before it anyway)\n", (double)r.api.map_ns * 1e-3,
           (double)r.api.access_ns * 1e-3,
           (double)r.api.unmap_idle_ns * 1e-3,
           (double)r.api.unmap_busy_ns * 1e-3,
           r.api.unmap_busy_ns > r.api.busy_ns / 2 ? "the driver waits"
                                                    : "the driver does not "
                                                      "wait");
  rc = 0;
  goto done;
fail:
  rc = ooc_cli_fail("%s", err.msg);
done:
  for (i = 0; i < n_ent; i++)
    free((char *)ent[i].sig);
  free(ent);
  free(json);
  ooc_calib_result_fini(&r);
  ooc_summary_fini(&sum);
  ooc_model_free(model);
  ooc_hw_free(base);
  ooc_program_fini(&prog);
  ooc_cli_args_fini(&a);
  return rc;
}
