/* ir/semantics.c — tensor states, the rules of each instruction, and the
 * static checker built on them (semantics.h, docs/program-ir.md).
 *
 * One idea: the rules live in ooc_sem_check / _start / _finish, and every
 * interpreter and the validator call them, so the simulator, the executor
 * and the checker cannot disagree about what a correct program is.
 *
 * The happens-before check gives each timed instruction a vector clock of
 * four entries (one per stream): the largest index on each stream known
 * to complete before it, through its stream's order and its waits. For
 * every tensor it keeps, separately for the device and the host copy, the
 * last writer and the last reader on each stream since; a write must come
 * after all of them, a read after the last writer. Cost: O(instructions +
 * waits + args), with O(instructions + tensors) scratch for one call.
 * Ownership: ooc_sem owns its two arrays; the validator frees its scratch
 * before returning.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/semantics.h"

void
ooc_sem_init(ooc_sem *s)
{
  memset(s, 0, sizeof *s);
  s->running = -1;
}

void
ooc_sem_fini(ooc_sem *s)
{
  if (s == NULL)
    return;
  free(s->flags);
  free(s->inflight);
  ooc_sem_init(s);
}

int
ooc_sem_reset(ooc_sem *s, const ooc_program *p)
{
  int32_t n = p->n_tensors > 0 ? p->n_tensors : 1;

  if (n > s->cap) {
    uint8_t *f = realloc(s->flags, (size_t)n);
    if (f == NULL)
      return OOC_ENOMEM;
    s->flags = f;
    f = realloc(s->inflight, (size_t)n);
    if (f == NULL)
      return OOC_ENOMEM;
    s->inflight = f;
    s->cap = n;
  }
  memset(s->flags, 0, (size_t)n);
  memset(s->inflight, 0, (size_t)n);
  s->p = p;
  s->running = -1;
  return OOC_OK;
}

/* "instruction 12 (COMPUTE bwd, layer 3)" or "instruction 9 (H2D, layer 2,
 * tensor 7)" into buf. */
static const char *
describe(const ooc_program *p, int32_t i, char *buf, size_t n)
{
  const ooc_instr *in = &p->instr[i];

  if (in->kind == OOC_I_COMPUTE)
    snprintf(buf, n, "instruction %d (COMPUTE %s, layer %d)", i,
             ooc_phase_name((ooc_phase)in->phase), in->layer);
  else
    snprintf(buf, n, "instruction %d (%s, layer %d, tensor %d)", i,
             ooc_instr_kind_name((ooc_instr_kind)in->kind), in->layer,
             in->tensor);
  return buf;
}

int
ooc_sem_fail(const ooc_sem *s, int32_t i, const char *verb, int32_t t,
             const char *what, ooc_err *err)
{
  char head[160];

  return ooc_err_set(err, OOC_EINVAL, "%s: %s tensor %d (layer %d) %s",
                     describe(s->p, i, head, sizeof head), verb, t,
                     t >= 0 ? s->p->tensors[t].layer : -1, what);
}

int
ooc_sem_check(const ooc_sem *s, int32_t i, ooc_err *err)
{
  return ooc_sem_check_inline(s, i, err);
}

void
ooc_sem_start(ooc_sem *s, int32_t i)
{
  ooc_sem_start_inline(s, i);
}


int
ooc_sem_prologue(ooc_sem *s, int32_t i, ooc_err *err)
{
  const ooc_instr *in = &s->p->instr[i];
  int rc = ooc_sem_check(s, i, err);

  if (rc != OOC_OK)
    return rc;
  ooc_sem_start(s, i);
  ooc_sem_finish(s, i);
  if (in->kind == OOC_I_ALLOC)
    s->flags[in->tensor] |= in->where == OOC_WHERE_HOST ? OOC_TS_HVALID
                                                        : OOC_TS_VALID;
  return OOC_OK;
}

/* --- the static checker ----------------------------------------------------- */

