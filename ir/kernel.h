/* ir/kernel.h — what the kernel of each COMPUTE reads and writes, in terms
 * of the program's tensors, and the check that the instruction lists them.
 *
 * The semantics (ir/semantics.h) vouch only for the tensors an instruction
 * lists; a COMPUTE whose kernel touches a tensor it does not list would
 * read data no rule kept valid. The executor resolves every kernel through
 * ooc_kernels_build() before it runs a program, and the plan-file path of
 * the simulator (analysis/scenario.c, ooc_scenario_run_program) calls
 * ooc_kernels_check() on the same program, so that a hand-edited plan that
 * the executor would refuse is refused by 'oocsim simulate' too, with the
 * same message. An instruction lists as written only what its kernel
 * writes: the semantics ask no valid data of a written tensor, so a read
 * listed as a write would excuse a missing swap-in or recompute.
 *
 * Ownership: ooc_kernels owns its arrays (ooc_kernels_free); the kernels
 * borrow nothing from the model or the program.
 */
#ifndef OOC_KERNEL_H
#define OOC_KERNEL_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/program.h"

/* One COMPUTE, resolved from the model's op table and the program's tensor
 * table, and checked against the instruction's args. Tensor fields are
 * program tensor ids, -1 when absent (an executor backend finds tensor t's
 * device pointer at ptr[t] in its compute()). */
typedef struct ooc_kernel {
  int32_t instr;
  int32_t layer;        /* -1 for an UPDATE without a layer */
  uint8_t phase;        /* OOC_PH_FWD, _BWD, _RECOMP, _UPDATE */
  uint8_t algo;         /* ir/algo.h */
  uint8_t skip;         /* nothing to compute: an alias (flatten,
                           reshape), or a backward with no gradient to
                           produce (has_bwd 0) */
  uint8_t inplace;      /* the output shares its first input's storage
                           (in-place relu, act, dropout): backward turns
                           the gradient in place */
  int n_in;
  const int32_t *in;    /* per input: its storage act (the input tensor
                           for layer 0) */
  const int32_t *din;   /* per input: its gradient, -1 when none or not
                           computed (the layer's grad_in is 0) */
  const uint8_t *din_acc; /* per input: 1 add into din, 0 overwrite */
  int32_t out;          /* the output's storage act */
  uint64_t saved_off;   /* this layer's saved state inside out: after the
                           storage layer's output and the saved state of
                           the layers before it sharing the storage */
  int32_t dout;         /* gradient of the output */
  uint8_t dout_fresh;   /* dout holds no data yet (nothing downstream
                           wrote it): the loss seeds it, others read 0 */
  int32_t param;        /* the layer's parameters: weights, then their
                           gradients at param_bytes, optimizer state
                           after (-1 none) */
  int32_t dparam;       /* where the weight gradients go: param itself
                           at dparam_off = param_bytes, or the layer's
                           OOC_T_WGRAD tensor at 0 when its optimizer runs
                           on the host (docs/offload.md); -1 none */
  uint64_t dparam_off;
  uint8_t dparam_acc;   /* the weight gradients are added to (a tensor
                           written earlier in this iteration) */
  int32_t tied;         /* a tied linear: the embedding whose table it
                           uses as weights (its param tensor), -1 */
  int32_t tied_dparam;  /* the table's gradient: as dparam */
  uint64_t tied_dparam_off;
  uint8_t tied_acc;     /* the table's gradient is added to */
  int32_t ws;           /* the program's workspace tensor for this
                           kernel, -1 none */
  uint64_t ws_bytes;
  int n_params;         /* UPDATE: every parameter tensor */
  const int32_t *params;
} ooc_kernel;

typedef struct ooc_kernels {
  int32_t n;
  ooc_kernel *k;        /* one per COMPUTE, in index order */
  int32_t *of_instr;    /* instruction -> index in k, -1 */
  int32_t *ints;        /* backing store of the per-kernel arrays */
  uint8_t *flags;
} ooc_kernels;

/* Resolve every COMPUTE of p. OOC_EINVAL when the tensor table does not
 * follow plan/'s layout, or an instruction does not list a tensor its
 * kernel reads or writes or lists as written one it does not write (the
 * message names both), or the order breaks the dataflow: an input read
 * as another layer left it, a gradient read before a consumer added to
 * it, an update before a backward writing its weight gradients;
 * OOC_ENOMEM. */
int ooc_kernels_build(ooc_kernels *ks, const ooc_model *m,
                      const ooc_program *p, ooc_err *err);
void ooc_kernels_free(ooc_kernels *ks);

/* The same check as ooc_kernels_build without keeping the result. */
int ooc_kernels_check(const ooc_model *m, const ooc_program *p,
                      ooc_err *err);

/* OOC_EINVAL with the message every refusal of a COMPUTE starts with,
 * "instruction I (COMPUTE PHASE, layer L 'NAME'): ", then fmt: the
 * kernel checks here and the plan-file checks (plan/plan.c) share it. */
int ooc_kernel_err(ooc_err *err, const ooc_model *m, int32_t instr, int phase,
                   int32_t layer, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
