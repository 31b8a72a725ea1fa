/* ir/program.c — the program IR: builder, validation, equality, names.
 *
 * One idea: a program is three flat arrays (instructions, their args and
 * their waits, each instruction owning a slice) plus a tensor table. The
 * builder appends to the last instruction only, so slices are contiguous
 * and in instruction order. Arrays grow geometrically and are kept by
 * ooc_program_reset(), so lowering thousands of candidate plans allocates
 * only when a program is bigger than any before it.
 *
 * Ownership: caller-embedded (init/fini). Cost: appends amortised O(1);
 * validate O(instructions + waits + args + tensors). Semantics follow
 * docs/program-ir.md.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ir/program.h"
#include "ir/algo.h"

void
ooc_program_init(ooc_program *p)
{
  memset(p, 0, sizeof *p);
}

void
ooc_program_fini(ooc_program *p)
{
  if (p == NULL)
    return;
  free(p->instr);
  free(p->args);
  free(p->waits);
  free(p->tensors);
  memset(p, 0, sizeof *p);
}

void
ooc_program_reset(ooc_program *p)
{
  p->n_instr = 0;
  p->n_args = 0;
  p->n_waits = 0;
  p->n_tensors = 0;
  p->prologue_end = 0;
  p->model_fingerprint = 0;
  p->n_layers = 0;
}

/* Make room for one more element of size elt in *arr (count n, capacity
 * *cap). Doubles the capacity; returns OOC_OK or OOC_ENOMEM. */
static int
grow(void **arr, int32_t n, int32_t *cap, size_t elt)
{
  int32_t ncap;
  void *q;

  if (n < *cap)
    return OOC_OK;
  if (*cap > INT32_MAX / 2)
    return OOC_ENOMEM;
  ncap = *cap ? *cap * 2 : 64;
  q = realloc(*arr, (size_t)ncap * elt);
  if (q == NULL)
    return OOC_ENOMEM;
  *arr = q;
  *cap = ncap;
  return OOC_OK;
}

int32_t
ooc_program_tensor(ooc_program *p, ooc_tensor_kind kind, int32_t layer,
                   uint64_t bytes)
{
  if (grow((void **)&p->tensors, p->n_tensors, &p->cap_tensors,
           sizeof *p->tensors) != OOC_OK)
    return OOC_ENOMEM;
  p->tensors[p->n_tensors] = (ooc_ptensor){
    .bytes = bytes, .layer = layer, .kind = (uint8_t)kind,
  };
  return p->n_tensors++;
}

int32_t
ooc_program_emit(ooc_program *p, ooc_instr_kind kind, int stream,
                 ooc_phase phase, int32_t layer, int32_t tensor, int where)
{
  if (grow((void **)&p->instr, p->n_instr, &p->cap_instr,
           sizeof *p->instr) != OOC_OK)
    return OOC_ENOMEM;
  p->instr[p->n_instr] = (ooc_instr){
    .kind = (uint8_t)kind, .stream = (uint8_t)stream,
    .phase = (uint8_t)phase, .where = (uint8_t)where,
    .layer = layer, .tensor = tensor,
    .arg_first = p->n_args, .n_args = 0,
    .wait_first = p->n_waits, .n_waits = 0,
  };
  return p->n_instr++;
}

int
ooc_program_wait(ooc_program *p, int32_t on)
{
  if (on < 0 || p->n_instr == 0)
    return OOC_OK;
  if (grow((void **)&p->waits, p->n_waits, &p->cap_waits,
           sizeof *p->waits) != OOC_OK)
    return OOC_ENOMEM;
  p->waits[p->n_waits++] = on;
  p->instr[p->n_instr - 1].n_waits++;
  return OOC_OK;
}

int
ooc_program_algo(ooc_program *p, int algo)
{
  if (p->n_instr == 0 || algo < 0 || algo >= OOC_ALGO_COUNT)
    return OOC_EINVAL;
  p->instr[p->n_instr - 1].algo = (uint8_t)algo;
  return OOC_OK;
}

