/* executor/cuda.c — the cuda backend: one GPU, the CUDA runtime's streams,
 * the driver's virtual memory, cuDNN's legacy API and cuBLAS
 * (docs/executor.md, "The cuda backend").
 *
 * One idea: the same contract as the cpu backend (backend.h), with every
 * call synchronous: a kernel or copy is issued on the CUDA stream of its
 * program stream, which is then synchronised, so the core's completion
 * flags and timestamps are true (a launch latency per instruction is the
 * price). The allocator policy's actions are the CUDA driver's own:
 * cudaMalloc / cudaFree for a segment; cuMemAddressReserve / Free for a
 * virtual range; cuMemCreate / cuMemRelease for a chunk, cuMemMap +
 * cuMemSetAccess / cuMemUnmap to map it into its range (driver entry points
 * come from cudaGetDriverEntryPointByVersion, so nothing links libcuda).
 * The runtime, cuDNN and cuBLAS are loaded when the backend is first
 * probed (executor/cuda_api.h), so that no other command pays for them.
 * Pinned host buffers are cudaHostAlloc (pageable malloc when refused).
 *
 * Kernels, for what cuDNN's legacy API and cuBLAS cover (everything else is
 * refused by prepare() with the op's name; it needs kernels of our own):
 *   conv2d, conv3d: cudnnConvolutionForward / BackwardData /
 *     BackwardFilter / BackwardBias (groups, stride, dilation); deconv2d as
 *     a convolution's BackwardData forward, Forward and BackwardFilter
 *     backward. Kernel algorithms map one to one (default: GEMM forward,
 *     implicit GEMM for conv3d, and the deterministic ALGO_1 backward;
 *     implicit_gemm, precomp_gemm, fft, fft_tiling, winograd,
 *     winograd_nonfused to cuDNN's own; for the
 *     filter gradient, winograd to WINOGRAD_NONFUSED, the only one);
 *     cuDNN's refusal of one for a layer is reported by name;
 *   batchnorm: cudnnBatchNormalizationForwardTraining / Backward, spatial
 *     (per channel), saved mean and inverse variance outside the arena;
 *   relu, act sigmoid and tanh: cudnnActivation (their backward reads the
 *     output; elu, silu and the others need an input the cuDNN call also
 *     wants the output of, and are refused);
 *   maxpool, avgpool (floor mode), globalpool: cudnnPooling;
 *   lrn: cudnnLRNCrossChannel;
 *   linear, matmul: cuBLAS SGEMM (strided batched for matmul), the bias by
 *     cudnnAddTensor and its gradient by SGEMV with a vector of ones;
 *   add, concat: cudnnAddTensor over (strided) views, so gradients are
 *     added with beta = 1;
 *   softmax_ce: cudnnSoftmaxForward (probabilities kept with the output,
 *     log-probabilities in a side buffer); the loss is a dot product with
 *     a side buffer of -onehot / rows built at prepare, and so is the
 *     gradient's (p - onehot) / rows (two cudnnAddTensor);
 *   update: SGD and SGD with momentum with cuBLAS SSCAL / SAXPY (Adam is
 *     refused).
 * Not run (refused): upsample, gelu, act elu/silu/leaky_relu/hardswish,
 * dropout, embedding, attention, layernorm, Adam; ceil-mode pooling whose
 * output cuDNN's floor rule does not give. cuBLAS runs in pedantic math
 * and cuDNN convolutions in FMA math (no TF32), so that results are
 * deterministic and close to the cpu backend's.
 *
 * Max pooling runs in cuDNN's deterministic mode: its default backward
 * adds overlapping windows' gradients with atomics, so a 3x3 stride-2
 * pooling (ResNet's) gave other weights on every run.
 *
 * Status: built against CUDA 13 and cuDNN 9; run on an NVIDIA H200 (driver
 * 580.159.04, cuDNN 9.19.0, 2026-11-26): tests/check_executor_cuda passes
 * there and exits 77 where no GPU is (docs/validation.md).
 *
 * Cost: per instruction one synchronisation; per driver action one driver
 * call (a map adds cuMemSetAccess; an unmap first synchronises the device,
 * allocator.va_unmap_syncs).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cublas_v2.h>

#include "base/util.h"
#include "executor/cuda_api.h"
#include "ir/algo.h"
#include "executor/backend.h"

#define LR_SGD 0.01f
#define MOMENTUM 0.9f
#define EPS 1e-5
#define LRN_ALPHA 1e-4
#define LRN_BETA 0.75
#define LRN_K 1.0

typedef CUresult (*fn_create)(CUmemGenericAllocationHandle *, size_t,
                              const CUmemAllocationProp *,
                              unsigned long long);
typedef CUresult (*fn_release)(CUmemGenericAllocationHandle);
typedef CUresult (*fn_map)(CUdeviceptr, size_t, size_t,
                           CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*fn_unmap)(CUdeviceptr, size_t);
typedef CUresult (*fn_access)(CUdeviceptr, size_t, const CUmemAccessDesc *,
                              size_t);
typedef CUresult (*fn_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
                               unsigned long long);
typedef CUresult (*fn_vfree)(CUdeviceptr, size_t);

typedef struct cu_layer {
  uint8_t built[2], algo[2];
  cudnnTensorDescriptor_t x, y, b;   /* input, output, bias / bn params */
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnActivationDescriptor_t act;
  cudnnPoolingDescriptor_t pool;
  cudnnLRNDescriptor_t lrn;
  /* Per direction (forward, backward): the algorithms of the calls it
   * makes and their workspace. */
  cudnnConvolutionFwdAlgo_t fa[2];
  cudnnConvolutionBwdDataAlgo_t da[2];
  cudnnConvolutionBwdFilterAlgo_t fla[2];
  size_t need[2];
  float *stats;                      /* bn: saved mean, inverse variance */
  float *onehot;                     /* softmax_ce: -onehot / rows */
  float *logp;                       /* softmax_ce: log-probabilities */
} cu_layer;

typedef struct cu_state {
  const ooc_model *m;
  const ooc_program *p;
  int dev;
  int threads;          /* OpenMP threads of the host stream's steps */
  cudaStream_t st[OOC_NSTREAMS];
  cudnnHandle_t dnn;
  cublasHandle_t blas;
  fn_create mem_create;
  fn_release mem_release;
  fn_map mem_map;
  fn_unmap mem_unmap;
  fn_access mem_access;
  fn_reserve va_reserve;
  fn_vfree va_free;
  size_t granularity;
  cu_layer *lay;
  void *ws;                          /* workspaces that do not fit */
  size_t ws_bytes;
  void *tmp;                         /* discarded gradients */
  size_t tmp_bytes;
  float *ones;                       /* bias gradients */
  size_t ones_n;
  uint64_t side;                     /* per-layer side buffers */
  uint64_t seed;
  double loss;
  int n_unpinned;
  char name[96];
} cu_state;

/* --- errors --------------------------------------------------------------- */

static int
cuda_fail(cudaError_t e, const char *what, ooc_err *err)
{
  return ooc_err_set(err, e == cudaErrorMemoryAllocation ? OOC_ENOMEM
                                                         : OOC_EINVAL,
                     "cuda: %s: %s", what, cudaGetErrorString(e));
}

static int
dnn_fail(const cu_state *s, const ooc_kernel *k, cudnnStatus_t e,
         const char *what, ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];

  return ooc_err_set(err, OOC_EINVAL, "cuda: layer %d '%s' (%s %s%s%s%s): "
                     "cuDNN %s: %s", k->layer, l->name ? l->name : "?",
                     ooc_op_name(l->op), ooc_phase_name((ooc_phase)k->phase),
                     k->algo ? ", kernel algorithm '" : "",
                     k->algo ? ooc_algo_name((ooc_algo)k->algo) : "",
                     k->algo ? "'" : "", what, cudnnGetErrorString(e));
}

#define CU(call, what)                                                       \
  do {                                                                       \
    cudaError_t e_ = (call);                                                 \
    if (e_ != cudaSuccess)                                                   \
      return cuda_fail(e_, (what), err);                                     \
  } while (0)
#define DNN(call, what)                                                      \
  do {                                                                       \
    cudnnStatus_t e_ = (call);                                               \
    if (e_ != CUDNN_STATUS_SUCCESS)                                          \
      return dnn_fail(s, k, e_, (what), err);                                \
  } while (0)
#define BLAS(call, what)                                                     \
  do {                                                                       \
    cublasStatus_t e_ = (call);                                              \
    if (e_ != CUBLAS_STATUS_SUCCESS)                                         \
      return ooc_err_set(err, OOC_EINVAL, "cuda: layer %d: cuBLAS %s "       \
                         "failed (status %d)", k->layer, (what), (int)e_);   \
  } while (0)
