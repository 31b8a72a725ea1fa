/* sim/sim.h — the discrete-event simulator.
 *
 * Runs a program (program.h) on a profile: a compute stream, copy engines
 * (two when the profile has >= 2: H2D and D2H run concurrently and share the
 * link at the profile's duplex rates; one: they serialise) and an allocator
 * model (alloc.h). Events live on a binary min-heap keyed by (time in
 * integer ns, sequence number), so equal times run in insertion order and
 * every run is reproducible. An ALLOC that cannot be satisfied is out of
 * memory: the run ends infeasible with an OOM report, never a crash and
 * never a wait (a schedule that needs a swap-out to make room says so with
 * a wait, docs/program-ir.md).
 *
 * The simulator checks the program's semantics as it runs, with the rules
 * of ir/semantics.h (shared with the executor and the validator): nothing
 * touched while absent, read while being copied in or before it holds
 * data, freed with a copy in flight, or raced by a copy or FREE while the
 * running kernel uses it. Such a violation is an OOC_EINVAL error naming
 * the instruction (a planner bug, not a result).
 *
 * Time: COMPUTE costs come from ooc_costs (fwd: fwd_ns[layer]; recomp:
 * recomp_ns[layer]; bwd: bwd_ns[layer]; update: update_ns; another kernel
 * algorithm: ooc_costs_algo_ns). A copy has a latency phase
 * (copy_latency_ns, no bandwidth) then a fluid transfer at h2d_Bps/d2h_Bps,
 * or duplex_h2d_Bps/duplex_d2h_Bps each while an H2D and a D2H overlap; a
 * copy alone takes latency + ceil(bytes x 1e9 / rate) ns. With one copy
 * engine the two copy streams share it and the ready copy with the lower
 * index goes first. ALLOC/FREE take the price of the allocator policy's
 * driver actions (ooc_cost_drv_ns) on their stream. Pinned host ALLOC/FREE
 * (where = host) are counted against hw->host_mem (0: no limit) and cost
 * hw->host_alloc_ns.
 *
 * Iterations: the prologue runs once at t = 0 at no cost; then the timed
 * part runs `iterations` times, each starting when the previous one has
 * drained (a device synchronise), allocator and tensor state carried over;
 * with `max_iterations` above that, then more, up to it, until one takes
 * and gives back no device memory (no segment malloc or free, no physical
 * chunk created or released; mapping cached chunks does not count): the
 * steady state. A caching policy's first iteration fills its cache, and
 * its second may still release and refill segments, so that a plan that
 * fits twice can run out of memory the third time, as a real run would
 * (window's plan of bert_large b18 on v100-pcie3 does). An iteration that
 * keeps the policy's segments and chunks as they were and frees what it
 * allocated leaves the policy in the state it started from (its free
 * blocks are what the live ones leave of the segments, merged), so every
 * later iteration repeats it; r->steady says whether the last one did.
 * Times, busy, stall, byte and flop figures are those of the last
 * iteration (out of memory: of the iteration that ran out, up to its
 * failed ALLOC, its kernels and copies that had started counted whole);
 * peaks and `events` cover the whole run. Trace times are
 * relative to the start of the last iteration; spans are appended as
 * instructions complete, memory samples after each device ALLOC/FREE (plus
 * one at the iteration's start).
 *
 * Cost: O((instructions + waits) log streams) per iteration; no host
 * allocation per event (the heap, stream and tensor arrays are sized once
 * per ooc_sim and reused by every run).
 *
 * Ownership: ooc_sim_alloc() returns an object freed by ooc_sim_free()
 * (accepts NULL). It borrows model, hw and costs, which must outlive it.
 * The model may be NULL (unit tests): recompute_flops is then 0 and the
 * program's model fingerprint is not checked.
 * An ooc_trace passed to a run is caller-owned (ooc_trace_init/_fini).
 */
#ifndef OOC_SIM_H
#define OOC_SIM_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "sim/cost.h"
#include "alloc/alloc.h"
#include "ir/program.h"
#include "ir/trace.h"

