/* report/trace_out.h — write a simulated (or measured) iteration as a Chrome
 * trace event file for Perfetto / chrome://tracing, and its memory curve as
 * CSV.
 *
 * Trace: one process named after the model ("oocsim" without one), one
 * thread (lane) per stream: "compute",
 * "H2D", "D2H"; each timed instruction with a duration is an "X" event named
 * by phase and layer ("fwd conv1", "bwd res2a", "recomp conv1", "update",
 * "h2d conv1", "d2h conv1", "alloc conv1") with category fwd, bwd, recomp,
 * update, h2d, d2h or alloc; a counter track "memory" carries allocated and
 * reserved bytes at every sample. Times are microseconds from the start of
 * the recorded iteration, with nanosecond precision.
 *
 * Memory CSV: header "time_s,allocated_bytes,reserved_bytes", one row per
 * memory sample, same time origin.
 *
 * Timeline CSV (what `oocsim plot gantt` draws; `oocsim report` writes it
 * to data/timeline.csv, `simulate --timeline-csv` anywhere): header
 * "lane,start_s,end_s,phase,layer,cause", then one row per span with lane
 * compute|h2d|d2h, phase fwd|bwd|recompute|update|swapin|swapout|alloc|
 * free, and one per compute stall (timeline.h) with phase stall, the layer
 * of the instruction waited for (empty when none) and cause swapin|
 * swapout|other; cause is empty on the other rows. Ordered by lane, then
 * start, then end. Times are exact: seconds with nine decimals.
 *
 * Ownership: everything is borrowed; the writers allocate nothing per event
 * (fprintf straight to f). O(spans + samples); the timeline sorts its rows,
 * O(n log n) with one array of them.
 */
#ifndef OOC_TRACE_OUT_H
#define OOC_TRACE_OUT_H

#include <stdio.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/program.h"
#include "sim/sim.h"
#include "report/timeline.h"

int ooc_trace_write_chrome(FILE *f, const ooc_model *m, const ooc_program *p,
                           const ooc_trace *t);
int ooc_trace_write_mem_csv(FILE *f, const ooc_trace *t);
int ooc_trace_write_timeline(FILE *f, const ooc_model *m,
                             const ooc_program *p, const ooc_trace *t);

/* Convenience: open path, write, close; err names the path on failure. */
int ooc_trace_save_chrome(const char *path, const ooc_model *m,
                          const ooc_program *p, const ooc_trace *t,
                          ooc_err *err);
int ooc_trace_save_mem_csv(const char *path, const ooc_trace *t,
                           ooc_err *err);
int ooc_trace_save_timeline(const char *path, const ooc_model *m,
                            const ooc_program *p, const ooc_trace *t,
                            ooc_err *err);

#endif