#define DRV(call, what)                                                      \
  do {                                                                       \
    CUresult e_ = (call);                                                    \
    if (e_ != CUDA_SUCCESS)                                                  \
      return ooc_err_set(err, e_ == CUDA_ERROR_OUT_OF_MEMORY ? OOC_ENOMEM    \
                                                             : OOC_EINVAL,   \
                         "cuda: %s for %s id %d (%llu bytes) failed "        \
                         "(CUresult %d)", (what),                            \
                         ooc_drv_kind_name((ooc_drv_kind)a->kind), a->id,    \
                         (unsigned long long)a->bytes, (int)e_);             \
  } while (0)

/* --- device --------------------------------------------------------------- */

static int
cu_probe(ooc_err *err)
{
  int n = 0, rc;
  cudaError_t e;

  if ((rc = ooc_cuda_api_load(err)) != OOC_OK)
    return rc;
  e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    return ooc_err_set(err, OOC_EUNSUP, "cuda: no CUDA device "
                       "(cudaGetDeviceCount: %s)",
                       e != cudaSuccess ? cudaGetErrorString(e)
                                        : "no device");
  return OOC_OK;
}

static void
layer_free(cu_layer *L)
{
  if (L->x) cudnnDestroyTensorDescriptor(L->x);
  if (L->y) cudnnDestroyTensorDescriptor(L->y);
  if (L->b) cudnnDestroyTensorDescriptor(L->b);
  if (L->w) cudnnDestroyFilterDescriptor(L->w);
  if (L->conv) cudnnDestroyConvolutionDescriptor(L->conv);
  if (L->act) cudnnDestroyActivationDescriptor(L->act);
  if (L->pool) cudnnDestroyPoolingDescriptor(L->pool);
  if (L->lrn) cudnnDestroyLRNDescriptor(L->lrn);
  cudaFree(L->stats);
  cudaFree(L->onehot);
  cudaFree(L->logp);
}

static void
cu_destroy(void *state)
{
  cu_state *s = state;
  int l, k;

  if (s->lay != NULL)
    for (l = 0; l < s->m->n_layers; l++)
      layer_free(&s->lay[l]);
  free(s->lay);
  cudaFree(s->ws);
  cudaFree(s->tmp);
  cudaFree(s->ones);
  if (s->blas)
    cublasDestroy(s->blas);
  if (s->dnn)
    cudnnDestroy(s->dnn);
  for (k = 0; k < OOC_NSTREAMS; k++)
    if (s->st[k])
      cudaStreamDestroy(s->st[k]);
}

static int
entry(const char *sym, void **fn, ooc_err *err)
{
  enum cudaDriverEntryPointQueryResult q;
  cudaError_t e = cudaGetDriverEntryPointByVersion(sym, fn, 12000,
                                                   cudaEnableDefault, &q);

  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || *fn == NULL)
    return ooc_err_set(err, OOC_EUNSUP, "cuda: the driver has no %s", sym);
  return OOC_OK;
}