/* Why the compute stream was idle while it had work left. */
typedef enum {
  OOC_STALL_SWAPIN = 0,  /* waiting for an H2D copy (or its ALLOC) */
  OOC_STALL_SWAPOUT,     /* waiting for a D2H copy or the FREE after it:
                            the room a swap-out makes */
  OOC_STALL_OTHER,       /* any other dependency */
  OOC_STALL_HOST,        /* the next kernel is not issued yet: the host
                            (framework overhead, a host synchronisation)
                            is behind */
  OOC_STALL_COUNT
} ooc_stall;

typedef struct ooc_sim_result {
  int feasible;
  ooc_oom oom;                 /* valid when !feasible */
  int64_t iteration_ns;        /* makespan of the last timed iteration */
  uint64_t peak_allocated, peak_reserved;
  double fragmentation;        /* 1 - allocated/reserved at peak reserved */
  uint64_t peak_host_pinned;   /* pinned host bytes in use at peak */
  uint64_t h2d_bytes, d2h_bytes;          /* per iteration */
  double recompute_flops;                 /* per iteration */
  int64_t recompute_ns;                   /* compute time in recompute
                                             kernels, per iteration */
  int64_t compute_busy_ns, h2d_busy_ns, d2h_busy_ns;
  int64_t stall_ns[OOC_STALL_COUNT];
  int64_t alloc_ns;            /* time streams spent in allocator calls,
                                  a synchronising one's wait for the
                                  device to drain included */
  uint64_t events;             /* events processed, all iterations */
  int64_t host_busy_ns;        /* CPU optimizer steps (HOST), per
                                  iteration */
  int iterations;              /* timed iterations run */
  int steady;                  /* the last took and gave back no device
                                  memory: every later one repeats it
                                  (0: a longer run may differ, or run out
                                  of memory; or the run stopped early) */
  int cut;                     /* ooc_sim_run_cutoff stopped the run: the
                                  last iteration takes more than the
                                  cutoff; iteration_ns is then a lower
                                  bound above it (its kernels still to
                                  run, back to back), feasible is 1 but
                                  unknown, the other figures partial */
} ooc_sim_result;

/* Optional recorder of the last iteration's figures per kernel and per
 * tensor (out of memory: the iteration that ran out's, up to then, as the
 * result's figures), for planners that search (PoocH §4.4.2 takes the swap-outs and
 * swap-ins that compute cannot hide from exactly these). Arrays are
 * indexed by instruction (only COMPUTE entries are filled; start and end
 * are -1 elsewhere) and by tensor. Times are relative to the start of the
 * iteration. The caller owns it (ooc_sim_detail_init/_fini); a run sizes
 * it for its program, reusing the arrays. */
typedef struct ooc_sim_detail {
  int32_t n_instr, cap_instr, n_tensors, cap_tensors;
  int64_t *start_ns, *end_ns;   /* per COMPUTE, H2D and D2H: when it ran
                                   (a copy: from its issue, latency
                                   included, to its completion) */
  int64_t *stall_ns;            /* per COMPUTE: the compute stream's idle
                                   time since the previous kernel started */
  uint8_t *stall_cause;         /* per COMPUTE: the ooc_stall of most of it */
  uint64_t *free_bytes;         /* per COMPUTE: budget - allocated bytes as
                                   it starts */
  int64_t *exposed_in_ns;       /* per tensor: compute idle waiting for its
                                   swap-in (H2D or the ALLOC before it) */
  int64_t *exposed_out_ns;      /* per tensor: compute idle waiting for its
                                   swap-out (D2H or the FREE after it) */
  /* The order in which the allocator policy saw the device ALLOC and FREE
   * instructions, over every timed iteration (the prologue runs in index
   * order): iteration k's are mem_order[iter_first[k] .. iter_first[k+1]).
   * An executor that applies them in this order gets the placements, and
   * so the fragmentation, the simulator predicted. */
  int32_t *mem_order, n_mem_order, cap_mem_order;
  int32_t *iter_first, n_iter, cap_iter;
} ooc_sim_detail;

void ooc_sim_detail_init(ooc_sim_detail *d);
void ooc_sim_detail_fini(ooc_sim_detail *d);
/* Size d for p and clear it (OOC_ENOMEM). ooc_sim_run_detail calls it. */
int ooc_sim_detail_reserve(ooc_sim_detail *d, const ooc_program *p);
/* Back to "nothing ran": start/end -1, stalls and exposures 0. */
void ooc_sim_detail_clear(ooc_sim_detail *d);

