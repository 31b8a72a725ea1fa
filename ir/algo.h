/* ir/algo.h — kernel algorithms a COMPUTE may name, with the workspace each
 * needs as a function of the layer's shapes.
 *
 * SuperNeurons §3.5: convolutions can run as implicit GEMM (no workspace),
 * precomputed-index GEMM, explicit GEMM (im2col), FFT, tiled FFT or
 * Winograd, fused or not (cuDNN's forward algorithm families; oneDNN has the
 * direct, GEMM and Winograd ones). They trade workspace for speed, so a
 * planner that knows how much memory is free at a step can pick the fastest
 * one that fits. Here each algorithm has:
 *   - a rule saying which layers it applies to (FFT and Winograd need
 *     stride 1 and no dilation or groups, Winograd a 3x3 kernel, ...);
 *   - a workspace size computed from the shapes (the formulas are in
 *     algo.c, each with what it counts);
 *   - a time factor relative to the default kernel, which the profile
 *     provides (`compute.conv_algorithms` in hwprofiles/README.md; absent:
 *     the algorithm is not offered on that profile) or calibration
 *     measures (sim/cost.c applies it).
 * OOC_ALGO_DEFAULT is what every layer ran before the choice existed: for
 * a convolution, explicit GEMM with one sample's im2col buffer (the op
 * table's workspace_bytes), at the roofline's time. A plan that names no
 * algorithm behaves exactly as before.
 *
 * All functions are pure and O(1); no allocation.
 */
#ifndef OOC_ALGO_H
#define OOC_ALGO_H

#include <stdint.h>
#include "ir/model.h"

typedef enum {
  OOC_ALGO_DEFAULT = 0,     /* the op's default kernel (conv: im2col GEMM) */
  OOC_ALGO_IMPLICIT_GEMM,   /* GEMM without forming the matrix: no workspace */
  OOC_ALGO_PRECOMP_GEMM,    /* implicit GEMM with precomputed indices */
  OOC_ALGO_FFT,             /* FFT of whole padded planes */
  OOC_ALGO_FFT_TILING,      /* FFT in 32 x 32 tiles */
  OOC_ALGO_WINOGRAD,        /* fused Winograd F(4x4, 3x3) */
  OOC_ALGO_WINOGRAD_NONFUSED, /* Winograd with transformed tiles in memory */
  OOC_ALGO_COUNT
} ooc_algo;

/* "default", "implicit_gemm", "precomp_gemm", "fft", "fft_tiling",
 * "winograd", "winograd_nonfused", indexed by ooc_algo. */
extern const char *const ooc_algo_names[OOC_ALGO_COUNT];
const char *ooc_algo_name(ooc_algo a);
/* The algorithm named s; OOC_OK or OOC_EINVAL. */
int ooc_algo_parse(const char *s, ooc_algo *out);

/* Whether layer `layer` of m offers a choice of algorithm at all (the
 * convolutions). */
int ooc_algo_has_choice(const ooc_model *m, int layer);

/* The workspace algorithm a needs for layer `layer` of m, for the whole
 * batch, into *bytes. Returns OOC_OK, or OOC_EINVAL when a does not apply
 * to that layer (every layer takes OOC_ALGO_DEFAULT: its op table
 * workspace_bytes). Forward and backward are sized alike: the backward
 * data and filter kernels of one family need about what the forward does. */
int ooc_algo_workspace(const ooc_model *m, int layer, ooc_algo a,
                       uint64_t *bytes);

/* The smallest workspace any algorithm applicable to the layer needs: what
 * no plan can do without (the liveness's working sets use it). */
uint64_t ooc_algo_min_workspace(const ooc_model *m, int layer);

#endif