/* Accesses to one copy (device or host) of a tensor since its last write. */
struct loc {
  int32_t w;                  /* last writer, -1 none */
  int32_t r[OOC_NSTREAMS];    /* last reader per stream since, -1 none */
};

typedef struct checker {
  const ooc_program *p;
  int32_t (*vc)[OOC_NSTREAMS]; /* per instruction: its vector clock */
  struct loc *dev, *host;      /* per tensor */
  ooc_err *err;
} checker;

/* Does instruction a complete before b starts (a < b)? */
static int
before(const checker *c, int32_t a, int32_t b)
{
  return a < 0 || c->vc[b][c->p->instr[a].stream] >= a;
}

static const char *
verb_of(const ooc_instr *in, int write, int host)
{
  switch (in->kind) {
  case OOC_I_COMPUTE: return write ? "writes" : "reads";
  case OOC_I_HOST: return write ? "writes the host copy of"
                                : "reads the host copy of";
  case OOC_I_H2D: return host ? "copies from the host buffer of"
                              : "copies into";
  case OOC_I_D2H: return host ? "copies into the host buffer of"
                              : "copies out";
  case OOC_I_ALLOC: return host ? "allocates the host buffer of"
                                : "allocates";
  default: return host ? "frees the host buffer of" : "frees";
  }
}

static int
race(const checker *c, int32_t b, int32_t a, int32_t t, int b_write,
     int a_write, int host)
{
  char hb[160], ha[160];

  return ooc_err_set(c->err, OOC_EINVAL,
                     "program: %s %s tensor %d (layer %d), which %s %s on "
                     "another stream, and no wait orders the two",
                     describe(c->p, b, hb, sizeof hb),
                     verb_of(&c->p->instr[b], b_write, host), t,
                     c->p->tensors[t].layer, describe(c->p, a, ha, sizeof ha),
                     a_write ? "writes" : "reads");
}

/* Instruction b reads (write 0) or writes location l of tensor t. */
static int
access(checker *c, int32_t b, struct loc *l, int32_t t, int write, int host)
{
  int st = c->p->instr[b].stream, k;

  if (!before(c, l->w, b))
    return race(c, b, l->w, t, write, 1, host);
  if (!write) {
    if (l->r[st] < b)
      l->r[st] = b;
    return OOC_OK;
  }
  for (k = 0; k < OOC_NSTREAMS; k++)
    if (l->r[k] >= 0 && l->r[k] != b && !before(c, l->r[k], b))
      return race(c, b, l->r[k], t, 1, 0, host);
  l->w = b;
  for (k = 0; k < OOC_NSTREAMS; k++)
    l->r[k] = -1;
  return OOC_OK;
}

/* One pass over the timed part (the prologue and the barrier between
 * iterations order everything else). */
