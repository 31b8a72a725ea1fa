/* report/trace_out.c — Chrome trace event JSON, memory and timeline CSV
 * (trace_out.h).
 *
 * Written with fprintf, event by event, so a trace of 10^5 spans needs no
 * document tree in memory. Strings are JSON-escaped. O(spans + samples).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/table.h"
#include "report/trace_out.h"
#include "base/atomic.h"

static const char *const lane_names[OOC_NSTREAMS] = {
  [OOC_STREAM_COMPUTE] = "compute",
  [OOC_STREAM_H2D] = "H2D",
  [OOC_STREAM_D2H] = "D2H",
  [OOC_STREAM_HOST] = "host",
};

static void
put_json_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* Microseconds with nanosecond precision, from integer ns (exact). */
static void
put_us(FILE *f, int64_t ns)
{
  if (ns < 0) {
    fputc('-', f);
    ns = -ns;
  }
  fprintf(f, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

static const char *
category(const ooc_instr *in)
{
  switch (in->kind) {
  case OOC_I_COMPUTE:
    switch (in->phase) {
    case OOC_PH_FWD: return "fwd";
    case OOC_PH_BWD: return "bwd";
    case OOC_PH_RECOMP: return "recomp";
    case OOC_PH_UPDATE: return "update";
    default: return "compute";
    }
  case OOC_I_H2D: return "h2d";
  case OOC_I_D2H: return "d2h";
  case OOC_I_ALLOC: return "alloc";
  case OOC_I_FREE: return "free";
  case OOC_I_HOST: return "cpu-update";
  default: return "other";
  }
}

/* A span's event name: "<category> <layer>", or "update". */
static void
span_name(const ooc_model *m, const ooc_instr *in, char *buf, size_t n)
{
  const char *lname = m != NULL && in->layer >= 0 && in->layer < m->n_layers
                          ? m->layers[in->layer].name : NULL;
  if (in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_UPDATE)
    snprintf(buf, n, "update");
  else
    snprintf(buf, n, "%s %s", category(in), lname != NULL ? lname : "-");
}

/* A COMPUTE's work from the model: FLOPs and bytes read + written of the
 * layer's forward (recompute is a forward) or backward (data and weight
 * gradients); the update reads and writes the weights and the optimizer
 * state and reads the gradients (sim/cost.c), FLOPs not modelled. */
static void
put_work(FILE *f, const ooc_model *m, const ooc_instr *in)
{
  const ooc_layer *l;

  if (m == NULL)
    return;
  if (in->phase == OOC_PH_UPDATE) {
    fprintf(f, ",\"bytes\":%.17g", 2.0 * (double)m->weight_bytes +
            (double)m->grad_bytes + 2.0 * (double)m->opt_bytes);
    return;
  }
  if (in->layer < 0 || in->layer >= m->n_layers)
    return;
  l = &m->layers[in->layer];
  if (in->phase == OOC_PH_BWD)
    fprintf(f, ",\"flops\":%.17g,\"bytes\":%.17g",
            l->bwd_data_flops + l->bwd_weight_flops, l->bwd_bytes_rw);
  else
    fprintf(f, ",\"flops\":%.17g,\"bytes\":%.17g", l->fwd_flops,
            l->fwd_bytes_rw);
}

static void
put_span(FILE *f, const ooc_model *m, const ooc_program *p,
         const ooc_span *sp, int64_t origin)
{
  const ooc_instr *in = &p->instr[sp->instr];
  char name[320];

  span_name(m, in, name, sizeof name);
  fputs(",\n{\"name\":", f);
  put_json_string(f, name);
  fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":",
          category(in), in->stream < OOC_NSTREAMS ? in->stream : 0);
  put_us(f, sp->start_ns - origin);
  fputs(",\"dur\":", f);
  put_us(f, sp->end_ns - sp->start_ns);
  fprintf(f, ",\"args\":{\"instr\":%d", (int)sp->instr);
  if (in->kind == OOC_I_COMPUTE)
    put_work(f, m, in);
  else if (in->kind == OOC_I_HOST && m != NULL && in->layer >= 0 &&
           in->layer < m->n_layers)
    fprintf(f, ",\"bytes\":%.17g",
            2.0 * (double)m->layers[in->layer].param_bytes +
            (double)m->layers[in->layer].grad_bytes +
            2.0 * (double)m->layers[in->layer].opt_bytes);
  else if (in->tensor >= 0 && in->tensor < p->n_tensors)
    fprintf(f, ",\"tensor\":%d,\"bytes\":%" PRIu64, (int)in->tensor,
            p->tensors[in->tensor].bytes);
  fputs("}}", f);
}

/* A stall on the compute lane: "stall swap-in", "stall swap-out" or
 * "stall other", with what it waited for. */
static void
put_stall(FILE *f, const ooc_model *m, const ooc_program *p,
          const ooc_stall_span *st, int64_t origin)
{
  static const char *const keys[OOC_STALL_COUNT] = {
    [OOC_STALL_SWAPIN] = "swapin", [OOC_STALL_SWAPOUT] = "swapout",
    [OOC_STALL_OTHER] = "other", [OOC_STALL_HOST] = "host",
  };
  char name[320];

  fprintf(f, ",\n{\"name\":\"stall %s\",\"cat\":\"stall\",\"ph\":\"X\","
             "\"pid\":1,\"tid\":%d,\"ts\":",
          ooc_timeline_cause_label(st->cause), OOC_STREAM_COMPUTE);
  put_us(f, st->start_ns - origin);
  fputs(",\"dur\":", f);
  put_us(f, st->end_ns - st->start_ns);
  fprintf(f, ",\"args\":{\"cause\":\"%s\"", keys[st->cause]);
  if (st->waits_for >= 0) {
    span_name(m, &p->instr[st->waits_for], name, sizeof name);
    fprintf(f, ",\"waits_for_instr\":%d,\"waits_for\":", (int)st->waits_for);
    put_json_string(f, name);
  }
  fprintf(f, ",\"next_instr\":%d}}", (int)st->next);
}

/* The flow from a swap-out to its swap-in: "s" inside the D2H slice, "f"
 * inside the H2D slice (bound to it, "bp":"e"), both at the slice's middle
 * so neither can bind to a neighbour that touches it. Flows match by id,
 * category and name. */
static void
put_flow(FILE *f, const ooc_model *m, const ooc_program *p,
         const ooc_trace *t, const ooc_swap_pair *sw, int id, int64_t origin)
{
  const ooc_span *o = &t->spans[sw->out_span], *in = &t->spans[sw->in_span];
  const ooc_instr *oi = &p->instr[o->instr];
  const char *lname = m != NULL && oi->layer >= 0 && oi->layer < m->n_layers
                          ? m->layers[oi->layer].name : NULL;
  char name[320];

  snprintf(name, sizeof name, "swap %s", lname != NULL ? lname : "-");
  fputs(",\n{\"name\":", f);
  put_json_string(f, name);
  fprintf(f, ",\"cat\":\"swap\",\"ph\":\"s\",\"id\":%d,\"pid\":1,\"tid\":%d,"
             "\"ts\":", id, OOC_STREAM_D2H);
  put_us(f, o->start_ns + (o->end_ns - o->start_ns) / 2 - origin);
  fprintf(f, ",\"args\":{\"tensor\":%d}}", (int)sw->tensor);
  fputs(",\n{\"name\":", f);
  put_json_string(f, name);
  fprintf(f, ",\"cat\":\"swap\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%d,"
             "\"pid\":1,\"tid\":%d,\"ts\":", id, OOC_STREAM_H2D);
  put_us(f, in->start_ns + (in->end_ns - in->start_ns) / 2 - origin);
  fprintf(f, ",\"args\":{\"tensor\":%d}}", (int)sw->tensor);
}

int
ooc_trace_write_chrome(FILE *f, const ooc_model *m, const ooc_program *p,
                       const ooc_trace *t)
{
  int64_t origin = ooc_trace_origin_ns(t);
  ooc_stall_span *st = NULL;
  ooc_swap_pair *sw = NULL;
  int32_t i, nst = 0, nsw = 0;
  int lane, lanes, rc;

  if ((rc = ooc_timeline_stalls(p, t, &st, &nst)) < 0 ||
      (rc = ooc_timeline_swaps(p, t, &sw, &nsw)) < 0) {
    free(st);
    return rc;
  }
  fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
  fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
        "\"args\":{\"name\":", f);
  put_json_string(f, m != NULL && m->name != NULL ? m->name : "oocsim");
  fputs("}}", f);
  /* The host lane only where the program runs the optimizer there. */
  for (i = 0, lanes = OOC_STREAM_HOST; i < p->n_instr; i++)
    if (p->instr[i].stream == OOC_STREAM_HOST) {
      lanes = OOC_NSTREAMS;
      break;
    }
  for (lane = 0; lane < lanes; lane++) {
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,"
               "\"tid\":%d,\"args\":{\"name\":\"%s\"}}", lane,
            lane_names[lane]);
    fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,"
               "\"tid\":%d,\"args\":{\"sort_index\":%d}}", lane, lane);
  }
  for (i = 0; i < t->n_spans; i++) {
    const ooc_span *sp = &t->spans[i];
    if (sp->instr < 0 || sp->instr >= p->n_instr)
      continue;
    if (sp->end_ns <= sp->start_ns && p->instr[sp->instr].kind !=
                                          OOC_I_COMPUTE)
      continue;     /* zero-cost ALLOC/FREE: nothing to see */
    put_span(f, m, p, sp, origin);
  }
  for (i = 0; i < nst; i++)
    put_stall(f, m, p, &st[i], origin);
  for (i = 0; i < nsw; i++)
    put_flow(f, m, p, t, &sw[i], (int)i + 1, origin);
  /* Two counters, so Perfetto draws two tracks instead of stacking two
   * series of one counter. */
  for (i = 0; i < t->n_mem; i++) {
    fputs(",\n{\"name\":\"allocated\",\"ph\":\"C\",\"pid\":1,\"tid\":0,"
          "\"ts\":", f);
    put_us(f, t->mem[i].t_ns - origin);
    fprintf(f, ",\"args\":{\"bytes\":%" PRIu64 "}}", t->mem[i].allocated);
    fputs(",\n{\"name\":\"reserved\",\"ph\":\"C\",\"pid\":1,\"tid\":0,"
          "\"ts\":", f);
    put_us(f, t->mem[i].t_ns - origin);
    fprintf(f, ",\"args\":{\"bytes\":%" PRIu64 "}}", t->mem[i].reserved);
  }
  fputs("\n]}\n", f);
  free(st);
  free(sw);
  return ferror(f) ? OOC_EIO : OOC_OK;
}

