/* ir/hw.h — a hardware profile: device memory, compute rates, the host
 * link, allocator costs and optional calibrated per-layer times.
 *
 * Profiles are JSON files in hwprofiles/ (documented in hwprofiles/README.md)
 * loaded by ooc_hw_load(). Overrides "KEY=V" (dotted JSON paths such as
 * "link.h2d_GBps=32", from `--hw-set`) are applied to the JSON before it is
 * converted, so an unknown key is an error naming the key. Setting
 * link.h2d_GBps (d2h_GBps) alone scales link.duplex_h2d_GBps
 * (duplex_d2h_GBps) by the same ratio, so the profile stays consistent
 * while both directions run; a duplex rate set too is kept. Every value is
 * checked (no zero or negative bandwidths, usable <= total memory, ...).
 *
 * Units inside the struct are SI base units: bytes, bytes/s, FLOP/s,
 * seconds expressed as integer nanoseconds where the simulator uses them.
 *
 * Ownership: ooc_hw_load() returns a heap profile freed by ooc_hw_free()
 * (accepts NULL); strings and arrays inside belong to it.
 */
#ifndef OOC_HW_H
#define OOC_HW_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/algo.h"
#include "base/util.h"   /* ooc_hash64 */

/* The largest profile and nesting the loader reads: a calibration table
 * of every layer of a 10^4-layer model is about 2 MiB. */
#define OOC_HW_MAX_BYTES ((size_t)16 << 20)
#define OOC_HW_MAX_DEPTH 16

/* One measured kernel: a layer signature run with one kernel algorithm.
 * Entries are unique per (sig, algo). An entry with offered 0 says the
 * machine it was measured on has no kernel of that algorithm for the
 * signature (the backend refused it): the simulator then does not offer
 * the algorithm for such layers, whatever compute.conv_algorithms says. */
typedef struct ooc_calib_entry {
  uint64_t hash;          /* FNV-1a 64 of the signature */
  const char *sig;        /* layer signature (model.h) */
  uint8_t algo;           /* ooc_algo (ir/algo.h); OOC_ALGO_DEFAULT when
                             the entry names none */
  uint8_t offered;        /* 0: the algorithm has no kernel for sig */
  /* Measured times, launches included; -1 when absent. recomp_ns absent
   * means "as the forward" (sim/cost.c uses the layer's forward time). */
  int64_t fwd_ns, bwd_ns, recomp_ns;
} ooc_calib_entry;

typedef struct ooc_hw {
  char *name;             /* profile name */
  char *path;             /* file it came from */
  char *origin;           /* that file as messages name it: a zoo
                             profile by its place in the data directory
                             ("hwprofiles/v100-pcie3.json"), a path as
                             given (ooc_hw_origin) */
  char *gpu;              /* GPU model string */
  char *source;           /* _source, flattened to one string */

  /* Device memory. */
  uint64_t mem_total;     /* bytes */
  uint64_t mem_usable;    /* bytes a framework can allocate */
  uint64_t host_mem;      /* host memory, bytes: every host buffer */
  uint64_t host_pinned_max; /* host.pinned_GiB: pinned buffers (swap and
                               copy buffers; not an offloaded layer's
                               optimizer state), 0: host_mem alone */

  /* Host and framework overhead (docs/fidelity.md), all optional, 0 when
   * absent. One host thread issues the timed instructions in index order;
   * an instruction starts no earlier than it is issued. */
  int64_t host_iter_ns;   /* per iteration, before the first issue */
  int64_t host_op_ns;     /* per COMPUTE (framework side, beyond the
                             kernel launch in launch_ns) */
  int64_t host_opt_param_ns; /* per parameter tensor in the optimizer step
                                (one per layer with parameters) */
  double host_opt_Bps;    /* host.optimizer_GBps: bytes per second the
                             CPU optimizer of an offloaded layer streams
                             (gradients in, master weights and state read
                             and written, weights out); 0: not given */
  int64_t host_opt_call_ns; /* host.optimizer_call_us: the fixed cost of
                               one CPU optimizer step (a HOST
                               instruction); 0: host_opt_param_ns */
  int64_t event_sync_ns;  /* the host waits on an event: an ALLOC that
                             needs the room a FREE on another stream
                             makes resumes this long after that FREE */

  /* Compute. Peak FLOP/s per dtype, without and with tensor cores. */
  double peak_flops[3];   /* indexed by ooc_dtype: CUDA-core rate */
  double tensor_flops[3]; /* tensor-core rate (0: none) */
  int fp32_uses_tf32;     /* FP32 conv/gemm run as TF32 on tensor cores */
  double hbm_Bps;
  double eff[OOC_CLASS_COUNT];  /* fraction of peak FLOP/s, per op class */
  double tensor_eff16[OOC_CLASS_COUNT]; /* the same for fp16 and bf16 on
                                          tensor cores, from
                                          `compute.tensor_efficiency_fp16`;
                                          equal to tensor_eff[] unless the
                                          profile says */
  double tensor_eff[OOC_CLASS_COUNT]; /* fraction of the tensor-core peak,
                                         used instead of eff[] when a conv or
                                         gemm runs on tensor cores; equal to
                                         eff[] unless the profile says */
  double mem_eff;         /* fraction of HBM bandwidth achieved */
  /* Wave quantisation of convolutions and GEMMs (sim/cost.c,
   * docs/fidelity.md): the output is cut into gemm_tile x gemm_tile tiles,
   * a weight gradient split along its reduction up to max_split_k ways, run
   * in waves over `sms` multiprocessors; a partial wave or tile idles
   * part of the GPU. sms 0 (absent): no quantisation. */
  int sms;
  int gemm_tile;          /* default 128 */
  int max_split_k;        /* weight gradients' split-K, default 32 */
  int64_t launch_ns;      /* per kernel launch overhead */
  /* Memory-bandwidth interference: a kernel of class c runs (1 + n *
   * interference[c]) times longer while n host copies are in flight (n =
   * 0, 1, 2), from `compute.copy_interference`; 0 (the default): copies do
   * not slow compute. Measured by `oocsim calibrate`. */
  double interference[OOC_CLASS_COUNT];
  /* Time of each convolution algorithm family relative to the default
   * kernel (ir/algo.h), from `compute.conv_algorithms`; 0 where the
   * profile does not offer it. algo_factor[OOC_ALGO_DEFAULT] is 1. */
  double algo_factor[OOC_ALGO_COUNT];

  /* Host link. */
  double h2d_Bps, d2h_Bps;                   /* pinned, one direction alone */
  double h2d_pageable_Bps, d2h_pageable_Bps;
  double duplex_h2d_Bps, duplex_d2h_Bps;     /* each, when both run at once */
  int64_t copy_latency_ns;                   /* fixed cost per copy */
  int64_t copy_issue_ns;  /* host time to issue a copy (optional, 0) */
  int copy_engines;                          /* 1: H2D and D2H serialise */

  /* Allocator costs. */
  int64_t malloc_ns;      /* cudaMalloc of a new segment */
  double malloc_ns_per_GiB; /* size-dependent part of cudaMalloc */
  int64_t free_ns;        /* cudaFree */
  int free_syncs;         /* cudaFree synchronises the device (optional,
                             default true) */
  uint64_t va_chunk_bytes;/* VA physical chunk size (the zoo profiles use
                            40 MiB, the schedule-window seed §4 choice) */
  uint64_t va_granularity;/* device minimum (2 MiB) */
  int64_t va_map_ns;      /* cuMemMap per chunk */
  int64_t va_access_ns;   /* cuMemSetAccess per chunk (optional, 0) */
  int64_t va_create_ns;   /* cuMemCreate per chunk (optional, 0) */
  int64_t va_unmap_ns;    /* cuMemUnmap per chunk (optional, 0) */
  int va_unmap_syncs;     /* an unmap synchronises the device first, as
                             PyTorch's expandable segments do before
                             cuMemUnmap (optional, default true) */
  int64_t va_release_ns;  /* cuMemRelease per chunk (optional, 0) */
  int64_t host_alloc_ns;  /* cudaHostAlloc per buffer */

  /* Calibrated per-layer times, sorted by (hash, sig, algo) for binary
   * search. */
  int n_calib;
  ooc_calib_entry *calib;
} ooc_hw;