static int
cu_create(void *state, const ooc_exec_env *env, ooc_err *err)
{
  cu_state *s = state;
  struct cudaDeviceProp prop;
  CUmemAllocationProp ap;
  size_t g = 0;
  int k, rc;
  typedef CUresult (*fn_gran)(size_t *, const CUmemAllocationProp *,
                              CUmemAllocationGranularity_flags);
  fn_gran gran;

  if ((rc = ooc_cuda_api_load(err)) != OOC_OK)   /* probe loaded it */
    return rc;
  if (env->link_GBps > 0)
    return ooc_err_set(err, OOC_EINVAL, "cuda: copy pacing is a "
                       "cpu-backend option (copies run at the link's "
                       "speed)");
  s->threads = env->threads > 0 ? env->threads : 1;
  s->m = env->model;
  s->p = env->program;
  s->seed = env->seed;
  s->dev = 0;
  CU(cudaSetDevice(s->dev), "cudaSetDevice");
  CU(cudaGetDeviceProperties(&prop, s->dev), "cudaGetDeviceProperties");
  snprintf(s->name, sizeof s->name, "%.95s", prop.name);
  if ((s->lay = calloc((size_t)s->m->n_layers, sizeof *s->lay)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "cuda: out of memory");
  for (k = 0; k < OOC_NSTREAMS; k++)
    if (cudaStreamCreateWithFlags(&s->st[k], cudaStreamNonBlocking)
        != cudaSuccess) {
      cu_destroy(s);
      return ooc_err_set(err, OOC_EUNSUP, "cuda: cannot create streams");
    }
  if (cudnnCreate(&s->dnn) != CUDNN_STATUS_SUCCESS ||
      cudnnSetStream(s->dnn, s->st[OOC_STREAM_COMPUTE])
          != CUDNN_STATUS_SUCCESS ||
      cublasCreate(&s->blas) != CUBLAS_STATUS_SUCCESS ||
      cublasSetStream(s->blas, s->st[OOC_STREAM_COMPUTE])
          != CUBLAS_STATUS_SUCCESS ||
      cublasSetMathMode(s->blas, CUBLAS_PEDANTIC_MATH)
          != CUBLAS_STATUS_SUCCESS) {
    cu_destroy(s);
    return ooc_err_set(err, OOC_EUNSUP, "cuda: cannot open cuDNN and "
                       "cuBLAS");
  }
  if ((rc = entry("cuMemCreate", (void **)&s->mem_create, err)) ||
      (rc = entry("cuMemRelease", (void **)&s->mem_release, err)) ||
      (rc = entry("cuMemMap", (void **)&s->mem_map, err)) ||
      (rc = entry("cuMemUnmap", (void **)&s->mem_unmap, err)) ||
      (rc = entry("cuMemSetAccess", (void **)&s->mem_access, err)) ||
      (rc = entry("cuMemAddressReserve", (void **)&s->va_reserve, err)) ||
      (rc = entry("cuMemAddressFree", (void **)&s->va_free, err)) ||
      (rc = entry("cuMemGetAllocationGranularity", (void **)&gran, err))) {
    cu_destroy(s);
    return rc;
  }
  memset(&ap, 0, sizeof ap);
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.location.id = s->dev;
  if (gran(&g, &ap, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
    g = 2u << 20;
  s->granularity = g;
  return OOC_OK;
}

static int
cu_thread_start(void *state, int stream, ooc_err *err)
{
  cu_state *s = state;

  CU(cudaSetDevice(s->dev), "cudaSetDevice");
  /* The host stream's optimizer steps (docs/offload.md) on --threads
   * cores (default 1), not OpenMP's default of every core: on an H100's
   * 16-core host a 16-thread team's spinning workers delayed the other
   * stream threads' launches, and ResNet-50's zero-offload plan measured
   * 0.761 s per iteration against 0.643 s on one thread (2026-11-27).
   * calibrate measures the step on the same threads. */
#ifdef _OPENMP
  if (stream == OOC_STREAM_HOST)
    omp_set_num_threads(s->threads);
#endif
  return OOC_OK;
}

static int
cu_mem(void *state, const ooc_drv_action *a, ooc_exec_region *r,
       const ooc_exec_region *range, ooc_err *err)
{
  cu_state *s = state;
  CUdeviceptr at;

  switch (a->kind) {
  case OOC_DRV_SEG_MALLOC:
    CU(cudaMalloc(&r->base, a->bytes ? a->bytes : 1), "cudaMalloc");
    return OOC_OK;
  case OOC_DRV_SEG_FREE:
    CU(cudaFree(r->base), "cudaFree");
    r->base = NULL;
    return OOC_OK;
  case OOC_DRV_VA_RESERVE:
    if (a->bytes % s->granularity != 0)
      return ooc_err_set(err, OOC_EINVAL, "cuda: virtual range of %llu "
                         "bytes is not a multiple of the device's %zu-byte "
                         "granularity", (unsigned long long)a->bytes,
                         s->granularity);
    DRV(s->va_reserve(&at, a->bytes, 0, 0, 0), "cuMemAddressReserve");
    r->base = (void *)(uintptr_t)at;
    return OOC_OK;
  case OOC_DRV_VA_FREE:
    DRV(s->va_free((CUdeviceptr)(uintptr_t)r->base, a->bytes),
        "cuMemAddressFree");
    r->base = NULL;
    return OOC_OK;
  case OOC_DRV_CHUNK_CREATE: {
    CUmemAllocationProp ap;
    CUmemGenericAllocationHandle h;
    if (a->bytes % s->granularity != 0)
      return ooc_err_set(err, OOC_EINVAL, "cuda: chunk of %llu bytes is "
                         "not a multiple of the device's %zu-byte "
                         "granularity", (unsigned long long)a->bytes,
                         s->granularity);
    memset(&ap, 0, sizeof ap);
    ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.location.id = s->dev;
    DRV(s->mem_create(&h, a->bytes, &ap, 0), "cuMemCreate");
    r->handle = (uint64_t)h;
    return OOC_OK;
  }
  case OOC_DRV_CHUNK_RELEASE:
    DRV(s->mem_release((CUmemGenericAllocationHandle)r->handle),
        "cuMemRelease");
    return OOC_OK;
  case OOC_DRV_CHUNK_MAP: {
    CUmemAccessDesc ad;
    at = (CUdeviceptr)(uintptr_t)range->base + (a->addr - range->addr);
    DRV(s->mem_map(at, r->bytes, 0, (CUmemGenericAllocationHandle)r->handle,
                   0), "cuMemMap");
    memset(&ad, 0, sizeof ad);
    ad.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ad.location.id = s->dev;
    ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    DRV(s->mem_access(at, r->bytes, &ad, 1), "cuMemSetAccess");
    return OOC_OK;
  }
  case OOC_DRV_CHUNK_UNMAP:
    /* As PyTorch's expandable segments do before unmapping, and as the
     * simulator models it (allocator.va_unmap_syncs): the memory is free
     * only once the work that used it has finished. */
    CU(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    at = (CUdeviceptr)(uintptr_t)range->base + (a->addr - range->addr);
    DRV(s->mem_unmap(at, r->bytes), "cuMemUnmap");
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "cuda: unknown driver action %d",
                       a->kind);
  }
}

static int
cu_host_alloc(void *state, uint64_t bytes, void **p, int *pinned,
              ooc_err *err)
{
  cu_state *s = state;
  size_t n = bytes ? (size_t)bytes : 1;

  if (cudaHostAlloc(p, n, cudaHostAllocDefault) == cudaSuccess) {
    *pinned = 1;
    return OOC_OK;
  }
  *pinned = 0;
  s->n_unpinned++;
  if ((*p = malloc(n)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "cuda: cannot allocate a %llu-byte "
                       "host buffer", (unsigned long long)bytes);
  return OOC_OK;
}

static void
cu_host_free(void *state, void *p, uint64_t bytes, int pinned)
{
  if (pinned)
    cudaFreeHost(p);
  else
    free(p);
}

static int
cu_upload(void *state, void *dev, const void *host, uint64_t bytes,
          ooc_err *err)
{
  if (bytes > 0)
    CU(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "upload");
  return OOC_OK;
}

static int
cu_download(void *state, void *host, const void *dev, uint64_t bytes,
            ooc_err *err)
{
  if (bytes > 0)
    CU(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost), "download");
  return OOC_OK;
}

static int
cu_copy(void *state, int stream, void *dst, const void *src, uint64_t bytes,
        ooc_err *err)
{
  cu_state *s = state;

  if (bytes == 0)
    return OOC_OK;
  CU(cudaMemcpyAsync(dst, src, bytes,
                     stream == OOC_STREAM_H2D ? cudaMemcpyHostToDevice
                                              : cudaMemcpyDeviceToHost,
                     s->st[stream]), "cudaMemcpyAsync");
  CU(cudaStreamSynchronize(s->st[stream]), "cudaStreamSynchronize");
  return OOC_OK;
}

static int
cu_sync(void *state, ooc_err *err)
{
  CU(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return OOC_OK;
}

static int
grow(void **buf, size_t *have, size_t want, ooc_err *err)
{
  if (want <= *have)
    return OOC_OK;
  cudaFree(*buf);
  *buf = NULL;
  *have = 0;
  CU(cudaMalloc(buf, want), "cudaMalloc (side buffer)");
  *have = want;
  return OOC_OK;
}

/* --- descriptors ---------------------------------------------------------- */

/* A packed fp32 tensor of dims d[0..n) (at least 4: padded with 1s). */
static cudnnStatus_t
tdesc(cudnnTensorDescriptor_t *t, int n, const int64_t *d)
{
  int dims[8], str[8], i, nd = n < 4 ? 4 : n;
  cudnnStatus_t e;

  if (*t == NULL && (e = cudnnCreateTensorDescriptor(t)) !=
                        CUDNN_STATUS_SUCCESS)
    return e;
  for (i = 0; i < nd; i++)
    dims[i] = i < n ? (int)d[i] : 1;
  str[nd - 1] = 1;
  for (i = nd - 2; i >= 0; i--)
    str[i] = str[i + 1] * dims[i + 1];
  return cudnnSetTensorNdDescriptor(*t, CUDNN_DATA_FLOAT, nd, dims, str);
}

/* A [rows, cols, 1, 1] view whose rows are `pitch` floats apart. */
static cudnnStatus_t
tdesc_rows(cudnnTensorDescriptor_t t, int64_t rows, int64_t cols,
           int64_t pitch)
{
  int dims[4] = { (int)rows, (int)cols, 1, 1 };
  int str[4] = { (int)pitch, 1, 1, 1 };

  return cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, dims, str);
}

static int
dims_of(const ooc_model *m, int l, int64_t *d)
{
  const ooc_shape *sh = &m->layers[l].out;
  int i;

  d[0] = m->batch;
  for (i = 0; i < sh->ndim; i++)
    d[i + 1] = sh->d[i];
  return sh->ndim + 1;
}

static int
in_layer(const cu_state *s, const ooc_kernel *k, int j)
{
  return ooc_layer_input(s->m, &s->m->layers[k->layer], j);
}

static uint64_t
elems_of(const cu_state *s, int l)
{
  return (uint64_t)ooc_shape_elems(&s->m->layers[l].out) *
         (uint64_t)s->m->batch;
}

static const float one = 1.0f, zero = 0.0f;

static const float *
beta_of(int acc)
{
  return acc ? &one : &zero;
}

/* --- convolutions --------------------------------------------------------- */

static void
conv_algos(const ooc_kernel *k, int nd, cudnnConvolutionFwdAlgo_t *fa,
           cudnnConvolutionBwdDataAlgo_t *da,
           cudnnConvolutionBwdFilterAlgo_t *fla)
{
  switch (k->algo) {
  case OOC_ALGO_DEFAULT:
    /* cuDNN 9 has no explicit-GEMM kernel for 3-D convolutions (seen on
     * an H200, cuDNN 9.19: NOT_SUPPORTED); implicit GEMM is its default
     * there, and needs no workspace. */
    *fa = nd > 4 ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM
                 : CUDNN_CONVOLUTION_FWD_ALGO_GEMM;
    break;
  case OOC_ALGO_IMPLICIT_GEMM:
    *fa = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    break;
  case OOC_ALGO_PRECOMP_GEMM:
    *fa = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    break;
  case OOC_ALGO_FFT:
    *fa = CUDNN_CONVOLUTION_FWD_ALGO_FFT;
    break;
  case OOC_ALGO_FFT_TILING:
    *fa = CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING;
    break;
  case OOC_ALGO_WINOGRAD:
    *fa = CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD;
    break;
  default:
    *fa = CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
    break;
  }
  switch (k->algo) {
  case OOC_ALGO_FFT:
    *da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT;
    *fla = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT;
    break;
  case OOC_ALGO_FFT_TILING:
    *da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING;
    *fla = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING;
    break;
  case OOC_ALGO_WINOGRAD:
    *da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD;
    *fla = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
    break;
  case OOC_ALGO_WINOGRAD_NONFUSED:
    *da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
    *fla = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
    break;
  default:
    *da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    *fla = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
    break;
  }
}

/* Descriptors of a convolution-like layer. For deconv2d the cuDNN
 * convolution runs from the deconvolution's output (x) to its input (y). */
static int
conv_build(cu_state *s, const ooc_kernel *k, cu_layer *L, ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];
  int deconv = l->op == OOC_OPK_DECONV2D, nd, nsp, i, b;
  int64_t din[6], dout[6], bias[6] = { 1 };
  int pad[3], str[3], dil[3], fd[6], G = l->a.groups > 1 ? l->a.groups : 1;
  size_t need = 0, n;

  nd = dims_of(s->m, in_layer(s, k, 0), din);
  dims_of(s->m, k->layer, dout);
  nsp = nd - 2;
  DNN(tdesc(&L->x, nd, deconv ? dout : din), "tensor");
  DNN(tdesc(&L->y, nd, deconv ? din : dout), "tensor");
  bias[1] = dout[1];
  for (i = 2; i < nd; i++)
    bias[i] = 1;
  DNN(tdesc(&L->b, nd, bias), "tensor");
  fd[0] = (int)(deconv ? din[1] : dout[1]);
  fd[1] = (int)((deconv ? dout[1] : din[1]) / G);
  for (i = 0; i < nsp; i++) {
    fd[i + 2] = l->a.kernel[i];
    pad[i] = l->a.pad[i];
    str[i] = l->a.stride[i];
    dil[i] = l->a.dilation[i];
  }
  if (L->w == NULL)
    DNN(cudnnCreateFilterDescriptor(&L->w), "filter");
  DNN(cudnnSetFilterNdDescriptor(L->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                 nd, fd), "filter");
  if (L->conv == NULL)
    DNN(cudnnCreateConvolutionDescriptor(&L->conv), "convolution");
  DNN(cudnnSetConvolutionNdDescriptor(L->conv, nsp, pad, str, dil,
                                      CUDNN_CROSS_CORRELATION,
                                      CUDNN_DATA_FLOAT), "convolution");
  DNN(cudnnSetConvolutionGroupCount(L->conv, G), "groups");
  DNN(cudnnSetConvolutionMathType(L->conv, CUDNN_FMA_MATH), "math type");
  b = k->phase == OOC_PH_BWD;
  conv_algos(k, nd, &L->fa[b], &L->da[b], &L->fla[b]);
  /* Workspaces of the calls this direction makes (a backward without an
   * input gradient makes no data call). */
  if (!b) {
    if (deconv)
      DNN(cudnnGetConvolutionBackwardDataWorkspaceSize(s->dnn, L->w, L->y,
            L->conv, L->x, L->da[b], &n), "backward data workspace");
    else
      DNN(cudnnGetConvolutionForwardWorkspaceSize(s->dnn, L->x, L->w,
            L->conv, L->y, L->fa[b], &n), "forward workspace");
    need = n;
  } else {
    if (k->din[0] >= 0 && deconv)
      DNN(cudnnGetConvolutionForwardWorkspaceSize(s->dnn, L->x, L->w,
            L->conv, L->y, L->fa[b], &n), "forward workspace");
    else if (k->din[0] >= 0)
      DNN(cudnnGetConvolutionBackwardDataWorkspaceSize(s->dnn, L->w, L->y,
            L->conv, L->x, L->da[b], &n), "backward data workspace");
    else
      n = 0;
    need = n;
    DNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(s->dnn, L->x, L->y,
          L->conv, L->w, L->fla[b], &n), "backward filter workspace");
    need = n > need ? n : need;
  }
  L->need[b] = need;
  if (k->ws < 0 || need > k->ws_bytes)
    return grow(&s->ws, &s->ws_bytes, need, err);
  return OOC_OK;
}

/* The workspace of k's cuDNN calls: the program's workspace tensor when it
 * is large enough, else the side one (sized by conv_build). */
static void *
ws_of(const cu_state *s, const ooc_kernel *k, const cu_layer *L,
      void *const *ptr, size_t *bytes)
{
  if (k->ws >= 0 && L->need[k->phase == OOC_PH_BWD] <= k->ws_bytes) {
    *bytes = k->ws_bytes;
    return ptr[k->ws];
  }
  *bytes = s->ws_bytes;
  return s->ws;
}

static int
conv_run(cu_state *s, const ooc_kernel *k, cu_layer *L,
         void *const *ptr, ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];
  int deconv = l->op == OOC_OPK_DECONV2D;
  char *w = ptr[k->param];
  uint64_t wb = l->param_bytes - (l->a.bias ? (uint64_t)l->a.out * 4 : 0);
  size_t wsb;
  void *ws = ws_of(s, k, L, ptr, &wsb);
  int b = k->phase == OOC_PH_BWD;

  if (k->phase != OOC_PH_BWD) {
    if (deconv)
      DNN(cudnnConvolutionBackwardData(s->dnn, &one, L->w, w, L->y,
            ptr[k->in[0]], L->conv, L->da[b], ws, wsb, &zero, L->x,
            ptr[k->out]), "deconvolution");
    else
      DNN(cudnnConvolutionForward(s->dnn, &one, L->x, ptr[k->in[0]], L->w,
            w, L->conv, L->fa[b], ws, wsb, &zero, L->y, ptr[k->out]),
          "convolution");
    if (l->a.bias)
      DNN(cudnnAddTensor(s->dnn, &one, L->b, w + wb, &one,
                         deconv ? L->x : L->y, ptr[k->out]), "bias");
    return OOC_OK;
  }
  {
    char *dw = (char *)ptr[k->dparam] + k->dparam_off;
    if (k->din[0] >= 0) {
      if (deconv)
        DNN(cudnnConvolutionForward(s->dnn, &one, L->x, ptr[k->dout], L->w,
              w, L->conv, L->fa[b], ws, wsb, beta_of(k->din_acc[0]), L->y,
              ptr[k->din[0]]), "deconvolution backward data");
      else
        DNN(cudnnConvolutionBackwardData(s->dnn, &one, L->w, w, L->y,
              ptr[k->dout], L->conv, L->da[b], ws, wsb,
              beta_of(k->din_acc[0]), L->x, ptr[k->din[0]]),
            "backward data");
    }
    if (deconv)
      DNN(cudnnConvolutionBackwardFilter(s->dnn, &one, L->x, ptr[k->dout],
            L->y, ptr[k->in[0]], L->conv, L->fla[b], ws, wsb,
            beta_of(k->dparam_acc), L->w, dw), "backward filter");
    else
      DNN(cudnnConvolutionBackwardFilter(s->dnn, &one, L->x, ptr[k->in[0]],
            L->y, ptr[k->dout], L->conv, L->fla[b], ws, wsb,
            beta_of(k->dparam_acc), L->w, dw), "backward filter");
    if (l->a.bias)
      DNN(cudnnConvolutionBackwardBias(s->dnn, &one, deconv ? L->x : L->y,
            ptr[k->dout], beta_of(k->dparam_acc), L->b, dw + wb),
          "backward bias");
  }
  return OOC_OK;
}