int
ooc_trace_write_mem_csv(FILE *f, const ooc_trace *t)
{
  int64_t origin = ooc_trace_origin_ns(t), ns;
  int32_t i;

  fputs("time_s,allocated_bytes,reserved_bytes\n", f);
  for (i = 0; i < t->n_mem; i++) {
    ns = t->mem[i].t_ns - origin;
    fprintf(f, "%" PRId64 ".%09d,%" PRIu64 ",%" PRIu64 "\n",
            ns / 1000000000, (int)(ns % 1000000000), t->mem[i].allocated,
            t->mem[i].reserved);
  }
  return ferror(f) ? OOC_EIO : OOC_OK;
}

/* Seconds with nine decimals, exact, from integer ns. */
static void
put_s(FILE *f, int64_t ns)
{
  if (ns < 0) {
    fputc('-', f);
    ns = -ns;
  }
  fprintf(f, "%" PRId64 ".%09d", ns / 1000000000, (int)(ns % 1000000000));
}

/* One row of the timeline: a span (stall < 0) or a stall (instr < 0). */
struct trow {
  int lane;
  int64_t s, e;
  int32_t instr, stall;
};

static int
trow_cmp(const void *a, const void *b)
{
  const struct trow *x = a, *y = b;
  if (x->lane != y->lane)
    return x->lane - y->lane;
  if (x->s != y->s)
    return x->s < y->s ? -1 : 1;
  if (x->e != y->e)
    return x->e < y->e ? -1 : 1;
  if (x->instr != y->instr)
    return x->instr - y->instr;
  return x->stall - y->stall;
}