/* A dotted-key override "link.h2d_GBps" = "32". */
typedef struct ooc_hw_override {
  const char *key;
  const char *value;
  const char *via;      /* where it was set, for messages: NULL is
                           "--hw-set", a plan's "scenario.hw_set" */
} ooc_hw_override;

/* What messages call hw's file: its origin, else its name, else "?". */
static inline const char *
ooc_hw_origin(const struct ooc_hw *hw)
{
  return hw->origin != NULL ? hw->origin : hw->name != NULL ? hw->name : "?";
}

/* Load a profile by path or name (searched in the data dirs, util.h). */
int ooc_hw_load(const char *name_or_path, const ooc_hw_override *ov, int n_ov,
                ooc_hw **out, ooc_err *err);
int ooc_hw_load_string(const char *json, const char *origin,
                       const ooc_hw_override *ov, int n_ov, ooc_hw **out,
                       ooc_err *err);
void ooc_hw_free(ooc_hw *hw);

/* The calibrated entry of a signature for the default kernel algorithm,
 * or NULL. O(log n). */
const ooc_calib_entry *ooc_hw_calib_find(const ooc_hw *hw, const char *sig);

/* The calibrated entry of a signature run with kernel algorithm algo, or
 * NULL. O(log n). */
const ooc_calib_entry *ooc_hw_calib_find_algo(const ooc_hw *hw,
                                              const char *sig, int algo);

/* A profile derived from another: the JSON text of `base` (a name or path,
 * found as ooc_hw_load finds it) with
 *   - each of `set` applied as --hw-set applies it (dotted keys, the same
 *     checks); a NULL value removes the key instead, which must be an
 *     optional field or object (e.g. "compute.conv_algorithms");
 *   - its top-level "_source" replaced by `source`, a JSON object text
 *     (NULL keeps base's);
 *   - its calibration table replaced by the n_entries `entries` (times in
 *     us with three decimals, so nanoseconds read back exactly), with
 *     `calib_source` as the table's "_source" (may be NULL); n_entries 0
 *     removes it, and a negative n_entries keeps base's table;
 * The result is checked by loading it (every check of a profile file) and
 * returned as heap JSON text in *json (caller frees). Key order follows
 * base, so the same inputs give the same bytes. Errors name base and the
 * key; OOC_ENOMEM. Setting link.h2d_GBps or d2h_GBps scales the
 * matching duplex rate unless that is set too, as --hw-set does. */
int ooc_hw_derive(const char *base, const ooc_hw_override *set, int n_set,
                  const char *source, const ooc_calib_entry *entries,
                  int n_entries, const char *calib_source, char **json,
                  ooc_err *err);

#endif