static int
happens_before(checker *c)
{
  const ooc_program *p = c->p;
  int32_t last[OOC_NSTREAMS], i, k;
  int rc;

  for (k = 0; k < OOC_NSTREAMS; k++)
    last[k] = -1;
  for (i = 0; i < p->n_tensors; i++) {
    c->dev[i].w = c->host[i].w = -1;
    for (k = 0; k < OOC_NSTREAMS; k++)
      c->dev[i].r[k] = c->host[i].r[k] = -1;
  }
  for (i = p->prologue_end; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    int32_t *vc = c->vc[i];
    int32_t t = in->tensor;

    for (k = 0; k < OOC_NSTREAMS; k++)
      vc[k] = last[in->stream] >= 0 ? c->vc[last[in->stream]][k] : -1;
    for (k = 0; k < in->n_waits; k++) {
      int32_t w = p->waits[in->wait_first + k], j;
      if (w < p->prologue_end)
        continue;
      for (j = 0; j < OOC_NSTREAMS; j++)
        if (c->vc[w][j] > vc[j])
          vc[j] = c->vc[w][j];
    }
    vc[in->stream] = i;
    last[in->stream] = i;
    switch (in->kind) {
    case OOC_I_COMPUTE:
      for (k = 0; k < in->n_args; k++) {
        int32_t a = p->args[in->arg_first + k];
        int32_t u = OOC_ARG_TENSOR(a);
        if ((rc = access(c, i, &c->dev[u], u, (a & OOC_ARG_WRITE) != 0, 0)))
          return rc;
      }
      break;
    case OOC_I_HOST:
      for (k = 0; k < in->n_args; k++) {
        int32_t a = p->args[in->arg_first + k];
        int32_t u = OOC_ARG_TENSOR(a);
        if ((rc = access(c, i, &c->host[u], u, (a & OOC_ARG_WRITE) != 0, 1)))
          return rc;
      }
      break;
    case OOC_I_H2D:
      if ((rc = access(c, i, &c->host[t], t, 0, 1)) ||
          (rc = access(c, i, &c->dev[t], t, 1, 0)))
        return rc;
      break;
    case OOC_I_D2H:
      if ((rc = access(c, i, &c->dev[t], t, 0, 0)) ||
          (rc = access(c, i, &c->host[t], t, 1, 1)))
        return rc;
      break;
    default:
      rc = access(c, i, in->where == OOC_WHERE_HOST ? &c->host[t]
                                                    : &c->dev[t],
                  t, 1, in->where == OOC_WHERE_HOST);
      if (rc)
        return rc;
      break;
    }
  }
  return OOC_OK;
}

/* One run of the timed part through the rules, in index order; a
 * violation's message gets prefix. */
static int
timed_pass(ooc_sem *s, const char *prefix, ooc_err *err)
{
  const ooc_program *p = s->p;
  int32_t i;
  int rc;

  for (i = p->prologue_end; i < p->n_instr; i++) {
    if ((rc = ooc_sem_check(s, i, err)) != OOC_OK)
      return ooc_err_prefix(err, rc, "%s", prefix);
    ooc_sem_start(s, i);
    ooc_sem_finish(s, i);
  }
  return OOC_OK;
}

int
ooc_program_validate(const ooc_program *p, ooc_err *err)
{
  ooc_sem s;
  checker c = { .p = p, .err = err };
  uint8_t *at_start = NULL;
  int32_t i, t;
  int rc;

  rc = ooc_program_check_structure(p, err);
  if (rc != OOC_OK)
    return rc;
  ooc_sem_init(&s);
  at_start = calloc((size_t)p->n_tensors + 1, 1);
  c.vc = calloc((size_t)p->n_instr + 1, sizeof *c.vc);
  c.dev = calloc((size_t)p->n_tensors + 1, sizeof *c.dev);
  c.host = calloc((size_t)p->n_tensors + 1, sizeof *c.host);
  if (at_start == NULL || c.vc == NULL || c.dev == NULL || c.host == NULL ||
      ooc_sem_reset(&s, p) != OOC_OK) {
    rc = ooc_err_set(err, OOC_ENOMEM, "program: out of memory");
    goto done;
  }
  /* The rules, in index order (a valid execution order). */
  for (i = 0; i < p->prologue_end; i++)
    if ((rc = ooc_sem_prologue(&s, i, err)) != OOC_OK) {
      ooc_err_prefix(err, rc, "program: ");
      goto done;
    }
  for (t = 0; t < p->n_tensors; t++)
    at_start[t] = s.flags[t] & (OOC_TS_DEV | OOC_TS_HOST);
  if ((rc = timed_pass(&s, "program: ", err)) != OOC_OK)
    goto done;
  /* The timed part runs again and again: it must leave every allocation
   * as it found it. */
  for (t = 0; t < p->n_tensors; t++) {
    uint8_t now = s.flags[t] & (OOC_TS_DEV | OOC_TS_HOST);
    uint8_t diff = now ^ at_start[t];
    uint8_t bit = (diff & OOC_TS_DEV) ? OOC_TS_DEV : OOC_TS_HOST;

    if (diff == 0)
      continue;
    rc = ooc_err_set(err, OOC_EINVAL,
                     "program: tensor %d (layer %d) is %s in %s memory at "
                     "the end of the iteration but %s at its start; the "
                     "timed part must leave allocations as it found them",
                     t, p->tensors[t].layer,
                     (now & bit) ? "allocated" : "absent",
                     bit == OOC_TS_DEV ? "device" : "host",
                     (now & bit) ? "absent" : "allocated");
    goto done;
  }
  /* The next iteration starts from what this one leaves: data it did not
   * bring back (weights a host step updated and nothing copied in) fail
   * there. */
  if ((rc = timed_pass(&s, "program: in the second iteration: ", err)) !=
      OOC_OK)
    goto done;
  rc = happens_before(&c);
done:
  ooc_sem_fini(&s);
  free(at_start);
  free(c.vc);
  free(c.dev);
  free(c.host);
  return rc;
}