/* --- GEMMs ---------------------------------------------------------------- */

/* Row-major C[M x N] = op(A) op(B), batched with strides (elements). */
static cublasStatus_t
rm_gemm(cu_state *s, int ta, int tb, int M, int N, int K, const float *A,
        int lda, const float *B, int ldb, float *C, int ldc, int acc,
        int batch, long long sa, long long sb, long long sc)
{
  return cublasSgemmStridedBatched(s->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                                   &one, B, ldb, sb, A, lda, sa, beta_of(acc),
                                   C, ldc, sc, batch);
}

static int
ones_for(cu_state *s, size_t n, ooc_err *err)
{
  float *h;
  size_t i;

  if (n <= s->ones_n)
    return OOC_OK;
  if ((h = malloc(n * sizeof *h)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "cuda: out of memory");
  for (i = 0; i < n; i++)
    h[i] = 1.0f;
  cudaFree(s->ones);
  s->ones = NULL;
  s->ones_n = 0;
  if (cudaMalloc((void **)&s->ones, n * sizeof *h) != cudaSuccess ||
      cudaMemcpy(s->ones, h, n * sizeof *h, cudaMemcpyHostToDevice)
          != cudaSuccess) {
    free(h);
    return ooc_err_set(err, OOC_ENOMEM, "cuda: cannot allocate a vector of "
                       "ones");
  }
  free(h);
  s->ones_n = n;
  return OOC_OK;
}

static int
linear_run(cu_state *s, const ooc_kernel *k, cu_layer *L,
           void *const *ptr, ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];
  const ooc_shape *x = &s->m->layers[in_layer(s, k, 0)].out;
  int in = (int)x->d[x->ndim - 1], out = (int)l->a.out;
  int R = (int)(elems_of(s, in_layer(s, k, 0)) / (uint64_t)in);
  char *own = k->param >= 0 ? ptr[k->param] : NULL;
  float *W = k->tied >= 0 ? ptr[k->tied] : (float *)own;
  float *b = k->tied >= 0 ? (float *)own
                          : (float *)(own + (uint64_t)in * out * 4);
  float *dW, *db;
  int wacc = k->tied >= 0 ? k->tied_acc : k->dparam_acc;

  if (k->phase != OOC_PH_BWD) {
    /* Y = X W^T */
    BLAS(rm_gemm(s, 0, 1, R, out, in, ptr[k->in[0]], in, W, in, ptr[k->out],
                 out, 0, 1, 0, 0, 0), "forward");
    if (l->a.bias) {
      DNN(tdesc_rows(L->y, R, out, out), "tensor");
      DNN(cudnnAddTensor(s->dnn, &one, L->b, b, &one, L->y, ptr[k->out]),
          "bias");
    }
    return OOC_OK;
  }
  if (k->tied >= 0) {
    const ooc_layer *e = &s->m->layers[ooc_model_tied_embedding(s->m,
                                                                k->layer)];
    dW = (float *)((char *)ptr[k->tied_dparam] + k->tied_dparam_off);
    if (!wacc)
      CU(cudaMemsetAsync((char *)dW + (uint64_t)in * out * 4, 0,
                         e->param_bytes - (uint64_t)in * out * 4,
                         s->st[OOC_STREAM_COMPUTE]), "cudaMemsetAsync");
    db = k->dparam >= 0 ? (float *)((char *)ptr[k->dparam] + k->dparam_off)
                        : NULL;
  } else {
    dW = (float *)((char *)ptr[k->dparam] + k->dparam_off);
    db = dW + (uint64_t)in * out;
  }
  if (k->din[0] >= 0)   /* dX = dY W */
    BLAS(rm_gemm(s, 0, 0, R, in, out, ptr[k->dout], out, W, in,
                 ptr[k->din[0]], in, k->din_acc[0], 1, 0, 0, 0),
         "backward data");
  /* dW = dY^T X */
  BLAS(rm_gemm(s, 1, 0, out, in, R, ptr[k->dout], out, ptr[k->in[0]], in, dW,
               in, wacc, 1, 0, 0, 0), "backward weights");
  if (l->a.bias && db != NULL)
    BLAS(cublasSgemv(s->blas, CUBLAS_OP_N, out, R, &one, ptr[k->dout], out,
                     s->ones, 1, beta_of(k->dparam_acc), db, 1),
         "bias gradient");
  return OOC_OK;
}

