/* executor/cuda_api.h — the CUDA runtime, cuDNN and cuBLAS entry points the
 * cuda backend calls (executor/cuda.c), loaded with dlopen when the backend
 * is first probed, not linked.
 *
 * Why: linking them made every oocsim process, and every test, map
 * libcublasLt and the rest at start-up whether or not it ran on a GPU:
 * 0.07 to 0.25 s and 224 MB resident before main() on the 2-core build
 * machine, against about 5 ms (`oocsim --version`, the whole process) and
 * 7 MB without them. Now only `--backend cuda` pays.
 *
 * Include after <cuda_runtime_api.h>, <cudnn.h> and <cublas_v2.h>, in
 * executor/cuda.c and executor/cuda_api.c only: each entry point below is
 * then a macro that calls through the table, so the backend's code reads
 * as plain CUDA. A name missing from the table is a link error (nothing
 * links the libraries), a name the table has but the code does not call
 * costs one dlsym. Names are the ones the code spells; where a header
 * maps one to another symbol (cuBLAS's v2 API: cublasCreate is
 * cublasCreate_v2; CUDA 12's cudaGetDeviceProperties is
 * cudaGetDeviceProperties_v2), the table's type and the symbol looked up
 * both follow that expansion (executor/cuda_api.c, which includes this
 * header with OOC_CUDA_API_LOADER defined, so without the macros below).
 */
#ifndef OOC_EXECUTOR_CUDA_API_H
#define OOC_EXECUTOR_CUDA_API_H

#include "base/util.h"

enum { OOC_CU_RT, OOC_CU_DNN, OOC_CU_BLAS, OOC_CU_NLIBS };

