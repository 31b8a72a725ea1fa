/* cli/cmd_info.c — `oocsim info -m MODEL [-b B] [--set K=V] [--dtype D]
 * [--json]`: the per-layer table of a model (name, op, output shape and
 * bytes, parameters, forward and backward FLOPs, what backward needs) and
 * its totals (parameters, activation MiB per sample, forward GFLOPs per
 * sample, the naive in-core peak). Numbers come from the op table through
 * the loader (ir/model.h); nothing is recomputed here. O(layers).
 *
 * `oocsim info --hw HW [--hw-set K=V]` prints the effective profile, what
 * every command simulates with after the overrides (duplex rates scaled
 * with the link rates, ir/hw.h): a table, or with --json the profile file
 * itself (ooc_hw_derive), which loads back as the same profile.
 */
#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "base/util.h"
#include "ir/hw.h"
#include "ir/algo.h"

static const ooc_cli_doc doc = {
  .name = "info", .cmd = OOC_CMD_INFO,
  .usage = "Usage: oocsim info -m MODEL [-b BATCH] [--set K=V ...]\n"
           "                   [--dtype fp32|fp16|bf16 | --precision P]\n"
           "                   [--optimizer O] [--hw HW [--hw-set K=V ...]]\n"
           "                   [--json]\n"
           "       oocsim info --hw HW [--hw-set K=V ...] [--json]\n",
  .about =
    "Per-layer table of a model: name, op, output shape (per sample),\n"
    "output bytes, parameters, forward and backward FLOPs and what the\n"
    "backward needs from forward (input, output, input+output or none;\n"
    "\"+saved\" when it also reads state saved by the forward, such as\n"
    "batch-norm statistics or a dropout mask, \"saved\" when only that);\n"
    "an output that aliases its input (flatten, reshape, in-place ops)\n"
    "has 0 bytes of its own. Then the totals: parameters, activation MiB\n"
    "per sample, forward GFLOPs per sample and the naive in-core peak\n"
    "(allocated bytes: every forward output kept, plus weights, gradients,\n"
    "optimizer state and the largest workspace). Bytes and FLOPs in the\n"
    "table are for the whole batch.\n"
    "\n"
    "With --hw, the effective hardware profile: the profile after every\n"
    "--hw-set, as each command simulates with it. Setting link.h2d_GBps or\n"
    "link.d2h_GBps alone scales the matching duplex rate by the same ratio.\n"
    "With --json it prints the profile file itself, which can be saved and\n"
    "passed to --hw.\n",
  .examples =
    "  oocsim info -m resnet50 -b 1\n"
    "  oocsim info -m resnet --set depth=1001 --json\n"
    "  oocsim info --hw v100-pcie3 --hw-set link.h2d_GBps=24\n",
};

/* Persistent bytes per parameter by category: the weights (the copy the
 * kernels read), their gradients, fp32 master weights (mixed precision)
 * and the optimizer's state. */
static void
bytes_per_param(const ooc_model *m, double *w, double *g, double *master,
                double *opt)
{
  double n = (double)m->total_params;
  int amp = m->precision == OOC_PREC_AMP_FP16 ||
            m->precision == OOC_PREC_AMP_BF16;
  *w = (double)m->weight_bytes / n;
  *g = (double)m->grad_bytes / n;
  *master = amp ? 4 : 0;
  *opt = (double)m->opt_bytes / n - *master;
}

/* The framework block's op rules in words ("int64", "as written"). */
static const char *
index_name(int bytes)
{
  return bytes == 8 ? "int64" : bytes == 4 ? "int32" : "none";
}

static const char *
in_place_name(int v)
{
  return v < 0 ? "as written" : v ? "where legal" : "never";
}

static int
n_recomputed(const ooc_model *m)
{
  int i, n = 0;
  for (i = 0; i < m->n_layers; i++)
    n += m->layers[i].recompute != 0;
  return n;
}

/* The columns a name takes on a terminal: its characters, not its bytes
 * (a layer name is UTF-8; model files are checked for it), so that the
 * table's columns line up after names with accents. */