static int
matmul_run(cu_state *s, const ooc_kernel *k, void *const *ptr,
           ooc_err *err)
{
  const ooc_model *m = s->m;
  const ooc_layer *l = &m->layers[k->layer];
  const ooc_shape *a = &m->layers[in_layer(s, k, 0)].out;
  const ooc_shape *bs = &m->layers[in_layer(s, k, 1)].out;
  int tb = l->a.transpose_b != 0, i;
  long long lead = 1, B, M, K, N;

  for (i = 0; i < a->ndim - 2; i++)
    lead *= a->d[i];
  K = a->d[a->ndim - 1];
  N = tb ? bs->d[bs->ndim - 2] : bs->d[bs->ndim - 1];
  if (bs->ndim == 2) {
    B = m->batch;
    M = lead * a->d[a->ndim - 2];
  } else {
    B = m->batch * lead;
    M = a->d[a->ndim - 2];
  }
  if (k->phase != OOC_PH_BWD) {
    BLAS(rm_gemm(s, 0, tb, (int)M, (int)N, (int)K, ptr[k->in[0]], (int)K,
                 ptr[k->in[1]], tb ? (int)K : (int)N, ptr[k->out], (int)N, 0,
                 (int)B, M * K, K * N, M * N), "forward");
    return OOC_OK;
  }
  if (k->din[0] >= 0)   /* dA = dC B^T */
    BLAS(rm_gemm(s, 0, !tb, (int)M, (int)K, (int)N, ptr[k->dout], (int)N,
                 ptr[k->in[1]], tb ? (int)K : (int)N, ptr[k->din[0]], (int)K,
                 k->din_acc[0], (int)B, M * N, K * N, M * K), "backward A");
  if (k->din[1] >= 0) {
    if (tb)             /* dB^T = dC^T A */
      BLAS(rm_gemm(s, 1, 0, (int)N, (int)K, (int)M, ptr[k->dout], (int)N,
                   ptr[k->in[0]], (int)K, ptr[k->din[1]], (int)K,
                   k->din_acc[1], (int)B, M * N, M * K, N * K),
           "backward B");
    else                /* dB = A^T dC */
      BLAS(rm_gemm(s, 1, 0, (int)K, (int)N, (int)M, ptr[k->in[0]], (int)K,
                   ptr[k->dout], (int)N, ptr[k->din[1]], (int)N,
                   k->din_acc[1], (int)B, M * K, M * N, K * N),
           "backward B");
  }
  return OOC_OK;
}

/* --- the rest ------------------------------------------------------------- */

static int
unsupported(const cu_state *s, const ooc_kernel *k, const char *why,
            ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];

  return ooc_err_set(err, OOC_EINVAL, "cuda: layer %d '%s' (%s %s): %s",
                     k->layer, l->name ? l->name : "?", ooc_op_name(l->op),
                     ooc_phase_name((ooc_phase)k->phase), why);
}

/* softmax_ce: its [rows, classes] descriptor, -onehot / rows at the
 * labels and a buffer for log-probabilities (outside the arena). */
static int
ce_build(cu_state *s, const ooc_kernel *k, cu_layer *L, ooc_err *err)
{
  int64_t rows, C, n, r, d[2];
  float *h;
  cudaError_t e;

  ooc_exec_ce_shape(s->m, k->layer, &rows, &C);
  n = rows * s->m->batch;
  d[0] = n;
  d[1] = C;
  DNN(tdesc(&L->x, 2, d), "tensor");
  if (L->onehot != NULL)
    return OOC_OK;
  if ((h = calloc((size_t)(n * C), sizeof *h)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "cuda: out of memory");
  for (r = 0; r < n; r++)
    h[r * C + ooc_exec_label(s->seed, r, C)] = -1.0f / (float)n;
  e = cudaMalloc((void **)&L->onehot, (size_t)(n * C) * sizeof *h);
  if (e == cudaSuccess)
    e = cudaMemcpy(L->onehot, h, (size_t)(n * C) * sizeof *h,
                   cudaMemcpyHostToDevice);
  if (e == cudaSuccess)
    e = cudaMalloc((void **)&L->logp, (size_t)(n * C) * sizeof *h);
  free(h);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaMalloc (labels)", err);
  s->side += 2 * (uint64_t)(n * C) * sizeof *h;
  return OOC_OK;
}

static int
ce_run(cu_state *s, const ooc_kernel *k, cu_layer *L, void *const *ptr,
       ooc_err *err)
{
  int64_t rows, C, n;
  float *p = (float *)((char *)ptr[k->out] + k->saved_off), dot = 0;

  ooc_exec_ce_shape(s->m, k->layer, &rows, &C);
  n = rows * s->m->batch;
  if (k->phase != OOC_PH_BWD) {
    DNN(cudnnSoftmaxForward(s->dnn, CUDNN_SOFTMAX_ACCURATE,
          CUDNN_SOFTMAX_MODE_INSTANCE, &one, L->x, ptr[k->in[0]], &zero,
          L->x, p), "softmax");
    DNN(cudnnSoftmaxForward(s->dnn, CUDNN_SOFTMAX_LOG,
          CUDNN_SOFTMAX_MODE_INSTANCE, &one, L->x, ptr[k->in[0]], &zero,
          L->x, L->logp), "log-softmax");
    /* loss = -mean over rows of log p[label] = logp . (-onehot / rows) */
    BLAS(cublasSdot(s->blas, (int)(n * C), L->logp, 1, L->onehot, 1, &dot),
         "loss");
    s->loss = dot;
    return OOC_OK;
  }
  if (k->din[0] < 0)
    return OOC_OK;
  {
    float inv = 1.0f / (float)n;
    /* dx = p / rows - onehot / rows (+ dx) */
    DNN(cudnnAddTensor(s->dnn, &inv, L->x, p, beta_of(k->din_acc[0]), L->x,
                       ptr[k->din[0]]), "gradient");
    DNN(cudnnAddTensor(s->dnn, &one, L->x, L->onehot, &one, L->x,
                       ptr[k->din[0]]), "gradient");
  }
  return OOC_OK;
}

static int
bn_build(cu_state *s, const ooc_kernel *k, cu_layer *L, ooc_err *err)
{
  int64_t d[6];
  int nd = dims_of(s->m, in_layer(s, k, 0), d);
  cudaError_t e;

  DNN(tdesc(&L->x, nd, d), "tensor");
  if (L->b == NULL)
    DNN(cudnnCreateTensorDescriptor(&L->b), "tensor");
  DNN(cudnnDeriveBNTensorDescriptor(L->b, L->x, CUDNN_BATCHNORM_SPATIAL),
      "batch norm parameters");
  if (L->stats == NULL) {
    e = cudaMalloc((void **)&L->stats, 2 * (size_t)d[1] * sizeof(float));
    if (e != cudaSuccess)
      return cuda_fail(e, "cudaMalloc (batch norm statistics)", err);
    s->side += 2 * (uint64_t)d[1] * sizeof(float);
  }
  if (k->phase == OOC_PH_BWD && k->din[0] < 0)
    return grow(&s->tmp, &s->tmp_bytes,
                elems_of(s, in_layer(s, k, 0)) * sizeof(float), err);
  return OOC_OK;
}

static int
bn_run(cu_state *s, const ooc_kernel *k, cu_layer *L, void *const *ptr,
       ooc_err *err)
{
  float *w = ptr[k->param];
  float *dw = k->dparam >= 0 ? (float *)((char *)ptr[k->dparam] + k->dparam_off)
                             : NULL;
  int64_t C = s->m->layers[in_layer(s, k, 0)].out.d[0];

  if (k->phase != OOC_PH_BWD) {
    DNN(cudnnBatchNormalizationForwardTraining(s->dnn,
          CUDNN_BATCHNORM_SPATIAL, &one, &zero, L->x, ptr[k->in[0]], L->x,
          ptr[k->out], L->b, w, w + C, 0.0, NULL, NULL, EPS, L->stats,
          L->stats + C), "forward");
    return OOC_OK;
  }
  DNN(cudnnBatchNormalizationBackward(s->dnn, CUDNN_BATCHNORM_SPATIAL, &one,
        k->din[0] >= 0 ? beta_of(k->din_acc[0]) : &zero, &one,
        beta_of(k->dparam_acc), L->x, ptr[k->in[0]], L->x, ptr[k->dout],
        L->x, k->din[0] >= 0 ? ptr[k->din[0]] : s->tmp, L->b, w, dw, dw + C,
        EPS, L->stats, L->stats + C), "backward");
  return OOC_OK;
}

/* relu, sigmoid, tanh: their backward reads the output alone. */
static int
act_build(cu_state *s, const ooc_kernel *k, cu_layer *L, ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];
  cudnnActivationMode_t mode;
  int64_t d[1] = { (int64_t)elems_of(s, k->layer) };

  if (l->op == OOC_OPK_RELU)
    mode = CUDNN_ACTIVATION_RELU;
  else if (l->op == OOC_OPK_ACT && strcmp(l->a.act, "sigmoid") == 0)
    mode = CUDNN_ACTIVATION_SIGMOID;
  else if (l->op == OOC_OPK_ACT && strcmp(l->a.act, "tanh") == 0)
    mode = CUDNN_ACTIVATION_TANH;
  else
    return unsupported(s, k, "the cuda backend runs relu, sigmoid and tanh "
                       "only (the others need kernels of its own)", err);
  DNN(tdesc(&L->x, 1, d), "tensor");
  if (L->act == NULL)
    DNN(cudnnCreateActivationDescriptor(&L->act), "activation");
  DNN(cudnnSetActivationDescriptor(L->act, mode, CUDNN_PROPAGATE_NAN, 0.0),
      "activation");
  return OOC_OK;
}