int
ooc_program_arg(ooc_program *p, int32_t tensor, int write)
{
  if (p->n_instr == 0)
    return OOC_EINVAL;
  if (grow((void **)&p->args, p->n_args, &p->cap_args,
           sizeof *p->args) != OOC_OK)
    return OOC_ENOMEM;
  p->args[p->n_args++] = write ? (tensor | OOC_ARG_WRITE) : tensor;
  p->instr[p->n_instr - 1].n_args++;
  return OOC_OK;
}

static const char *
stream_name(int s)
{
  static const char *const names[OOC_NSTREAMS] = { "compute", "h2d", "d2h",
                                                        "host" };
  return s >= 0 && s < OOC_NSTREAMS ? names[s] : "?";
}

/* "instruction 12 (FREE, layer 3, tensor 7)" — the prefix of every message
 * about one instruction. */
static int
instr_err(ooc_err *err, const ooc_program *p, int32_t i, const char *what)
{
  const ooc_instr *in = &p->instr[i];
  return ooc_err_set(err, OOC_EINVAL,
                     "program: instruction %d (%s on %s stream, layer %d, "
                     "tensor %d): %s",
                     i, ooc_instr_kind_name((ooc_instr_kind)in->kind),
                     stream_name(in->stream), in->layer, in->tensor, what);
}

int
ooc_program_check_structure(const ooc_program *p, ooc_err *err)
{
  int32_t i, k;

  if (p->n_instr < 0 || p->n_args < 0 || p->n_waits < 0 || p->n_tensors < 0)
    return ooc_err_set(err, OOC_EINVAL, "program: negative counts");
  if (p->prologue_end < 0 || p->prologue_end > p->n_instr)
    return ooc_err_set(err, OOC_EINVAL,
                       "program: prologue_end %d outside [0, %d]",
                       p->prologue_end, p->n_instr);
  for (i = 0; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    int ok_stream;

    if (in->kind >= OOC_I_COUNT)
      return instr_err(err, p, i, "unknown kind");
    if (in->stream >= OOC_NSTREAMS)
      return instr_err(err, p, i, "unknown stream");
    switch (in->kind) {
    case OOC_I_COMPUTE: ok_stream = in->stream == OOC_STREAM_COMPUTE; break;
    case OOC_I_H2D: ok_stream = in->stream == OOC_STREAM_H2D; break;
    case OOC_I_D2H: ok_stream = in->stream == OOC_STREAM_D2H; break;
    case OOC_I_HOST: ok_stream = in->stream == OOC_STREAM_HOST; break;
    default: ok_stream = 1; break;
    }
    if (!ok_stream)
      return instr_err(err, p, i, "kind not allowed on this stream");
    if (in->kind == OOC_I_COMPUTE) {
      if (in->phase > OOC_PH_UPDATE)
        return instr_err(err, p, i, "COMPUTE needs phase fwd, bwd, recomp "
                         "or update");
      if (in->phase != OOC_PH_UPDATE &&
          (in->layer < 0 || (p->n_layers > 0 && in->layer >= p->n_layers)))
        return instr_err(err, p, i, "layer out of range");
      if (in->phase == OOC_PH_UPDATE && in->layer != -1)
        return instr_err(err, p, i, "the update runs every layer's step, "
                         "and names none (layer -1)");
      if (in->tensor != -1)
        return instr_err(err, p, i, "COMPUTE must have tensor -1");
      if (in->algo >= OOC_ALGO_COUNT)
        return instr_err(err, p, i, "unknown kernel algorithm");
      if (in->algo != OOC_ALGO_DEFAULT && in->phase == OOC_PH_UPDATE)
        return instr_err(err, p, i, "the update has no kernel algorithm");
    } else if (in->kind == OOC_I_HOST) {
      if (in->phase != OOC_PH_UPDATE)
        return instr_err(err, p, i, "HOST needs phase update");
      if (in->layer < 0 || (p->n_layers > 0 && in->layer >= p->n_layers))
        return instr_err(err, p, i, "layer out of range");
      if (in->tensor != -1)
        return instr_err(err, p, i, "HOST must have tensor -1");
      if (in->algo != 0)
        return instr_err(err, p, i, "only COMPUTE has a kernel algorithm");
    } else {
      if (in->phase != OOC_PH_NONE)
        return instr_err(err, p, i, "only COMPUTE and HOST have a phase");
      if (in->tensor < 0 || in->tensor >= p->n_tensors)
        return instr_err(err, p, i, "tensor id out of range");
      if (in->n_args != 0)
        return instr_err(err, p, i, "only COMPUTE and HOST have args");
      if (in->algo != 0)
        return instr_err(err, p, i, "only COMPUTE has a kernel algorithm");
    }
    if (in->where > OOC_WHERE_HOST ||
        (in->where == OOC_WHERE_HOST && in->kind != OOC_I_ALLOC &&
         in->kind != OOC_I_FREE))
      return instr_err(err, p, i, "bad 'where' (host only for ALLOC/FREE)");
    if (in->n_args < 0 || in->arg_first < 0 ||
        in->arg_first > p->n_args - in->n_args)
      return instr_err(err, p, i, "args slice out of range");
    if (in->n_waits < 0 || in->wait_first < 0 ||
        in->wait_first > p->n_waits - in->n_waits)
      return instr_err(err, p, i, "waits slice out of range");
    for (k = 0; k < in->n_args; k++) {
      int32_t t = OOC_ARG_TENSOR(p->args[in->arg_first + k]);
      if (t < 0 || t >= p->n_tensors)
        return instr_err(err, p, i, "argument tensor id out of range");
    }
    for (k = 0; k < in->n_waits; k++) {
      int32_t w = p->waits[in->wait_first + k];
      if (w < 0 || w >= i)
        return instr_err(err, p, i, "waits on an instruction that does not "
                         "come before it");
    }
  }
  return OOC_OK;
}