static int
text_cols(const char *s)
{
  int n = 0;

  for (; *s != '\0'; s++)
    n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static void
shape_str(const ooc_shape *s, char *buf, size_t n)
{
  size_t len = 0;
  int i;

  buf[0] = '\0';
  for (i = 0; i < s->ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "x" : "",
                            (long long)s->d[i]);
}

/* What backward reads from forward: "input", "output", "input+output" or
 * "none", with "+saved" when it also reads saved state (batch-norm
 * statistics, dropout mask, attention softmax, loss probabilities). */
static const char *
needs_str(const ooc_layer *l, char *buf, size_t n)
{
  const char *base = ooc_needs_name(l->needs);

  if (!(l->has_bwd && l->saved_bytes > 0))
    return base;
  if (l->needs == OOC_NEED_NONE)
    snprintf(buf, n, "saved");
  else
    snprintf(buf, n, "%s+saved", base);
  return buf;
}

static double
mib_per_sample(const ooc_model *m)
{
  return (double)m->activation_bytes / (double)m->batch / 1048576.0;
}

static double
gflops_per_sample(const ooc_model *m)
{
  return m->fwd_flops / (double)m->batch * 1e-9;
}

static int
print_text(const ooc_model *m)
{
  char shape[96], b1[32], nd[32];
  int i, w = 8;

  for (i = 0; i < m->n_layers; i++) {
    int len = text_cols(m->layers[i].name);
    if (len > w)
      w = len;
  }
  if (w > 40)
    w = 40;
  printf("model %s, batch %lld, %s%s%s%s\n", m->name, (long long)m->batch,
         ooc_dtype_name(m->dtype), ooc_precision_name(m->precision) ? " ("
                                                                    : "",
         ooc_precision_name(m->precision) ? ooc_precision_name(m->precision)
                                          : "",
         ooc_precision_name(m->precision) ? ")" : "");
  printf("framework %s: max-pool indices %s, in-place relu %s, in-place "
         "add %s", m->framework, index_name(m->fw_maxpool_index_bytes),
         in_place_name(m->fw_relu_in_place),
         in_place_name(m->fw_add_in_place));
  if (n_recomputed(m) > 0)
    printf(", %d layers recomputed for the backward", n_recomputed(m));
  printf("\n\n");
  printf("%-*s %-11s %-16s %12s %11s %12s %12s  %s\n", w, "layer", "op",
         "output", "out bytes", "params", "fwd GFLOP", "bwd GFLOP",
         "bwd needs");
  for (i = 0; i < m->n_layers; i++) {
    const ooc_layer *l = &m->layers[i];
    shape_str(&l->out, shape, sizeof shape);
    int pad = w - text_cols(l->name);
    printf("%s%*s %-11s %-16s %12s %11llu %12.4f %12.4f  %s\n", l->name,
           pad > 0 ? pad : 0, "", ooc_op_name(l->op), shape,
           ooc_fmt_bytes(l->out_bytes, b1, sizeof b1),
           (unsigned long long)l->params, l->fwd_flops * 1e-9,
           (l->bwd_data_flops + l->bwd_weight_flops) * 1e-9,
           needs_str(l, nd, sizeof nd));
  }
  printf("\ntotals\n");
  printf("  parameters                 %llu\n",
         (unsigned long long)m->total_params);
  printf("  activation per sample      %s\n",
         ooc_fmt_bytes(m->activation_bytes / (uint64_t)m->batch, b1,
                       sizeof b1));
  printf("  forward per sample         %s\n",
         ooc_fmt_flops(m->fwd_flops / (double)m->batch, b1, sizeof b1));
  printf("  forward + backward (batch) %s\n",
         ooc_fmt_flops(m->fwd_flops + m->bwd_flops, b1, sizeof b1));
  printf("  weights, grads, optimizer  %s\n",
         ooc_fmt_bytes(m->weight_bytes + m->grad_bytes + m->opt_bytes, b1,
                       sizeof b1));
  if (m->total_params > 0) {
    double pw, pg, ms, os;
    bytes_per_param(m, &pw, &pg, &ms, &os);
    printf("  bytes per parameter        weights %g, gradients %g, master "
           "weights %g, optimizer state %g: %g (%s, %s)\n", pw, pg, ms, os,
           pw + pg + ms + os,
           ooc_precision_name(m->precision) ? ooc_precision_name(m->precision)
                                            : ooc_dtype_name(m->dtype),
           ooc_optimizer_name(m->optimizer));
  }
  printf("  naive in-core peak (allocated) %s (%llu bytes)\n",
         ooc_fmt_bytes(m->naive_peak_bytes, b1, sizeof b1),
         (unsigned long long)m->naive_peak_bytes);
  return 0;
}

static cJSON *
layer_json(const ooc_layer *l)
{
  cJSON *o = cJSON_CreateObject(), *sh;
  int i, ok;

  if (o == NULL)
    return NULL;
  ok = cJSON_AddStringToObject(o, "name", l->name) != NULL &&
       cJSON_AddStringToObject(o, "op", ooc_op_name(l->op)) != NULL &&
       (sh = cJSON_AddArrayToObject(o, "shape")) != NULL;
  for (i = 0; ok && i < l->out.ndim; i++) {
    cJSON *d = cJSON_CreateNumber((double)l->out.d[i]);
    ok = d != NULL && cJSON_AddItemToArray(sh, d);
  }
  ok = ok &&
       cJSON_AddNumberToObject(o, "out_bytes", (double)l->out_bytes) &&
       cJSON_AddNumberToObject(o, "saved_bytes", (double)l->saved_bytes) &&
       cJSON_AddNumberToObject(o, "params", (double)l->params) &&
       cJSON_AddNumberToObject(o, "workspace_bytes",
                               (double)l->workspace_bytes) &&
       cJSON_AddNumberToObject(o, "fwd_flops", l->fwd_flops) &&
       cJSON_AddNumberToObject(o, "bwd_flops",
                               l->bwd_data_flops + l->bwd_weight_flops) &&
       cJSON_AddNumberToObject(o, "bwd_data_flops", l->bwd_data_flops) &&
       cJSON_AddNumberToObject(o, "bwd_weight_flops", l->bwd_weight_flops) &&
       cJSON_AddStringToObject(o, "bwd_needs", ooc_needs_name(l->needs)) &&
       (!l->recompute || cJSON_AddTrueToObject(o, "recompute"));
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static int
print_json(const ooc_model *m)
{
  cJSON *o = cJSON_CreateObject(), *settings, *layers, *tot, *fw;
  char *text = NULL;
  int i, ok;

  if (o == NULL)
    goto nomem;
  ok = cJSON_AddStringToObject(o, "model", m->name) &&
       cJSON_AddNumberToObject(o, "batch", (double)m->batch) &&
       cJSON_AddStringToObject(o, "dtype", ooc_dtype_name(m->dtype)) &&
       cJSON_AddNumberToObject(o, "params", (double)m->total_params) &&
       (settings = cJSON_AddObjectToObject(o, "settings")) != NULL;
  for (i = 0; ok && i < m->n_params; i++)
    ok = (m->params[i].word != NULL
              ? cJSON_AddStringToObject(settings, m->params[i].name,
                                        m->params[i].word)
              : cJSON_AddNumberToObject(settings, m->params[i].name,
                                        m->params[i].value)) != NULL;
  ok = ok && (fw = cJSON_AddObjectToObject(o, "framework")) != NULL &&
       cJSON_AddStringToObject(fw, "name", m->framework) &&
       cJSON_AddStringToObject(fw, "maxpool_indices",
                               index_name(m->fw_maxpool_index_bytes)) &&
       (m->fw_relu_in_place < 0
            ? cJSON_AddNullToObject(fw, "relu_in_place") != NULL
            : cJSON_AddBoolToObject(fw, "relu_in_place",
                                    m->fw_relu_in_place) != NULL) &&
       (m->fw_add_in_place < 0
            ? cJSON_AddNullToObject(fw, "add_in_place") != NULL
            : cJSON_AddBoolToObject(fw, "add_in_place",
                                    m->fw_add_in_place) != NULL) &&
       cJSON_AddNumberToObject(fw, "recomputed_layers", n_recomputed(m));
  ok = ok && (layers = cJSON_AddArrayToObject(o, "layers")) != NULL;
  for (i = 0; ok && i < m->n_layers; i++) {
    cJSON *l = layer_json(&m->layers[i]);
    ok = l != NULL && cJSON_AddItemToArray(layers, l);
  }
  ok = ok && (tot = cJSON_AddObjectToObject(o, "totals")) != NULL &&
       cJSON_AddNumberToObject(tot, "params", (double)m->total_params) &&
       cJSON_AddNumberToObject(tot, "weight_bytes", (double)m->weight_bytes) &&
       cJSON_AddNumberToObject(tot, "grad_bytes", (double)m->grad_bytes) &&
       cJSON_AddNumberToObject(tot, "opt_bytes", (double)m->opt_bytes) &&
       cJSON_AddNumberToObject(tot, "activation_bytes",
                               (double)m->activation_bytes) &&
       cJSON_AddNumberToObject(tot, "activation_mib_per_sample",
                               mib_per_sample(m)) &&
       cJSON_AddNumberToObject(tot, "fwd_gflops_per_sample",
                               gflops_per_sample(m)) &&
       cJSON_AddNumberToObject(tot, "fwd_flops", m->fwd_flops) &&
       cJSON_AddNumberToObject(tot, "bwd_flops", m->bwd_flops) &&
       cJSON_AddNumberToObject(tot, "naive_peak_bytes",
                               (double)m->naive_peak_bytes);
  if (ok && m->total_params > 0) {
    double w, g, ms, os;
    cJSON *bp = cJSON_AddObjectToObject(tot, "bytes_per_param");
    bytes_per_param(m, &w, &g, &ms, &os);
    ok = bp != NULL && cJSON_AddNumberToObject(bp, "weights", w) &&
         cJSON_AddNumberToObject(bp, "gradients", g) &&
         cJSON_AddNumberToObject(bp, "master_weights", ms) &&
         cJSON_AddNumberToObject(bp, "optimizer_state", os);
  }
  ok = ok && (ooc_precision_name(m->precision)
                  ? cJSON_AddStringToObject(o, "precision",
                                            ooc_precision_name(m->precision))
                  : cJSON_AddNullToObject(o, "precision")) != NULL;
  if (!ok || (text = cJSON_Print(o)) == NULL)
    goto nomem;
  puts(text);
  free(text);
  cJSON_Delete(o);
  return 0;
nomem:
  cJSON_Delete(o);
  return ooc_cli_fail("info: out of memory");
}

/* --- the effective profile (--hw) --------------------------------------- */

static double
us(int64_t ns)
{
  return (double)ns * 1e-3;
}

static void
print_hw_text(const ooc_hw *hw)
{
  static const char *const cls[OOC_CLASS_COUNT] = {
    "conv", "gemm", "norm", "eltwise", "pool", "other"
  };
  char b1[32], b2[32];
  int c, n_algo = 0, any_int = 0;

  printf("profile %s (%s), %s\n\n", hw->name, hw->path, hw->gpu);
  printf("memory\n");
  printf("  total, usable              %s, %s\n",
         ooc_fmt_bytes(hw->mem_total, b1, sizeof b1),
         ooc_fmt_bytes(hw->mem_usable, b2, sizeof b2));
  printf("host\n");
  printf("  memory                     %s\n",
         ooc_fmt_bytes(hw->host_mem, b1, sizeof b1));
  printf("  per iteration, per op      %.3f, %.3f us\n", us(hw->host_iter_ns),
         us(hw->host_op_ns));
  printf("  optimizer per tensor       %.3f us\n", us(hw->host_opt_param_ns));
  printf("  event synchronise          %.3f us\n", us(hw->event_sync_ns));
  printf("compute\n");
  printf("  fp32, fp16, bf16           %.2f, %.2f, %.2f TFLOP/s\n",
         hw->peak_flops[OOC_FP32] * 1e-12, hw->peak_flops[OOC_FP16] * 1e-12,
         hw->peak_flops[OOC_BF16] * 1e-12);
  printf("  tensor tf32, fp16, bf16    %.2f, %.2f, %.2f TFLOP/s%s\n",
         hw->tensor_flops[OOC_FP32] * 1e-12,
         hw->tensor_flops[OOC_FP16] * 1e-12,
         hw->tensor_flops[OOC_BF16] * 1e-12,
         hw->fp32_uses_tf32 ? " (fp32 runs as tf32)" : "");
  printf("  HBM                        %.1f GB/s x %.2f achieved\n",
         hw->hbm_Bps * 1e-9, hw->mem_eff);
  printf("  kernel launch              %.3f us\n", us(hw->launch_ns));
  if (hw->sms > 0)
    printf("  waves                      %d SMs, %d x %d tiles, weight "
           "gradients split up to %d ways\n", hw->sms, hw->gemm_tile,
           hw->gemm_tile, hw->max_split_k);
  printf("  efficiency  ");
  for (c = 0; c < OOC_CLASS_COUNT; c++) {
    printf(" %s %.3f", cls[c], hw->eff[c]);
    if (hw->tensor_eff[c] != hw->eff[c])
      printf(" (tensor cores %.3f)", hw->tensor_eff[c]);
    if (hw->tensor_eff16[c] != hw->tensor_eff[c])
      printf(" (fp16/bf16 on tensor cores %.3f)", hw->tensor_eff16[c]);
  }
  printf("\n");
  for (c = 0; c < OOC_CLASS_COUNT; c++)
    any_int |= hw->interference[c] > 0;
  if (any_int) {
    printf("  copy interference");
    for (c = 0; c < OOC_CLASS_COUNT; c++)
      printf(" %s %.3f", cls[c], hw->interference[c]);
    printf("\n");
  }
  for (c = 0; c < OOC_ALGO_COUNT; c++)
    n_algo += c != OOC_ALGO_DEFAULT && hw->algo_factor[c] > 0;
  if (n_algo > 0) {
    printf("  conv algorithms           ");
    for (c = 0; c < OOC_ALGO_COUNT; c++)
      if (c != OOC_ALGO_DEFAULT && hw->algo_factor[c] > 0)
        printf(" %s x%.3f", ooc_algo_name((ooc_algo)c), hw->algo_factor[c]);
    printf("\n");
  }
  printf("link\n");
  printf("  H2D, D2H pinned            %.3f, %.3f GB/s\n", hw->h2d_Bps * 1e-9,
         hw->d2h_Bps * 1e-9);
  printf("  H2D, D2H both at once      %.3f, %.3f GB/s\n",
         hw->duplex_h2d_Bps * 1e-9, hw->duplex_d2h_Bps * 1e-9);
  printf("  H2D, D2H pageable          %.3f, %.3f GB/s\n",
         hw->h2d_pageable_Bps * 1e-9, hw->d2h_pageable_Bps * 1e-9);
  printf("  latency, issue per copy    %.3f, %.3f us\n",
         us(hw->copy_latency_ns), us(hw->copy_issue_ns));
  printf("  copy engines               %d\n", hw->copy_engines);
  printf("allocator\n");
  printf("  cudaMalloc                 %.3f us + %.3f us/GiB\n",
         us(hw->malloc_ns), hw->malloc_ns_per_GiB * 1e-3);
  printf("  cudaFree                   %.3f us%s\n", us(hw->free_ns),
         hw->free_syncs ? ", synchronises the device" : "");
  printf("  VA chunk, granularity      %s, %s\n",
         ooc_fmt_bytes(hw->va_chunk_bytes, b1, sizeof b1),
         ooc_fmt_bytes(hw->va_granularity, b2, sizeof b2));
  printf("  VA create, map, access, unmap, release %.3f, %.3f, %.3f, %.3f, "
         "%.3f us%s\n", us(hw->va_create_ns), us(hw->va_map_ns),
         us(hw->va_access_ns), us(hw->va_unmap_ns), us(hw->va_release_ns),
         hw->va_unmap_syncs ? " (an unmap synchronises the device)" : "");
  printf("  pinned host buffer         %.3f us\n", us(hw->host_alloc_ns));
  printf("calibration                  %d entries\n", hw->n_calib);
}

/* The profile after the overrides: a table, or the profile file (whose
 * loading is checked by ooc_hw_derive). */
static int
print_hw(const ooc_cli_args *a)
{
  ooc_err err = { 0 };
  ooc_hw *hw = NULL;
  char *json = NULL;

  if (a->json) {
    if (ooc_hw_derive(a->hw, a->hw_sets, a->n_hw_sets, NULL, NULL, -1, NULL,
                      &json, &err) < 0)
      return ooc_cli_fail("%s", err.msg);
    fputs(json, stdout);
    free(json);
    return 0;
  }
  if (ooc_hw_load(a->hw, a->hw_sets, a->n_hw_sets, &hw, &err) < 0)
    return ooc_cli_fail("%s", err.msg);
  print_hw_text(hw);
  ooc_hw_free(hw);
  return 0;
}

int
ooc_cmd_info(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_model *m = NULL;
  ooc_model_opts mo;
  int rc;

  if (ooc_cli_args_start(&a, argc, argv, &doc, 0, 0, &rc))
    goto done;
  if (a.model == NULL && a.hw == NULL) {
    rc = ooc_cli_fail("missing -m MODEL or --hw HW");
    goto done;
  }
  if (a.n_hw_sets > 0 && a.hw == NULL) {
    rc = ooc_cli_fail("--hw-set needs --hw HW");
    goto done;
  }
  if (a.model != NULL && a.hw != NULL && a.json) {
    rc = ooc_cli_fail("--json prints one document: give -m MODEL or --hw "
                      "HW, not both");
    goto done;
  }
  if (a.model == NULL) {
    /* A model option without a model would be ignored in silence. */
    const char *opt = ooc_cli_model_option(&a);
    rc = opt != NULL ? ooc_cli_fail("%s needs -m MODEL (--hw alone prints "
                                    "the profile)", opt)
                     : print_hw(&a);
    goto done;
  }
  mo = (ooc_model_opts){
    .batch = a.batch_set ? a.batch : 1,
    .dtype_set = a.dtype_set, .dtype = a.dtype, .optimizer = a.optimizer,
    .sets = a.sets, .n_sets = a.n_sets, .precision = a.precision,
  };
  if (ooc_model_load(a.model, &mo, &m, &err) < 0) {
    rc = ooc_cli_fail("%s", err.msg);
    goto done;
  }
  rc = a.json ? print_json(m) : print_text(m);
  if (rc == 0 && a.hw != NULL) {
    printf("\n");
    rc = print_hw(&a);
  }
done:
  ooc_model_free(m);
  ooc_cli_args_fini(&a);
  return rc;
}