static int
act_run(cu_state *s, const ooc_kernel *k, cu_layer *L, void *const *ptr,
        ooc_err *err)
{
  if (k->phase != OOC_PH_BWD) {
    DNN(cudnnActivationForward(s->dnn, L->act, &one, L->x, ptr[k->in[0]],
                               &zero, L->x, ptr[k->out]), "forward");
    return OOC_OK;
  }
  if (k->din[0] < 0)
    return OOC_OK;
  /* The output stands for the input: these modes differentiate from it. */
  DNN(cudnnActivationBackward(s->dnn, L->act, &one, L->x, ptr[k->out], L->x,
                              ptr[k->dout], L->x, ptr[k->out],
                              beta_of(k->din_acc[0]), L->x, ptr[k->din[0]]),
      "backward");
  return OOC_OK;
}

static int
pool_build(cu_state *s, const ooc_kernel *k, cu_layer *L, ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];
  int64_t din[6], dout[6];
  int nd = dims_of(s->m, in_layer(s, k, 0), din), win[3], pad[3], str[3],
      got[6], i;

  dims_of(s->m, k->layer, dout);
  DNN(tdesc(&L->x, nd, din), "tensor");
  DNN(tdesc(&L->y, nd, dout), "tensor");
  for (i = 0; i < nd - 2; i++) {
    int global = l->op == OOC_OPK_GLOBALPOOL;
    win[i] = global ? (int)din[i + 2] : l->a.kernel[i];
    pad[i] = global ? 0 : l->a.pad[i];
    str[i] = global ? 1 : l->a.stride[i];
  }
  if (L->pool == NULL)
    DNN(cudnnCreatePoolingDescriptor(&L->pool), "pooling");
  DNN(cudnnSetPoolingNdDescriptor(L->pool,
        l->op == OOC_OPK_MAXPOOL ? CUDNN_POOLING_MAX_DETERMINISTIC
                                 : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
        CUDNN_PROPAGATE_NAN, nd - 2, win, pad, str), "pooling");
  DNN(cudnnGetPoolingNdForwardOutputDim(L->pool, L->x, nd < 4 ? 4 : nd, got),
      "pooling output");
  for (i = 2; i < nd; i++)
    if (got[i] != dout[i])
      return unsupported(s, k, "cuDNN pools with the floor rule, which "
                         "gives another output size (ceil_mode)", err);
  return OOC_OK;
}

static int
pool_run(cu_state *s, const ooc_kernel *k, cu_layer *L,
         void *const *ptr, ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];
  int max = l->op == OOC_OPK_MAXPOOL;

  if (k->phase != OOC_PH_BWD) {
    DNN(cudnnPoolingForward(s->dnn, L->pool, &one, L->x, ptr[k->in[0]],
                            &zero, L->y, ptr[k->out]), "forward");
    return OOC_OK;
  }
  if (k->din[0] < 0)
    return OOC_OK;
  /* Average pooling reads neither x nor y; the program need not keep
   * them, so their gradients' buffers (same shapes) stand in. */
  DNN(cudnnPoolingBackward(s->dnn, L->pool, &one, L->y,
        max ? ptr[k->out] : ptr[k->dout], L->y, ptr[k->dout], L->x,
        max ? ptr[k->in[0]] : ptr[k->din[0]], beta_of(k->din_acc[0]), L->x,
        ptr[k->din[0]]), "backward");
  return OOC_OK;
}

static int
lrn_build(cu_state *s, const ooc_kernel *k, cu_layer *L, ooc_err *err)
{
  const ooc_layer *l = &s->m->layers[k->layer];
  int64_t d[6];
  int nd = dims_of(s->m, in_layer(s, k, 0), d);

  DNN(tdesc(&L->x, nd, d), "tensor");
  if (L->lrn == NULL)
    DNN(cudnnCreateLRNDescriptor(&L->lrn), "LRN");
  DNN(cudnnSetLRNDescriptor(L->lrn,
        (unsigned)(l->a.lrn_size > 0 ? l->a.lrn_size : 5), LRN_ALPHA,
        LRN_BETA, LRN_K), "LRN");
  return OOC_OK;
}

static int
lrn_run(cu_state *s, const ooc_kernel *k, cu_layer *L, void *const *ptr,
        ooc_err *err)
{
  if (k->phase != OOC_PH_BWD) {
    DNN(cudnnLRNCrossChannelForward(s->dnn, L->lrn,
          CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, L->x, ptr[k->in[0]], &zero,
          L->x, ptr[k->out]), "forward");
    return OOC_OK;
  }
  if (k->din[0] < 0)
    return OOC_OK;
  DNN(cudnnLRNCrossChannelBackward(s->dnn, L->lrn,
        CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, L->x, ptr[k->out], L->x,
        ptr[k->dout], L->x, ptr[k->in[0]], beta_of(k->din_acc[0]), L->x,
        ptr[k->din[0]]), "backward");
  return OOC_OK;
}

/* add and concat move [outer, width] blocks whose rows are `pitch` apart
 * in the wider tensor: one cudnnAddTensor over strided views each. */
static int
move_rows(cu_state *s, const ooc_kernel *k, cu_layer *L,
          const float *src, int64_t src_pitch, float *dst, int64_t dst_pitch,
          int64_t rows, int64_t width, int acc, ooc_err *err)
{
  DNN(tdesc_rows(L->x, rows, width, src_pitch), "tensor");
  DNN(tdesc_rows(L->y, rows, width, dst_pitch), "tensor");
  DNN(cudnnAddTensor(s->dnn, &one, L->x, src, beta_of(acc), L->y, dst),
      "add");
  return OOC_OK;
}

static int
join_run(cu_state *s, const ooc_kernel *k, cu_layer *L,
         void *const *ptr, ooc_err *err)
{
  const ooc_model *m = s->m;
  const ooc_layer *l = &m->layers[k->layer];
  int bwd = k->phase == OOC_PH_BWD, j, i, rc;

  if (l->op == OOC_OPK_ADD) {
    int64_t n = (int64_t)elems_of(s, k->layer);
    for (j = 0; j < l->n_in; j++) {
      if (bwd && k->din[j] < 0)
        continue;
      if (!bwd && j == 0 && ptr[k->in[0]] == ptr[k->out])
        continue;       /* in place: the sum starts in the output */
      rc = bwd ? move_rows(s, k, L, ptr[k->dout], n, ptr[k->din[j]], n, 1,
                           n, k->din_acc[j], err)
               : move_rows(s, k, L, ptr[k->in[j]], n, ptr[k->out], n, 1, n,
                           j > 0, err);
      if (rc != OOC_OK)
        return rc;
    }
    return OOC_OK;
  }
  {
    int axis = l->a.axis < 0 ? l->a.axis + l->out.ndim : l->a.axis;
    int64_t outer = m->batch, inner = 1, total = l->out.d[axis], off = 0;
    for (i = 0; i < axis; i++)
      outer *= l->out.d[i];
    for (i = axis + 1; i < l->out.ndim; i++)
      inner *= l->out.d[i];
    for (j = 0; j < l->n_in; j++) {
      int64_t c = m->layers[in_layer(s, k, j)].out.d[axis];
      float *y = (float *)(bwd ? ptr[k->dout] : ptr[k->out]) + off * inner;
      if (!bwd)
        rc = move_rows(s, k, L, ptr[k->in[j]], c * inner, y, total * inner,
                       outer, c * inner, 0, err);
      else if (k->din[j] >= 0)
        rc = move_rows(s, k, L, y, total * inner, ptr[k->din[j]], c * inner,
                       outer, c * inner, k->din_acc[j], err);
      else
        rc = OOC_OK;
      if (rc != OOC_OK)
        return rc;
      off += c;
    }
  }
  return OOC_OK;
}