static const char *
span_phase(const ooc_instr *in)
{
  switch (in->kind) {
  case OOC_I_COMPUTE:
    switch (in->phase) {
    case OOC_PH_FWD: return "fwd";
    case OOC_PH_BWD: return "bwd";
    case OOC_PH_RECOMP: return "recompute";
    case OOC_PH_UPDATE: return "update";
    default: return "compute";
    }
  case OOC_I_H2D: return "swapin";
  case OOC_I_D2H: return "swapout";
  case OOC_I_ALLOC: return "alloc";
  case OOC_I_HOST: return "cpu-update";
  default: return "free";
  }
}

static const char *
layer_name(const ooc_model *m, int32_t layer)
{
  return m != NULL && layer >= 0 && layer < m->n_layers &&
         m->layers[layer].name != NULL ? m->layers[layer].name : "";
}

int
ooc_trace_write_timeline(FILE *f, const ooc_model *m, const ooc_program *p,
                         const ooc_trace *t)
{
  static const char *const lanes[OOC_NSTREAMS] = { "compute", "h2d", "d2h",
                                                         "host" };
  static const char *const causes[OOC_STALL_COUNT] = {
    [OOC_STALL_SWAPIN] = "swapin", [OOC_STALL_SWAPOUT] = "swapout",
    [OOC_STALL_OTHER] = "other", [OOC_STALL_HOST] = "host",
  };
  ooc_stall_span *st = NULL;
  struct trow *rows;
  int32_t nst = 0, n = 0;
  int64_t t0 = ooc_trace_origin_ns(t);
  int rc;

  fputs("lane,start_s,end_s,phase,layer,cause\n", f);
  if ((rc = ooc_timeline_stalls(p, t, &st, &nst)) < 0)
    return rc;
  rows = malloc(((size_t)t->n_spans + (size_t)nst + 1) * sizeof *rows);
  if (rows == NULL) {
    free(st);
    return OOC_ENOMEM;
  }
  for (int32_t i = 0; i < t->n_spans; i++) {
    const ooc_span *s = &t->spans[i];
    int lane;
    if (s->instr < 0 || s->instr >= p->n_instr)
      continue;
    lane = p->instr[s->instr].stream;
    rows[n++] = (struct trow){ .lane = lane < OOC_NSTREAMS ? lane : 0,
                               .s = s->start_ns, .e = s->end_ns,
                               .instr = s->instr, .stall = -1 };
  }
  for (int32_t i = 0; i < nst; i++)
    rows[n++] = (struct trow){ .lane = OOC_STREAM_COMPUTE,
                               .s = st[i].start_ns, .e = st[i].end_ns,
                               .instr = -1, .stall = i };
  if (n > 1)
    qsort(rows, (size_t)n, sizeof *rows, trow_cmp);
  for (int32_t i = 0; i < n; i++) {
    const struct trow *r = &rows[i];
    fprintf(f, "%s,", lanes[r->lane]);
    put_s(f, r->s - t0);
    fputc(',', f);
    put_s(f, r->e - t0);
    if (r->stall >= 0) {
      const ooc_stall_span *x = &st[r->stall];
      fputs(",stall,", f);
      ooc_csv_cell(f, x->waits_for >= 0
                          ? layer_name(m, p->instr[x->waits_for].layer) : "");
      fprintf(f, ",%s\n", causes[x->cause]);
    } else {
      const ooc_instr *in = &p->instr[r->instr];
      fprintf(f, ",%s,", span_phase(in));
      ooc_csv_cell(f, layer_name(m, in->layer));
      fputs(",\n", f);
    }
  }
  free(rows);
  free(st);
  return ferror(f) ? OOC_EIO : OOC_OK;
}