int
ooc_program_equal(const ooc_program *a, const ooc_program *b)
{
  int32_t i;

  if (a->n_instr != b->n_instr || a->n_args != b->n_args ||
      a->n_waits != b->n_waits || a->n_tensors != b->n_tensors ||
      a->prologue_end != b->prologue_end ||
      a->model_fingerprint != b->model_fingerprint ||
      a->n_layers != b->n_layers)
    return 0;
  for (i = 0; i < a->n_instr; i++) {
    const ooc_instr *x = &a->instr[i], *y = &b->instr[i];
    if (x->kind != y->kind || x->stream != y->stream ||
        x->phase != y->phase || x->where != y->where || x->algo != y->algo ||
        x->layer != y->layer || x->tensor != y->tensor ||
        x->arg_first != y->arg_first || x->n_args != y->n_args ||
        x->wait_first != y->wait_first || x->n_waits != y->n_waits)
      return 0;
  }
  for (i = 0; i < a->n_tensors; i++) {
    const ooc_ptensor *x = &a->tensors[i], *y = &b->tensors[i];
    if (x->bytes != y->bytes || x->layer != y->layer || x->kind != y->kind)
      return 0;
  }
  if (a->n_args > 0 &&
      memcmp(a->args, b->args, (size_t)a->n_args * sizeof *a->args) != 0)
    return 0;
  if (a->n_waits > 0 &&
      memcmp(a->waits, b->waits, (size_t)a->n_waits * sizeof *a->waits) != 0)
    return 0;
  return 1;
}

const char *
ooc_instr_kind_name(ooc_instr_kind k)
{
  static const char *const names[OOC_I_COUNT] = {
    "COMPUTE", "H2D", "D2H", "ALLOC", "FREE", "HOST",
  };
  return (unsigned)k < OOC_I_COUNT ? names[k] : "?";
}

const char *
ooc_phase_name(ooc_phase ph)
{
  static const char *const names[OOC_PH_COUNT] = {
    "fwd", "bwd", "recomp", "update", "none",
  };
  return (unsigned)ph < OOC_PH_COUNT ? names[ph] : "?";
}

const char *
ooc_tensor_kind_name(ooc_tensor_kind k)
{
  static const char *const names[OOC_T_COUNT] = {
    "param", "input", "act", "grad", "workspace", "wgrad", "optstate",
  };
  return (unsigned)k < OOC_T_COUNT ? names[k] : "?";
}