static int
update_run(cu_state *s, const ooc_kernel *k, void *const *ptr,
           ooc_err *err)
{
  int j;
  const float lr = -LR_SGD, mom = MOMENTUM;

  for (j = 0; j < k->n_params; j++) {
    const ooc_layer *l = &s->m->layers[s->p->tensors[k->params[j]].layer];
    int n = (int)(l->param_bytes / sizeof(float));
    float *w = ptr[k->params[j]], *g = w + n, *v = g + n;
    if (s->m->optimizer == OOC_OPT_SGD) {
      BLAS(cublasSaxpy(s->blas, n, &lr, g, 1, w, 1), "update");
    } else {
      BLAS(cublasSscal(s->blas, n, &mom, v, 1), "update");
      BLAS(cublasSaxpy(s->blas, n, &one, g, 1, v, 1), "update");
      BLAS(cublasSaxpy(s->blas, n, &lr, v, 1, w, 1), "update");
    }
  }
  return OOC_OK;
}

/* --- front ---------------------------------------------------------------- */

static int
cu_prepare(void *state, const ooc_kernel *k, ooc_err *err)
{
  cu_state *s = state;
  const ooc_layer *l;
  cu_layer *L;
  int bwd = k->phase == OOC_PH_BWD, rc;
  int64_t d[2] = { 1, 1 };

  if (k->phase == OOC_PH_UPDATE) {
    /* A layer whose optimizer runs on the host (docs/offload.md) is not
     * in the device update: with every layer there, Adam runs. */
    if (s->m->optimizer == OOC_OPT_ADAM && k->n_params > 0)
      return ooc_err_set(err, OOC_EINVAL, "cuda: the Adam update needs "
                         "kernels the cuda backend does not have (SGD and "
                         "SGD with momentum run, and Adam on the host for "
                         "offloaded layers)");
    return OOC_OK;
  }
  l = &s->m->layers[k->layer];
  L = &s->lay[k->layer];
  if (L->built[bwd]) {
    if (L->algo[bwd] != k->algo)
      return unsupported(s, k, "two kernel algorithms for one layer and "
                         "direction in one program", err);
    return OOC_OK;
  }
  switch (l->op) {
  case OOC_OPK_CONV2D: case OOC_OPK_CONV3D: case OOC_OPK_DECONV2D:
    rc = conv_build(s, k, L, err);
    break;
  case OOC_OPK_LINEAR: {
    const ooc_shape *x = &s->m->layers[in_layer(s, k, 0)].out;
    int64_t R = (int64_t)(elems_of(s, in_layer(s, k, 0)) /
                          (uint64_t)x->d[x->ndim - 1]);
    d[1] = l->a.out;
    rc = tdesc(&L->b, 2, d) == CUDNN_STATUS_SUCCESS &&
         (L->y != NULL || cudnnCreateTensorDescriptor(&L->y) ==
                              CUDNN_STATUS_SUCCESS)
             ? OOC_OK : unsupported(s, k, "cuDNN descriptors failed", err);
    if (rc == OOC_OK && bwd && l->a.bias)
      rc = ones_for(s, (size_t)R, err);
    break;
  }
  case OOC_OPK_MATMUL:
    rc = OOC_OK;
    break;
  case OOC_OPK_BATCHNORM:
    rc = bn_build(s, k, L, err);
    break;
  case OOC_OPK_RELU: case OOC_OPK_ACT:
    rc = act_build(s, k, L, err);
    break;
  case OOC_OPK_MAXPOOL: case OOC_OPK_AVGPOOL: case OOC_OPK_GLOBALPOOL:
    rc = pool_build(s, k, L, err);
    break;
  case OOC_OPK_LRN:
    rc = lrn_build(s, k, L, err);
    break;
  case OOC_OPK_ADD: case OOC_OPK_CONCAT:
    rc = OOC_OK;
    if (L->x == NULL && cudnnCreateTensorDescriptor(&L->x) !=
                            CUDNN_STATUS_SUCCESS)
      rc = unsupported(s, k, "cuDNN descriptors failed", err);
    if (rc == OOC_OK && L->y == NULL &&
        cudnnCreateTensorDescriptor(&L->y) != CUDNN_STATUS_SUCCESS)
      rc = unsupported(s, k, "cuDNN descriptors failed", err);
    break;
  case OOC_OPK_SOFTMAX_CE:
    rc = ce_build(s, k, L, err);
    break;
  default:
    rc = unsupported(s, k, "the cuda backend has no kernel for this op yet "
                     "(it needs one of its own: upsample, gelu, dropout, "
                     "embedding, attention, layernorm, rmsnorm, rope, "
                     "swiglu, tokens, slice and softmax have none in "
                     "cuDNN's legacy API or cuBLAS)", err);
    break;
  }
  if (rc == OOC_OK && k->algo != OOC_ALGO_DEFAULT && !ooc_algo_has_choice(
                                                         s->m, k->layer))
    rc = unsupported(s, k, "a kernel algorithm for an op that has none",
                     err);
  if (rc == OOC_OK) {
    L->built[bwd] = 1;
    L->algo[bwd] = k->algo;
  }
  return rc;
}

static int
cu_compute(void *state, const ooc_kernel *k, void *const *ptr,
           int iteration, ooc_err *err)
{
  cu_state *s = state;
  cu_layer *L;
  int rc;

  if (k->phase == OOC_PH_UPDATE) {
    rc = update_run(s, k, ptr, err);
  } else {
    const ooc_layer *l = &s->m->layers[k->layer];
    L = &s->lay[k->layer];
    if (k->phase == OOC_PH_BWD && k->dout_fresh &&
        l->op != OOC_OPK_SOFTMAX_CE)
      CU(cudaMemsetAsync(ptr[k->dout], 0, s->p->tensors[k->dout].bytes,
                         s->st[OOC_STREAM_COMPUTE]), "cudaMemsetAsync");
    switch (l->op) {
    case OOC_OPK_CONV2D: case OOC_OPK_CONV3D: case OOC_OPK_DECONV2D:
      rc = conv_run(s, k, L, ptr, err);
      break;
    case OOC_OPK_LINEAR:
      rc = linear_run(s, k, L, ptr, err);
      break;
    case OOC_OPK_MATMUL:
      rc = matmul_run(s, k, ptr, err);
      break;
    case OOC_OPK_BATCHNORM:
      rc = bn_run(s, k, L, ptr, err);
      break;
    case OOC_OPK_RELU: case OOC_OPK_ACT:
      rc = act_run(s, k, L, ptr, err);
      break;
    case OOC_OPK_MAXPOOL: case OOC_OPK_AVGPOOL: case OOC_OPK_GLOBALPOOL:
      rc = pool_run(s, k, L, ptr, err);
      break;
    case OOC_OPK_LRN:
      rc = lrn_run(s, k, L, ptr, err);
      break;
    case OOC_OPK_ADD: case OOC_OPK_CONCAT:
      rc = join_run(s, k, L, ptr, err);
      break;
    case OOC_OPK_SOFTMAX_CE:
      rc = ce_run(s, k, L, ptr, err);
      break;
    default:
      rc = unsupported(s, k, "no kernel", err);
      break;
    }
  }
  if (rc != OOC_OK)
    return rc;
  CU(cudaStreamSynchronize(s->st[OOC_STREAM_COMPUTE]),
     "cudaStreamSynchronize");
  return OOC_OK;
}

/* --- the host side of the API (calibrate) ---------------------------------- */

/* Queue n memsets of `bytes` on the compute stream: work the device is
 * busy with while the host measures what a call waits for. */
static int
cu_queue_work(cu_state *s, void *buf, size_t bytes, int n, ooc_err *err)
{
  for (int i = 0; i < n; i++)
    CU(cudaMemsetAsync(buf, i & 0xff, bytes, s->st[OOC_STREAM_COMPUTE]),
       "cudaMemsetAsync");
  return OOC_OK;
}

