/* ir/types.c — the value types every IR module shares: dtypes, shapes, op
 * classes and what a backward needs (model.h). Leaf of the IR: it calls
 * nothing else in the project, so the op table (ops.c) and the model
 * helpers (model.c) both build on it without a cycle. All O(1) but
 * ooc_shape_elems, O(dims).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "ir/model.h"

int
ooc_dtype_parse(const char *s, ooc_dtype *out)
{
  if (s == NULL)
    return OOC_EINVAL;
  if (strcmp(s, "fp32") == 0)
    *out = OOC_FP32;
  else if (strcmp(s, "fp16") == 0)
    *out = OOC_FP16;
  else if (strcmp(s, "bf16") == 0)
    *out = OOC_BF16;
  else
    return OOC_EINVAL;
  return OOC_OK;
}

const char *
ooc_dtype_name(ooc_dtype d)
{
  switch (d) {
  case OOC_FP16: return "fp16";
  case OOC_BF16: return "bf16";
  case OOC_FP32:
  default: return "fp32";
  }
}

int
ooc_optimizer_parse(const char *s, ooc_optimizer *out)
{
  if (s == NULL)
    return OOC_EINVAL;
  if (strcmp(s, "momentum") == 0 || strcmp(s, "sgd-momentum") == 0)
    *out = OOC_OPT_SGD_MOMENTUM;
  else if (strcmp(s, "sgd") == 0)
    *out = OOC_OPT_SGD;
  else if (strcmp(s, "adam") == 0)
    *out = OOC_OPT_ADAM;
  else
    return OOC_EINVAL;
  return OOC_OK;
}

int
ooc_precision_parse(const char *s, ooc_precision *out)
{
  static const struct { const char *n; ooc_precision p; } t[] = {
    { "fp32", OOC_PREC_FP32 }, { "tf32", OOC_PREC_TF32 },
    { "amp-fp16", OOC_PREC_AMP_FP16 }, { "amp-bf16", OOC_PREC_AMP_BF16 },
  };
  size_t i;
  for (i = 0; s != NULL && i < sizeof t / sizeof t[0]; i++)
    if (strcmp(s, t[i].n) == 0) {
      *out = t[i].p;
      return OOC_OK;
    }
  return OOC_EINVAL;
}

ooc_dtype
ooc_precision_dtype(ooc_precision p)
{
  return p == OOC_PREC_AMP_FP16 ? OOC_FP16
         : p == OOC_PREC_AMP_BF16 ? OOC_BF16 : OOC_FP32;
}

const char *
ooc_precision_name(ooc_precision p)
{
  switch (p) {
  case OOC_PREC_FP32: return "fp32";
  case OOC_PREC_TF32: return "tf32";
  case OOC_PREC_AMP_FP16: return "amp-fp16";
  case OOC_PREC_AMP_BF16: return "amp-bf16";
  case OOC_PREC_NONE:
  default: return NULL;
  }
}

const char *
ooc_optimizer_name(ooc_optimizer o)
{
  switch (o) {
  case OOC_OPT_SGD: return "sgd";
  case OOC_OPT_ADAM: return "adam";
  case OOC_OPT_SGD_MOMENTUM:
  default: return "momentum";
  }
}

unsigned
ooc_dtype_size(ooc_dtype d)
{
  return d == OOC_FP32 ? 4u : 2u;
}

int64_t
ooc_shape_elems(const ooc_shape *s)
{
  int64_t e = 1;
  int i;
  for (i = 0; i < s->ndim; i++)
    if (__builtin_mul_overflow(e, s->d[i], &e))
      return INT64_MAX;
  return e;
}

const char *
ooc_op_class_name(ooc_op_class c)
{
  switch (c) {
  case OOC_CLASS_CONV: return "conv";
  case OOC_CLASS_GEMM: return "gemm";
  case OOC_CLASS_NORM: return "norm";
  case OOC_CLASS_ELTWISE: return "eltwise";
  case OOC_CLASS_POOL: return "pool";
  case OOC_CLASS_OTHER: return "other";
  default: return "?";
  }
}

const char *
ooc_needs_name(unsigned needs)
{
  switch (needs & (OOC_NEED_INPUT | OOC_NEED_OUTPUT)) {
  case OOC_NEED_INPUT: return "input";
  case OOC_NEED_OUTPUT: return "output";
  case OOC_NEED_INPUT | OOC_NEED_OUTPUT: return "input+output";
  default: return "none";
  }
}