/* X(library, name) for each entry point. */
#define OOC_CUDA_API(X) \
  X(OOC_CU_RT, cudaDeviceSynchronize) \
  X(OOC_CU_RT, cudaEventCreate) \
  X(OOC_CU_RT, cudaEventDestroy) \
  X(OOC_CU_RT, cudaEventRecord) \
  X(OOC_CU_RT, cudaEventSynchronize) \
  X(OOC_CU_RT, cudaFree) \
  X(OOC_CU_RT, cudaFreeHost) \
  X(OOC_CU_RT, cudaGetDeviceCount) \
  X(OOC_CU_RT, cudaGetDeviceProperties) \
  X(OOC_CU_RT, cudaGetDriverEntryPointByVersion) \
  X(OOC_CU_RT, cudaGetErrorString) \
  X(OOC_CU_RT, cudaHostAlloc) \
  X(OOC_CU_RT, cudaMalloc) \
  X(OOC_CU_RT, cudaMemcpy) \
  X(OOC_CU_RT, cudaMemcpyAsync) \
  X(OOC_CU_RT, cudaMemsetAsync) \
  X(OOC_CU_RT, cudaRuntimeGetVersion) \
  X(OOC_CU_RT, cudaSetDevice) \
  X(OOC_CU_RT, cudaStreamCreateWithFlags) \
  X(OOC_CU_RT, cudaStreamDestroy) \
  X(OOC_CU_RT, cudaStreamSynchronize) \
  X(OOC_CU_DNN, cudnnActivationBackward) \
  X(OOC_CU_DNN, cudnnActivationForward) \
  X(OOC_CU_DNN, cudnnAddTensor) \
  X(OOC_CU_DNN, cudnnBatchNormalizationBackward) \
  X(OOC_CU_DNN, cudnnBatchNormalizationForwardTraining) \
  X(OOC_CU_DNN, cudnnConvolutionBackwardBias) \
  X(OOC_CU_DNN, cudnnConvolutionBackwardData) \
  X(OOC_CU_DNN, cudnnConvolutionBackwardFilter) \
  X(OOC_CU_DNN, cudnnConvolutionForward) \
  X(OOC_CU_DNN, cudnnCreate) \
  X(OOC_CU_DNN, cudnnCreateActivationDescriptor) \
  X(OOC_CU_DNN, cudnnCreateConvolutionDescriptor) \
  X(OOC_CU_DNN, cudnnCreateFilterDescriptor) \
  X(OOC_CU_DNN, cudnnCreateLRNDescriptor) \
  X(OOC_CU_DNN, cudnnCreatePoolingDescriptor) \
  X(OOC_CU_DNN, cudnnCreateTensorDescriptor) \
  X(OOC_CU_DNN, cudnnDeriveBNTensorDescriptor) \
  X(OOC_CU_DNN, cudnnDestroy) \
  X(OOC_CU_DNN, cudnnDestroyActivationDescriptor) \
  X(OOC_CU_DNN, cudnnDestroyConvolutionDescriptor) \
  X(OOC_CU_DNN, cudnnDestroyFilterDescriptor) \
  X(OOC_CU_DNN, cudnnDestroyLRNDescriptor) \
  X(OOC_CU_DNN, cudnnDestroyPoolingDescriptor) \
  X(OOC_CU_DNN, cudnnDestroyTensorDescriptor) \
  X(OOC_CU_DNN, cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(OOC_CU_DNN, cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(OOC_CU_DNN, cudnnGetConvolutionForwardWorkspaceSize) \
  X(OOC_CU_DNN, cudnnGetErrorString) \
  X(OOC_CU_DNN, cudnnGetPoolingNdForwardOutputDim) \
  X(OOC_CU_DNN, cudnnGetVersion) \
  X(OOC_CU_DNN, cudnnLRNCrossChannelBackward) \
  X(OOC_CU_DNN, cudnnLRNCrossChannelForward) \
  X(OOC_CU_DNN, cudnnPoolingBackward) \
  X(OOC_CU_DNN, cudnnPoolingForward) \
  X(OOC_CU_DNN, cudnnSetActivationDescriptor) \
  X(OOC_CU_DNN, cudnnSetConvolutionGroupCount) \
  X(OOC_CU_DNN, cudnnSetConvolutionMathType) \
  X(OOC_CU_DNN, cudnnSetConvolutionNdDescriptor) \
  X(OOC_CU_DNN, cudnnSetFilterNdDescriptor) \
  X(OOC_CU_DNN, cudnnSetLRNDescriptor) \
  X(OOC_CU_DNN, cudnnSetPoolingNdDescriptor) \
  X(OOC_CU_DNN, cudnnSetStream) \
  X(OOC_CU_DNN, cudnnSetTensorNdDescriptor) \
  X(OOC_CU_DNN, cudnnSoftmaxForward) \
  X(OOC_CU_BLAS, cublasCreate) \
  X(OOC_CU_BLAS, cublasDestroy) \
  X(OOC_CU_BLAS, cublasSaxpy) \
  X(OOC_CU_BLAS, cublasSdot) \
  X(OOC_CU_BLAS, cublasSetMathMode) \
  X(OOC_CU_BLAS, cublasSetStream) \
  X(OOC_CU_BLAS, cublasSgemmStridedBatched) \
  X(OOC_CU_BLAS, cublasSgemv) \
  X(OOC_CU_BLAS, cublasSscal)

struct ooc_cuda_api {
#define OOC_CUDA_API_MEMBER(lib, f) __typeof__(&f) p_##f;
  OOC_CUDA_API(OOC_CUDA_API_MEMBER)
#undef OOC_CUDA_API_MEMBER
};

extern struct ooc_cuda_api ooc_cuda_api;

/* Load the three libraries and every entry point, once per process (later
 * calls return the first's answer). OOC_EUNSUP, naming the library or
 * symbol and dlerror()'s reason, when one is missing: the backend is then
 * unusable, as without a GPU. Thread-safe. */
int ooc_cuda_api_load(ooc_err *err);

#ifndef OOC_CUDA_API_LOADER
/* Calls through the table. */
#undef cudaDeviceSynchronize
#define cudaDeviceSynchronize (ooc_cuda_api.p_cudaDeviceSynchronize)
#undef cudaEventCreate
#define cudaEventCreate (ooc_cuda_api.p_cudaEventCreate)
#undef cudaEventDestroy
#define cudaEventDestroy (ooc_cuda_api.p_cudaEventDestroy)
#undef cudaEventRecord
#define cudaEventRecord (ooc_cuda_api.p_cudaEventRecord)
#undef cudaEventSynchronize
#define cudaEventSynchronize (ooc_cuda_api.p_cudaEventSynchronize)
#undef cudaFree
#define cudaFree (ooc_cuda_api.p_cudaFree)
#undef cudaFreeHost
#define cudaFreeHost (ooc_cuda_api.p_cudaFreeHost)
#undef cudaGetDeviceCount
#define cudaGetDeviceCount (ooc_cuda_api.p_cudaGetDeviceCount)
#undef cudaGetDeviceProperties
#define cudaGetDeviceProperties (ooc_cuda_api.p_cudaGetDeviceProperties)
#undef cudaGetDriverEntryPointByVersion
#define cudaGetDriverEntryPointByVersion (ooc_cuda_api.p_cudaGetDriverEntryPointByVersion)
#undef cudaGetErrorString
#define cudaGetErrorString (ooc_cuda_api.p_cudaGetErrorString)
#undef cudaHostAlloc
#define cudaHostAlloc (ooc_cuda_api.p_cudaHostAlloc)
#undef cudaMalloc
#define cudaMalloc (ooc_cuda_api.p_cudaMalloc)
#undef cudaMemcpy
#define cudaMemcpy (ooc_cuda_api.p_cudaMemcpy)
#undef cudaMemcpyAsync
#define cudaMemcpyAsync (ooc_cuda_api.p_cudaMemcpyAsync)
#undef cudaMemsetAsync
#define cudaMemsetAsync (ooc_cuda_api.p_cudaMemsetAsync)
#undef cudaRuntimeGetVersion
#define cudaRuntimeGetVersion (ooc_cuda_api.p_cudaRuntimeGetVersion)
#undef cudaSetDevice
#define cudaSetDevice (ooc_cuda_api.p_cudaSetDevice)
#undef cudaStreamCreateWithFlags
#define cudaStreamCreateWithFlags (ooc_cuda_api.p_cudaStreamCreateWithFlags)
#undef cudaStreamDestroy
#define cudaStreamDestroy (ooc_cuda_api.p_cudaStreamDestroy)
#undef cudaStreamSynchronize
#define cudaStreamSynchronize (ooc_cuda_api.p_cudaStreamSynchronize)
#undef cudnnActivationBackward
#define cudnnActivationBackward (ooc_cuda_api.p_cudnnActivationBackward)
#undef cudnnActivationForward
#define cudnnActivationForward (ooc_cuda_api.p_cudnnActivationForward)
#undef cudnnAddTensor
#define cudnnAddTensor (ooc_cuda_api.p_cudnnAddTensor)
#undef cudnnBatchNormalizationBackward
#define cudnnBatchNormalizationBackward (ooc_cuda_api.p_cudnnBatchNormalizationBackward)
#undef cudnnBatchNormalizationForwardTraining
#define cudnnBatchNormalizationForwardTraining (ooc_cuda_api.p_cudnnBatchNormalizationForwardTraining)
#undef cudnnConvolutionBackwardBias
#define cudnnConvolutionBackwardBias (ooc_cuda_api.p_cudnnConvolutionBackwardBias)
#undef cudnnConvolutionBackwardData
#define cudnnConvolutionBackwardData (ooc_cuda_api.p_cudnnConvolutionBackwardData)
#undef cudnnConvolutionBackwardFilter
#define cudnnConvolutionBackwardFilter (ooc_cuda_api.p_cudnnConvolutionBackwardFilter)
#undef cudnnConvolutionForward
#define cudnnConvolutionForward (ooc_cuda_api.p_cudnnConvolutionForward)
#undef cudnnCreate
#define cudnnCreate (ooc_cuda_api.p_cudnnCreate)
#undef cudnnCreateActivationDescriptor
#define cudnnCreateActivationDescriptor (ooc_cuda_api.p_cudnnCreateActivationDescriptor)
#undef cudnnCreateConvolutionDescriptor
#define cudnnCreateConvolutionDescriptor (ooc_cuda_api.p_cudnnCreateConvolutionDescriptor)
#undef cudnnCreateFilterDescriptor
#define cudnnCreateFilterDescriptor (ooc_cuda_api.p_cudnnCreateFilterDescriptor)
#undef cudnnCreateLRNDescriptor
#define cudnnCreateLRNDescriptor (ooc_cuda_api.p_cudnnCreateLRNDescriptor)
#undef cudnnCreatePoolingDescriptor
#define cudnnCreatePoolingDescriptor (ooc_cuda_api.p_cudnnCreatePoolingDescriptor)
#undef cudnnCreateTensorDescriptor
#define cudnnCreateTensorDescriptor (ooc_cuda_api.p_cudnnCreateTensorDescriptor)
#undef cudnnDeriveBNTensorDescriptor
#define cudnnDeriveBNTensorDescriptor (ooc_cuda_api.p_cudnnDeriveBNTensorDescriptor)
#undef cudnnDestroy
#define cudnnDestroy (ooc_cuda_api.p_cudnnDestroy)
#undef cudnnDestroyActivationDescriptor
#define cudnnDestroyActivationDescriptor (ooc_cuda_api.p_cudnnDestroyActivationDescriptor)
#undef cudnnDestroyConvolutionDescriptor
#define cudnnDestroyConvolutionDescriptor (ooc_cuda_api.p_cudnnDestroyConvolutionDescriptor)
#undef cudnnDestroyFilterDescriptor
#define cudnnDestroyFilterDescriptor (ooc_cuda_api.p_cudnnDestroyFilterDescriptor)
#undef cudnnDestroyLRNDescriptor
#define cudnnDestroyLRNDescriptor (ooc_cuda_api.p_cudnnDestroyLRNDescriptor)
#undef cudnnDestroyPoolingDescriptor
#define cudnnDestroyPoolingDescriptor (ooc_cuda_api.p_cudnnDestroyPoolingDescriptor)
#undef cudnnDestroyTensorDescriptor
#define cudnnDestroyTensorDescriptor (ooc_cuda_api.p_cudnnDestroyTensorDescriptor)
#undef cudnnGetConvolutionBackwardDataWorkspaceSize
#define cudnnGetConvolutionBackwardDataWorkspaceSize (ooc_cuda_api.p_cudnnGetConvolutionBackwardDataWorkspaceSize)
#undef cudnnGetConvolutionBackwardFilterWorkspaceSize
#define cudnnGetConvolutionBackwardFilterWorkspaceSize (ooc_cuda_api.p_cudnnGetConvolutionBackwardFilterWorkspaceSize)
#undef cudnnGetConvolutionForwardWorkspaceSize
#define cudnnGetConvolutionForwardWorkspaceSize (ooc_cuda_api.p_cudnnGetConvolutionForwardWorkspaceSize)
#undef cudnnGetErrorString
#define cudnnGetErrorString (ooc_cuda_api.p_cudnnGetErrorString)
#undef cudnnGetPoolingNdForwardOutputDim
#define cudnnGetPoolingNdForwardOutputDim (ooc_cuda_api.p_cudnnGetPoolingNdForwardOutputDim)
#undef cudnnGetVersion
#define cudnnGetVersion (ooc_cuda_api.p_cudnnGetVersion)
#undef cudnnLRNCrossChannelBackward
#define cudnnLRNCrossChannelBackward (ooc_cuda_api.p_cudnnLRNCrossChannelBackward)
#undef cudnnLRNCrossChannelForward
#define cudnnLRNCrossChannelForward (ooc_cuda_api.p_cudnnLRNCrossChannelForward)
#undef cudnnPoolingBackward
#define cudnnPoolingBackward (ooc_cuda_api.p_cudnnPoolingBackward)
#undef cudnnPoolingForward
#define cudnnPoolingForward (ooc_cuda_api.p_cudnnPoolingForward)
#undef cudnnSetActivationDescriptor
#define cudnnSetActivationDescriptor (ooc_cuda_api.p_cudnnSetActivationDescriptor)
#undef cudnnSetConvolutionGroupCount
#define cudnnSetConvolutionGroupCount (ooc_cuda_api.p_cudnnSetConvolutionGroupCount)
#undef cudnnSetConvolutionMathType
#define cudnnSetConvolutionMathType (ooc_cuda_api.p_cudnnSetConvolutionMathType)
#undef cudnnSetConvolutionNdDescriptor
#define cudnnSetConvolutionNdDescriptor (ooc_cuda_api.p_cudnnSetConvolutionNdDescriptor)
#undef cudnnSetFilterNdDescriptor
#define cudnnSetFilterNdDescriptor (ooc_cuda_api.p_cudnnSetFilterNdDescriptor)
#undef cudnnSetLRNDescriptor
#define cudnnSetLRNDescriptor (ooc_cuda_api.p_cudnnSetLRNDescriptor)
#undef cudnnSetPoolingNdDescriptor
#define cudnnSetPoolingNdDescriptor (ooc_cuda_api.p_cudnnSetPoolingNdDescriptor)
#undef cudnnSetStream
#define cudnnSetStream (ooc_cuda_api.p_cudnnSetStream)
#undef cudnnSetTensorNdDescriptor
#define cudnnSetTensorNdDescriptor (ooc_cuda_api.p_cudnnSetTensorNdDescriptor)
#undef cudnnSoftmaxForward
#define cudnnSoftmaxForward (ooc_cuda_api.p_cudnnSoftmaxForward)
#undef cublasCreate
#define cublasCreate (ooc_cuda_api.p_cublasCreate)
#undef cublasDestroy
#define cublasDestroy (ooc_cuda_api.p_cublasDestroy)
#undef cublasSaxpy
#define cublasSaxpy (ooc_cuda_api.p_cublasSaxpy)
#undef cublasSdot
#define cublasSdot (ooc_cuda_api.p_cublasSdot)
#undef cublasSetMathMode
#define cublasSetMathMode (ooc_cuda_api.p_cublasSetMathMode)
#undef cublasSetStream
#define cublasSetStream (ooc_cuda_api.p_cublasSetStream)
#undef cublasSgemmStridedBatched
#define cublasSgemmStridedBatched (ooc_cuda_api.p_cublasSgemmStridedBatched)
#undef cublasSgemv
#define cublasSgemv (ooc_cuda_api.p_cublasSgemv)
#undef cublasSscal
#define cublasSscal (ooc_cuda_api.p_cublasSscal)

#endif /* OOC_CUDA_API_LOADER */

#endif