/* cuMemMap, cuMemSetAccess and cuMemUnmap of one granularity-sized chunk
 * in a reserved range (medians of 7), the unmap also with 64 memsets of
 * `bytes` queued on the compute stream. */
static int
cu_host_api_va(cu_state *s, void *buf, size_t bytes, ooc_exec_host_api *out,
               ooc_err *err)
{
  enum { R = 7, BURST = 64 };
  CUmemAllocationProp ap;
  CUmemAccessDesc ad;
  CUmemGenericAllocationHandle h;
  CUdeviceptr va = 0;
  size_t g = s->granularity;
  int64_t mp[R], ac[R], ui[R], ub[R];
  int k, rc = OOC_OK, busy;
  CUresult e;

  memset(&ap, 0, sizeof ap);
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.location.id = s->dev;
  memset(&ad, 0, sizeof ad);
  ad.location = ap.location;
  ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if ((e = s->mem_create(&h, g, &ap, 0)) != CUDA_SUCCESS)
    return ooc_err_set(err, OOC_EINVAL, "cuda: cuMemCreate for the host "
                       "API measurement failed (CUresult %d)", (int)e);
  if ((e = s->va_reserve(&va, g, 0, 0, 0)) != CUDA_SUCCESS) {
    s->mem_release(h);
    return ooc_err_set(err, OOC_EINVAL, "cuda: cuMemAddressReserve for the "
                       "host API measurement failed (CUresult %d)", (int)e);
  }
  for (k = 0; k < R && rc == OOC_OK; k++)
    for (busy = 0; busy <= 1 && rc == OOC_OK; busy++) {
      int64_t t0;
      cudaDeviceSynchronize();
      t0 = ooc_mono_ns();
      e = s->mem_map(va, g, 0, h, 0);
      if (busy == 0)
        mp[k] = ooc_mono_ns() - t0;
      if (e == CUDA_SUCCESS) {
        t0 = ooc_mono_ns();
        e = s->mem_access(va, g, &ad, 1);
        if (busy == 0)
          ac[k] = ooc_mono_ns() - t0;
      }
      if (e != CUDA_SUCCESS) {
        rc = ooc_err_set(err, OOC_EINVAL, "cuda: mapping a chunk for the "
                         "host API measurement failed (CUresult %d)", (int)e);
        break;
      }
      if (busy && (rc = cu_queue_work(s, buf, bytes, BURST, err)) < 0)
        break;
      t0 = ooc_mono_ns();
      e = s->mem_unmap(va, g);
      (busy ? ub : ui)[k] = ooc_mono_ns() - t0;
      if (e != CUDA_SUCCESS)
        rc = ooc_err_set(err, OOC_EINVAL, "cuda: cuMemUnmap for the host API "
                         "measurement failed (CUresult %d)", (int)e);
      cudaDeviceSynchronize();
    }
  s->va_free(va, g);
  s->mem_release(h);
  if (rc == OOC_OK) {
    out->map_ns = ooc_median_i64(mp, R);
    out->access_ns = ooc_median_i64(ac, R);
    out->unmap_idle_ns = ooc_median_i64(ui, R);
    out->unmap_busy_ns = ooc_median_i64(ub, R);
  }
  return rc;
}

/* What an asynchronous copy's issue, an event synchronisation and a
 * cudaFree cost the host, the last with the device idle and with work
 * queued: a cudaFree that synchronises the device waits for the work. */
static int
cu_host_api(void *state, ooc_exec_host_api *out, ooc_err *err)
{
  enum { N = 101, R = 7, BURST = 64 };
  cu_state *s = state;
  cudaStream_t cs = s->st[OOC_STREAM_COMPUTE];
  int64_t t[N], busy[R], fb[R], fi[R];
  size_t big = (size_t)256 << 20;
  void *host = NULL, *dev = NULL, *buf = NULL, *seg;
  cudaEvent_t ev = NULL;
  int k, rc = OOC_OK;
  cudaError_t e;

  memset(out, 0, sizeof *out);
  if ((e = cudaHostAlloc(&host, 65536, cudaHostAllocDefault)) != cudaSuccess ||
      (e = cudaMalloc(&dev, 65536)) != cudaSuccess ||
      (e = cudaMalloc(&buf, big)) != cudaSuccess ||
      (e = cudaEventCreate(&ev)) != cudaSuccess) {
    rc = cuda_fail(e, "host API measurement buffers", err);
    goto done;
  }
  for (k = 0; k < N; k++) {
    int64_t t0 = ooc_mono_ns();
    if ((e = cudaMemcpyAsync(dev, host, 65536, cudaMemcpyHostToDevice, cs))
        != cudaSuccess) {
      rc = cuda_fail(e, "cudaMemcpyAsync", err);
      goto done;
    }
    t[k] = ooc_mono_ns() - t0;
    cudaStreamSynchronize(cs);
  }
  out->copy_issue_ns = ooc_median_i64(t, N);
  for (k = 0; k < N; k++) {
    int64_t t0 = ooc_mono_ns();
    if ((e = cudaEventRecord(ev, cs)) != cudaSuccess ||
        (e = cudaEventSynchronize(ev)) != cudaSuccess) {
      rc = cuda_fail(e, "cudaEventSynchronize", err);
      goto done;
    }
    t[k] = ooc_mono_ns() - t0;
  }
  out->event_sync_ns = ooc_median_i64(t, N);
  for (k = 0; k < R; k++) {
    int64_t t0;
    if ((e = cudaMalloc(&seg, (size_t)2 << 20)) != cudaSuccess) {
      rc = cuda_fail(e, "cudaMalloc", err);
      goto done;
    }
    cudaDeviceSynchronize();
    t0 = ooc_mono_ns();
    if ((rc = cu_queue_work(s, buf, big, BURST, err)) < 0)
      goto done;
    cudaStreamSynchronize(cs);
    busy[k] = ooc_mono_ns() - t0;
    if ((rc = cu_queue_work(s, buf, big, BURST, err)) < 0)
      goto done;
    t0 = ooc_mono_ns();
    cudaFree(seg);
    fb[k] = ooc_mono_ns() - t0;
    cudaDeviceSynchronize();
    if ((e = cudaMalloc(&seg, (size_t)2 << 20)) != cudaSuccess) {
      rc = cuda_fail(e, "cudaMalloc", err);
      goto done;
    }
    cudaDeviceSynchronize();
    t0 = ooc_mono_ns();
    cudaFree(seg);
    fi[k] = ooc_mono_ns() - t0;
  }
  out->busy_ns = ooc_median_i64(busy, R);
  out->free_busy_ns = ooc_median_i64(fb, R);
  out->free_idle_ns = ooc_median_i64(fi, R);
  if (s->mem_create != NULL && s->granularity > 0 &&
      (rc = cu_host_api_va(s, buf, big, out, err)) < 0)
    goto done;
done:
  if (ev != NULL)
    cudaEventDestroy(ev);
  cudaFree(buf);
  cudaFree(dev);
  cudaFreeHost(host);
  return rc;
}

static void
cu_info(const void *state, ooc_exec_backend_info *out)
{
  const cu_state *s = state;
  int rt = 0, n;
  size_t dnn = cudnnGetVersion();

  cudaRuntimeGetVersion(&rt);
  out->side_bytes = s->ws_bytes + s->tmp_bytes + s->ones_n * sizeof(float) +
                    s->side;
  out->loss = s->loss;
  n = snprintf(out->note, sizeof out->note, "%s, CUDA runtime %d.%d, cuDNN "
               "%zu.%zu.%zu", s->name, rt / 1000, rt % 1000 / 10,
               dnn / 10000, dnn / 100 % 100, dnn % 100);
  if (s->n_unpinned > 0 && n > 0 && (size_t)n < sizeof out->note)
    snprintf(out->note + n, sizeof out->note - (size_t)n, "; %d host "
             "buffer%s pageable (cudaHostAlloc refused)", s->n_unpinned,
             s->n_unpinned == 1 ? "" : "s");
}

const ooc_exec_backend ooc_exec_cuda = {
  .name = "cuda",
  .summary = "one GPU: cudaMalloc segments or cuMem* chunks, cudaHostAlloc, "
             "a CUDA stream per program stream, cuDNN and cuBLAS kernels",
  .state_size = sizeof(cu_state),
  .host_visible = 0,
  .probe = cu_probe,
  .create = cu_create,
  .destroy = cu_destroy,
  .thread_start = cu_thread_start,
  .mem = cu_mem,
  .host_alloc = cu_host_alloc,
  .host_free = cu_host_free,
  .upload = cu_upload,
  .download = cu_download,
  .prepare = cu_prepare,
  .compute = cu_compute,
  .copy = cu_copy,
  .sync = cu_sync,
  .info = cu_info,
  .host_api = cu_host_api,
};