/* Every file is written beside its target and renamed over it when
 * complete (base/atomic.h): a full disk or an error leaves the old file,
 * never a truncated one. */
static int
finish(ooc_atomic_file *af, int rc, ooc_err *err)
{
  int e = errno;

  if (rc == OOC_OK)
    return ooc_atomic_commit(af, err);
  if (rc == OOC_ENOMEM)
    rc = ooc_err_set(err, rc, "%s: out of memory", af->path);
  else
    rc = ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", af->path,
                     strerror(e));
  ooc_atomic_abort(af);       /* frees af->path */
  return rc;
}

int
ooc_trace_save_chrome(const char *path, const ooc_model *m,
                      const ooc_program *p, const ooc_trace *t, ooc_err *err)
{
  ooc_atomic_file af;
  int rc;

  if ((rc = ooc_atomic_open(&af, path, err)) < 0)
    return rc;
  return finish(&af, ooc_trace_write_chrome(af.f, m, p, t), err);
}

int
ooc_trace_save_mem_csv(const char *path, const ooc_trace *t, ooc_err *err)
{
  ooc_atomic_file af;
  int rc;

  if ((rc = ooc_atomic_open(&af, path, err)) < 0)
    return rc;
  return finish(&af, ooc_trace_write_mem_csv(af.f, t), err);
}

int
ooc_trace_save_timeline(const char *path, const ooc_model *m,
                        const ooc_program *p, const ooc_trace *t,
                        ooc_err *err)
{
  ooc_atomic_file af;
  int rc;

  if ((rc = ooc_atomic_open(&af, path, err)) < 0)
    return rc;
  return finish(&af, ooc_trace_write_timeline(af.f, m, p, t), err);
}
