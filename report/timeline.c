/* report/timeline.c — stall spans and swap pairs of a trace (timeline.h).
 *
 * Both walk the trace's spans in time order: the stalls replay, for each
 * gap of the compute stream, the waits of the instruction that ends it (the
 * rule of sim/engine.c: the stream is stuck on the first wait not yet
 * complete); the swaps keep the last D2H seen per tensor. O(spans log
 * spans + waits).
 */
#include "config.h"

#include <stdlib.h>

#include "report/timeline.h"

int64_t
ooc_trace_origin_ns(const ooc_trace *t)
{
  int64_t o = INT64_MAX;
  int32_t i;

  for (i = 0; i < t->n_spans; i++)
    if (t->spans[i].start_ns < o)
      o = t->spans[i].start_ns;
  for (i = 0; i < t->n_mem; i++)
    if (t->mem[i].t_ns < o)
      o = t->mem[i].t_ns;
  return o == INT64_MAX ? 0 : o;
}

const char *
ooc_timeline_cause_label(ooc_stall cause)
{
  switch (cause) {
  case OOC_STALL_SWAPIN: return "swap-in";
  case OOC_STALL_SWAPOUT: return "swap-out";
  case OOC_STALL_HOST: return "host";
  default: return "other";
  }
}

/* A span of the trace with the key it is ordered by. */
struct ord {
  int64_t start;
  int32_t instr, span;
};

static int
ord_cmp(const void *a, const void *b)
{
  const struct ord *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->instr - y->instr;
}

/* The spans of t whose instruction is valid and (stream < 0 or) on
 * `stream` / of `kind` (kind < 0: any), in time order, then program
 * order. *n = 0 and NULL when none. */
static int
spans_in_order(const ooc_program *p, const ooc_trace *t, int stream,
               int kind, struct ord **out, int32_t *n)
{
  struct ord *o;
  int32_t k = 0;

  *out = NULL;
  *n = 0;
  if (t->n_spans == 0)
    return OOC_OK;
  o = malloc((size_t)t->n_spans * sizeof *o);
  if (o == NULL)
    return OOC_ENOMEM;
  for (int32_t i = 0; i < t->n_spans; i++) {
    int32_t in = t->spans[i].instr;
    if (in < 0 || in >= p->n_instr)
      continue;
    if (stream >= 0 && p->instr[in].stream != stream)
      continue;
    if (kind >= 0 && p->instr[in].kind != kind)
      continue;
    o[k++] = (struct ord){ .start = t->spans[i].start_ns, .instr = in,
                           .span = i };
  }
  if (k > 1)
    qsort(o, (size_t)k, sizeof *o, ord_cmp);
  *out = o;
  *n = k;
  return OOC_OK;
}

static ooc_stall
cause_of(const ooc_program *p, int32_t w)
{
  switch (p->instr[w].stream) {
  case OOC_STREAM_H2D: return OOC_STALL_SWAPIN;
  case OOC_STREAM_D2H: return OOC_STALL_SWAPOUT;
  default: return OOC_STALL_OTHER;
  }
}

/* Append one stall span, growing the array geometrically. */
static int
push_stall(ooc_stall_span **a, int32_t *n, int32_t *cap, ooc_stall_span s)
{
  if (*n == *cap) {
    int32_t nc = *cap ? 2 * *cap : 64;
    ooc_stall_span *g = realloc(*a, (size_t)nc * sizeof *g);
    if (g == NULL)
      return OOC_ENOMEM;
    *a = g;
    *cap = nc;
  }
  (*a)[(*n)++] = s;
  return OOC_OK;
}

