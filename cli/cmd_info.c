/* cli/cmd_info.c — `oocsim info -m MODEL [-b B] [--set K=V] [--dtype D]
 * [--json]`: the per-layer table of a model (name, op, output shape and
 * bytes, parameters, forward and backward FLOPs, what backward needs) and
 * its totals (parameters, activation MiB per sample, forward GFLOPs per
 * sample, the naive in-core peak). Numbers come from the op table through
 * the loader (ir/model.h); nothing is recomputed here. O(layers).
 */
#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "base/util.h"

static const ooc_cli_doc doc = {
  .name = "info", .cmd = OOC_CMD_INFO,
  .usage = "Usage: oocsim info -m MODEL [-b BATCH] [--set K=V ...]\n"
           "                   [--dtype fp32|fp16|bf16] [--optimizer O] [--json]\n",
  .about =
    "Per-layer table of a model: name, op, output shape (per sample),\n"
    "output bytes, parameters, forward and backward FLOPs and what the\n"
    "backward needs from forward (input, output, both or none; \"+saved\"\n"
    "when it also reads state saved by the forward, such as batch-norm\n"
    "statistics or a dropout mask); an output that aliases its input\n"
    "(flatten, reshape, in-place ops) has 0 bytes of its own. Then the\n"
    "totals: parameters, activation MiB per sample, forward GFLOPs per\n"
    "sample and the naive in-core peak (allocated bytes: every forward\n"
    "output kept, plus weights, gradients, optimizer state and the largest\n"
    "workspace). Bytes and FLOPs in the table are for the whole batch.\n",
  .examples =
    "  oocsim info -m resnet50 -b 1\n"
    "  oocsim info -m resnet --set depth=1001 --json\n",
};

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
    int len = (int)strlen(m->layers[i].name);
    if (len > w)
      w = len;
  }
  if (w > 40)
    w = 40;
  printf("model %s, batch %lld, %s\n\n", m->name, (long long)m->batch,
         ooc_dtype_name(m->dtype));
  printf("%-*s %-11s %-16s %12s %11s %12s %12s  %s\n", w, "layer", "op",
         "output", "out bytes", "params", "fwd GFLOP", "bwd GFLOP",
         "bwd needs");
  for (i = 0; i < m->n_layers; i++) {
    const ooc_layer *l = &m->layers[i];
    shape_str(&l->out, shape, sizeof shape);
    printf("%-*s %-11s %-16s %12s %11llu %12.4f %12.4f  %s\n", w, l->name,
           ooc_op_name(l->op), shape,
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
       cJSON_AddStringToObject(o, "bwd_needs", ooc_needs_name(l->needs));
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static int
print_json(const ooc_model *m)
{
  cJSON *o = cJSON_CreateObject(), *settings, *layers, *tot;
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
    ok = cJSON_AddNumberToObject(settings, m->params[i].name,
                                 m->params[i].value) != NULL;
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

int
ooc_cmd_info(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_model *m = NULL;
  ooc_model_opts mo;
  int rc;

  if (ooc_cli_args_start(&a, argc, argv, &doc, 0, OOC_CLI_MODEL, &rc))
    goto done;
  mo = (ooc_model_opts){
    .batch = a.batch_set ? a.batch : 1,
    .dtype_set = a.dtype_set, .dtype = a.dtype, .optimizer = a.optimizer,
    .sets = a.sets, .n_sets = a.n_sets,
  };
  if (ooc_model_load(a.model, &mo, &m, &err) < 0) {
    rc = ooc_cli_fail("%s", err.msg);
    goto done;
  }
  rc = a.json ? print_json(m) : print_text(m);
done:
  ooc_model_free(m);
  ooc_cli_args_fini(&a);
  return rc;
}