/* ---- HOST steps -------------------------------------------------------- */

int
ooc_program_check_host_step(const ooc_model *m, const ooc_program *p,
                            int32_t i, ooc_err *err)
{
  const ooc_instr *in = &p->instr[i];
  uint64_t n, need[OOC_T_COUNT] = { 0 };
  int32_t role[OOC_T_COUNT], k;
  const char *bad = NULL;
  int32_t bt = -1;

  if (in->layer < 0 || in->layer >= m->n_layers ||
      m->layers[in->layer].param_bytes == 0)
    return ooc_err_set(err, OOC_EINVAL, "program: instruction %d (HOST) "
                       "steps layer %d, which has no parameters", i,
                       in->layer);
  n = m->layers[in->layer].param_bytes;
  need[OOC_T_PARAM] = need[OOC_T_WGRAD] = n;
  need[OOC_T_OPTSTATE] = m->optimizer == OOC_OPT_ADAM ? 2 * n
                         : m->optimizer == OOC_OPT_SGD ? 0 : n;
  role[OOC_T_PARAM] = role[OOC_T_WGRAD] = role[OOC_T_OPTSTATE] = -1;
  for (k = 0; k < in->n_args && bad == NULL; k++) {
    int32_t a = p->args[in->arg_first + k], t = OOC_ARG_TENSOR(a);
    const ooc_ptensor *pt = &p->tensors[t];
    bt = t;
    if (pt->kind != OOC_T_PARAM && pt->kind != OOC_T_WGRAD &&
        pt->kind != OOC_T_OPTSTATE)
      bad = "which is not the layer's weights, weight gradients or "
            "optimizer state";
    else if (pt->layer != in->layer)
      bad = "which belongs to another layer";
    else if (role[pt->kind] >= 0)
      bad = "a second time";
    else if (!(a & OOC_ARG_WRITE) != (pt->kind == OOC_T_WGRAD))
      bad = pt->kind == OOC_T_WGRAD ? "as written (the step reads it)"
                                    : "as read only (the step writes it)";
    else if (pt->bytes < need[pt->kind])
      bad = "which is smaller than the step's";
    else
      role[pt->kind] = t;
  }
  if (bad == NULL) {
    bt = -1;
    if (role[OOC_T_PARAM] < 0)
      bad = "weights";
    else if (role[OOC_T_WGRAD] < 0)
      bad = "weight gradients";
    else if (role[OOC_T_OPTSTATE] < 0 && need[OOC_T_OPTSTATE] > 0)
      bad = "optimizer state";
  }
  if (bad != NULL && bt >= 0)
    return ooc_err_set(err, OOC_EINVAL, "program: instruction %d (HOST, "
                       "layer %d) names tensor %d (%s of layer %d) %s", i,
                       in->layer, bt,
                       ooc_tensor_kind_name((ooc_tensor_kind)
                                            p->tensors[bt].kind),
                       p->tensors[bt].layer, bad);
  if (bad != NULL)
    return ooc_err_set(err, OOC_EINVAL, "program: instruction %d (HOST, "
                       "layer %d) does not name the host copy of the "
                       "layer's %s", i, in->layer, bad);
  return OOC_OK;
}