int
ooc_timeline_stalls(const ooc_program *p, const ooc_trace *t,
                    ooc_stall_span **out, int32_t *n)
{
  struct ord *cs = NULL;
  int64_t *end_of = NULL, prev_end;
  ooc_stall_span *a = NULL;
  int32_t nc = 0, na = 0, cap = 0;
  int rc;

  *out = NULL;
  *n = 0;
  if ((rc = spans_in_order(p, t, OOC_STREAM_COMPUTE, -1, &cs, &nc)) < 0)
    return rc;
  if (nc == 0)
    return OOC_OK;
  end_of = malloc((size_t)p->n_instr * sizeof *end_of);
  if (end_of == NULL) {
    rc = OOC_ENOMEM;
    goto fail;
  }
  for (int32_t i = 0; i < p->n_instr; i++)
    end_of[i] = INT64_MIN;          /* no span: did not run in this trace */
  for (int32_t i = 0; i < t->n_spans; i++)
    if (t->spans[i].instr >= 0 && t->spans[i].instr < p->n_instr)
      end_of[t->spans[i].instr] = t->spans[i].end_ns;
  prev_end = ooc_trace_origin_ns(t);
  for (int32_t k = 0; k < nc; k++) {
    const ooc_instr *in = &p->instr[cs[k].instr];
    const ooc_span *sp = &t->spans[cs[k].span];
    int64_t at = prev_end, b = sp->start_ns;

    for (int32_t j = 0; j < in->n_waits && at < b; j++) {
      int32_t w = p->waits[in->wait_first + j];
      int64_t e;
      if (w < p->prologue_end || w < 0 || w >= p->n_instr)
        continue;                   /* complete before the iteration */
      e = end_of[w] == INT64_MIN ? b : end_of[w];
      if (e <= at)
        continue;
      if (e > b)
        e = b;
      rc = push_stall(&a, &na, &cap, (ooc_stall_span){
        .start_ns = at, .end_ns = e, .cause = cause_of(p, w),
        .waits_for = w, .next = cs[k].instr });
      if (rc < 0)
        goto fail;
      at = e;
    }
    if (at < b && sp->host_wait_ns > 0) {
      /* What the simulator counted as waiting for the host: the end of
       * the gap, after the waits. */
      int64_t h = b - sp->host_wait_ns > at ? b - sp->host_wait_ns : at;
      if (h > at &&
          (rc = push_stall(&a, &na, &cap, (ooc_stall_span){
            .start_ns = at, .end_ns = h, .cause = OOC_STALL_OTHER,
            .waits_for = -1, .next = cs[k].instr })) < 0)
        goto fail;
      if ((rc = push_stall(&a, &na, &cap, (ooc_stall_span){
            .start_ns = h, .end_ns = b, .cause = OOC_STALL_HOST,
            .waits_for = -1, .next = cs[k].instr })) < 0)
        goto fail;
      at = b;
    }
    if (at < b &&
        (rc = push_stall(&a, &na, &cap, (ooc_stall_span){
          .start_ns = at, .end_ns = b, .cause = OOC_STALL_OTHER,
          .waits_for = -1, .next = cs[k].instr })) < 0)
      goto fail;
    if (sp->end_ns > prev_end)
      prev_end = sp->end_ns;
  }
  free(cs);
  free(end_of);
  *out = a;
  *n = na;
  return OOC_OK;
fail:
  free(cs);
  free(end_of);
  free(a);
  return rc;
}

int
ooc_timeline_swaps(const ooc_program *p, const ooc_trace *t,
                   ooc_swap_pair **out, int32_t *n)
{
  struct ord *o = NULL;
  int32_t *last_out = NULL, no = 0, np = 0;
  ooc_swap_pair *pairs = NULL;
  int rc;

  *out = NULL;
  *n = 0;
  if ((rc = spans_in_order(p, t, -1, -1, &o, &no)) < 0)
    return rc;
  if (no == 0 || p->n_tensors == 0) {
    free(o);
    return OOC_OK;
  }
  last_out = malloc((size_t)p->n_tensors * sizeof *last_out);
  pairs = malloc((size_t)no * sizeof *pairs);
  if (last_out == NULL || pairs == NULL) {
    free(o);
    free(last_out);
    free(pairs);
    return OOC_ENOMEM;
  }
  for (int32_t i = 0; i < p->n_tensors; i++)
    last_out[i] = -1;
  for (int32_t k = 0; k < no; k++) {
    const ooc_instr *in = &p->instr[o[k].instr];
    if (in->tensor < 0 || in->tensor >= p->n_tensors)
      continue;
    if (in->kind == OOC_I_D2H)
      last_out[in->tensor] = o[k].span;
    else if (in->kind == OOC_I_H2D && last_out[in->tensor] >= 0)
      pairs[np++] = (ooc_swap_pair){ .out_span = last_out[in->tensor],
                                     .in_span = o[k].span,
                                     .tensor = in->tensor };
  }
  free(o);
  free(last_out);
  if (np == 0) {
    free(pairs);
    pairs = NULL;
  }
  *out = pairs;
  *n = np;
  return OOC_OK;
}