typedef struct ooc_sim_config {
  const ooc_model *model;
  const ooc_hw *hw;
  const ooc_costs *costs;
  const ooc_allocator_type *allocator;
  const char *allocator_options; /* "key=value:key" after the allocator's
                             name in its spec, NULL for none; borrowed,
                             must outlive the simulator */
  uint64_t budget;        /* device bytes the allocator may use (0: the
                             profile's mem_usable) */
  uint64_t chunk_bytes;   /* va chunk (0: the profile's) */
  int iterations;         /* timed iterations, >= 1 (0 means the default,
                             2: the last is reported, so caching state is
                             warm) */
  int max_iterations;     /* 0 (or iterations): exactly `iterations`;
                             more: then more until one is steady (above),
                             up to this many in all (--steady:
                             OOC_SIM_MAX_ITERATIONS) */
} ooc_sim_config;

/* The cap on timed iterations that --steady asks for: of the plans
 * checked (the benchmark's on v100-pcie3 and h100-pcie5 for seven of its
 * models), the allocator settles by the fifth when it settles at all
 * (window's plan of densenet121 b252 on v100-pcie3). */
#define OOC_SIM_MAX_ITERATIONS 8

typedef struct ooc_sim ooc_sim;

int ooc_sim_alloc(const ooc_sim_config *cfg, ooc_sim **out, ooc_err *err);
void ooc_sim_free(ooc_sim *s);
/* A new simulator configured as s (model, profile, costs, allocator and
 * its options, budget, chunk, iterations), for a planner's helper
 * thread: one simulator is never shared between threads. OOC_ENOMEM. */
int ooc_sim_clone(const ooc_sim *s, ooc_sim **out, ooc_err *err);

/* Simulate program p. Returns OOC_OK with r filled (r->feasible may be 0:
 * OOM is a result), or OOC_EINVAL if the program is malformed or breaks
 * tensor semantics (err says where). trace may be NULL; when given, the
 * spans and memory samples of the last iteration are recorded. */
/* How many times ooc_sim_run / ooc_sim_run_detail ran on s: a planner's
 * simulations (the summary's plan_simulations). O(1). */
uint64_t ooc_sim_runs(const ooc_sim *s);
/* Count n runs made on another simulator on s's behalf (a planner's
 * helper's), so that ooc_sim_runs says what planning cost. O(1). */
void ooc_sim_add_runs(ooc_sim *s, uint64_t n);

int ooc_sim_run(ooc_sim *s, const ooc_program *p, ooc_sim_result *r,
                ooc_trace *trace, ooc_err *err);
/* ooc_sim_run without a trace, for a search that only asks whether a
 * plan is faster than cutoff_ns (> 0; 0: run it whole): the last
 * iteration stops as soon as the time it has taken, plus every kernel it
 * has not started run back to back, exceeds cutoff_ns; r->cut is then 1.
 * A run that is not cut is the run ooc_sim_run makes, figure for figure,
 * and a cut run's time would have exceeded cutoff_ns (or it would have
 * run out of memory). */
int ooc_sim_run_cutoff(ooc_sim *s, const ooc_program *p, int64_t cutoff_ns,
                       ooc_sim_result *r, ooc_err *err);
/* on != 0: later runs do not limit pinned host memory (a profiling run that
 * measures times only; r->peak_host_pinned still says what it needed);
 * 0: back to hw->host_mem. O(1). */
void ooc_sim_set_host_unlimited(ooc_sim *s, int on);
/* ooc_sim_run with the detail recorder d (NULL: none). */
int ooc_sim_run_detail(ooc_sim *s, const ooc_program *p, ooc_sim_result *r,
                       ooc_trace *trace, ooc_sim_detail *d, ooc_err *err);

/* Duration the simulator gives instruction i alone (no link sharing, no
 * allocator cost); used by planners and reports. */
int64_t ooc_sim_instr_ns(const ooc_sim *s, const ooc_program *p, int32_t i);

const char *ooc_stall_name(ooc_stall st);

#endif
