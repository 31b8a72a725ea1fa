/* executor/cpu.h — the cpu backend's parts (not a public header): the
 * descriptor and device side (cpu.c), the oneDNN kernels (cpu_dnnl.c),
 * the C kernels for what oneDNN lacks (cpu_kern.c) and the helpers they
 * share (cpu_util.c). cpu.c dispatches to the kernel files; they call only
 * cpu_util.c, so the files form no cycle (tests/check_layers.sh).
 *
 * Ownership: struct cpu_state is the backend's state buffer (backend.h);
 * everything it points to is created by create()/prepare() and released
 * by destroy().
 */
#ifndef OOC_EXEC_CPU_H
#define OOC_EXEC_CPU_H

#include <stdint.h>
#include <oneapi/dnnl/dnnl.h>

#include "base/error.h"
#include "executor/backend.h"

/* One oneDNN primitive with its memory objects (handles set per run). */
typedef struct cpu_prim {
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t p;
  int n;                  /* args, the scratchpad last when it has one */
  dnnl_exec_arg_t *args;
  size_t scratch;         /* scratchpad bytes */
} cpu_prim;

/* What a layer's kernels keep between runs. */
typedef struct cpu_layer {
  uint8_t built[2];       /* forward (and recompute), backward */
  uint8_t algo[2];
  cpu_prim f;             /* forward */
  cpu_prim b1, b2;        /* backward: data (or the only one), weights */
  void *stats;            /* batch/layer norm mean and variance */
  void *pws;              /* pooling or LRN forward workspace */
  size_t stats_bytes, pws_bytes;
} cpu_layer;

typedef struct cpu_state {
  const ooc_model *m;
  const ooc_program *p;
  int threads;
  double link_Bpns;       /* pacing, bytes per ns (0: none) */
  uint64_t seed;
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  cpu_layer *lay;         /* per layer */
  void *scratch;          /* scratchpads that do not fit a workspace */
  size_t scratch_bytes;
  void *tmp;              /* gradients to add, computed here first */
  size_t tmp_bytes;
  void **hv;              /* data handles of a many-input add or concat */
  size_t hv_bytes;
  uint64_t layer_side;    /* stats and pooling workspaces */
  double loss;
  int n_unpinned;
  char pin_why[96];
} cpu_state;

/* cpu_dnnl.c */
int cpu_dnnl_prepare(cpu_state *st, const ooc_kernel *k, ooc_err *err);
int cpu_dnnl_run(cpu_state *st, const ooc_kernel *k, void *const *ptr,
                 ooc_err *err);
/* Whether oneDNN runs layer l's op (else cpu_kern.c does). */
int cpu_dnnl_has(const ooc_layer *l);
void cpu_prim_free(cpu_prim *pr);

/* cpu_kern.c */
int cpu_kern_prepare(cpu_state *st, const ooc_kernel *k, ooc_err *err);
int cpu_kern_run(cpu_state *st, const ooc_kernel *k, void *const *ptr,
                 int iteration, ooc_err *err);

/* cpu_util.c */
/* Grow a side buffer (64-byte aligned, contents not kept). */
int cpu_grow(void **buf, size_t *have, size_t want, ooc_err *err);
/* dst = src (acc 0) or dst += src (acc 1), n floats. */
void cpu_put(float *dst, const float *src, uint64_t n, int acc);
/* Bytes of layer l's output for the batch (the storage's out_bytes). */
uint64_t cpu_out_bytes(const ooc_model *m, int l);

#endif
