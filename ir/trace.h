/* ir/trace.h — a timeline of one iteration: a span per instruction and
 * memory samples. The simulator fills it with predicted times; the
 * executor fills the same struct with measured ones, so every writer and
 * plot reads one format (report/trace_out.h writes it as a Chrome trace
 * for Perfetto, as CSV timelines and as memory curves).
 *
 * Spans are appended as instructions complete, with times relative to the
 * start of the iteration; memory samples after each device ALLOC/FREE plus
 * one at the iteration's start.
 *
 * Ownership: ooc_trace is caller-embedded (ooc_trace_init/_fini); its
 * arrays are grown by whoever records into it and reused across runs.
 */
#ifndef OOC_TRACE_H
#define OOC_TRACE_H

#include <stdint.h>

typedef struct ooc_span {
  int32_t instr;
  int64_t start_ns, end_ns;
  int64_t host_wait_ns;   /* compute stream: of the idle time before it,
                             how much the simulator counted as waiting for
                             the host to issue it (OOC_STALL_HOST); 0 in a
                             measured trace */
} ooc_span;

typedef struct ooc_mem_sample {
  int64_t t_ns;
  uint64_t allocated, reserved;
} ooc_mem_sample;

typedef struct ooc_trace {
  int32_t n_spans, cap_spans;
  ooc_span *spans;
  int32_t n_mem, cap_mem;
  ooc_mem_sample *mem;
} ooc_trace;

void ooc_trace_init(ooc_trace *t);
void ooc_trace_fini(ooc_trace *t);

/* Grow t to hold n_spans spans and n_mem samples (capacity only; the
 * counts are reset to 0). Returns 0, or -1 when out of memory. */
int ooc_trace_reserve(ooc_trace *t, int32_t n_spans, int32_t n_mem);

#endif
