/* executor/cuda_api.h — the CUDA runtime, cuDNN and cuBLAS entry points the
 * cuda backend calls (executor/cuda.c), loaded with dlopen when the backend
 * is first probed, not linked.
 *
 * Why: linking them made every oocsim process, and every test, map
 * libcublasLt and the rest at start-up whether or not it ran on a GPU:
 * 0.07 to 0.25 s and 224 MB resident before main() on the 2-core build
 * machine, against 2 ms and 7 MB without them. Now only `--backend cuda`
 * pays.
 *
 * Include after <cuda_runtime_api.h>, <cudnn.h> and <cublas_v2.h>, in
 * executor/cuda.c and executor/cuda_api.c only: each entry point below is
 * then a macro that calls through the table, so the backend's code reads
 * as plain CUDA. A name missing from the table is a link error (nothing
 * links the libraries), a name the table has but the code does not call
 * costs one dlsym. Names are the ones the code spells: cuBLAS's v2 API
 * maps cublasCreate to cublasCreate_v2 in its header: the table's type
 * follows that expansion and its symbol names it.
 */
#ifndef OOC_EXECUTOR_CUDA_API_H
#define OOC_EXECUTOR_CUDA_API_H

#include "base/util.h"

enum { OOC_CU_RT, OOC_CU_DNN, OOC_CU_BLAS, OOC_CU_NLIBS };

/* X(library, name, symbol) for each entry point. */
#define OOC_CUDA_API(X) \
  X(OOC_CU_RT, cudaDeviceSynchronize, "cudaDeviceSynchronize") \
  X(OOC_CU_RT, cudaEventCreate, "cudaEventCreate") \
  X(OOC_CU_RT, cudaEventDestroy, "cudaEventDestroy") \
  X(OOC_CU_RT, cudaEventRecord, "cudaEventRecord") \
  X(OOC_CU_RT, cudaEventSynchronize, "cudaEventSynchronize") \
  X(OOC_CU_RT, cudaFree, "cudaFree") \
  X(OOC_CU_RT, cudaFreeHost, "cudaFreeHost") \
  X(OOC_CU_RT, cudaGetDeviceCount, "cudaGetDeviceCount") \
  X(OOC_CU_RT, cudaGetDeviceProperties, "cudaGetDeviceProperties") \
  X(OOC_CU_RT, cudaGetDriverEntryPointByVersion, "cudaGetDriverEntryPointByVersion") \
  X(OOC_CU_RT, cudaGetErrorString, "cudaGetErrorString") \
  X(OOC_CU_RT, cudaHostAlloc, "cudaHostAlloc") \
  X(OOC_CU_RT, cudaMalloc, "cudaMalloc") \
  X(OOC_CU_RT, cudaMemcpy, "cudaMemcpy") \
  X(OOC_CU_RT, cudaMemcpyAsync, "cudaMemcpyAsync") \
  X(OOC_CU_RT, cudaMemsetAsync, "cudaMemsetAsync") \
  X(OOC_CU_RT, cudaRuntimeGetVersion, "cudaRuntimeGetVersion") \
  X(OOC_CU_RT, cudaSetDevice, "cudaSetDevice") \
  X(OOC_CU_RT, cudaStreamCreateWithFlags, "cudaStreamCreateWithFlags") \
  X(OOC_CU_RT, cudaStreamDestroy, "cudaStreamDestroy") \
  X(OOC_CU_RT, cudaStreamSynchronize, "cudaStreamSynchronize") \
  X(OOC_CU_DNN, cudnnActivationBackward, "cudnnActivationBackward") \
  X(OOC_CU_DNN, cudnnActivationForward, "cudnnActivationForward") \
  X(OOC_CU_DNN, cudnnAddTensor, "cudnnAddTensor") \
  X(OOC_CU_DNN, cudnnBatchNormalizationBackward, "cudnnBatchNormalizationBackward") \
  X(OOC_CU_DNN, cudnnBatchNormalizationForwardTraining, "cudnnBatchNormalizationForwardTraining") \
  X(OOC_CU_DNN, cudnnConvolutionBackwardBias, "cudnnConvolutionBackwardBias") \
  X(OOC_CU_DNN, cudnnConvolutionBackwardData, "cudnnConvolutionBackwardData") \
  X(OOC_CU_DNN, cudnnConvolutionBackwardFilter, "cudnnConvolutionBackwardFilter") \
  X(OOC_CU_DNN, cudnnConvolutionForward, "cudnnConvolutionForward") \
  X(OOC_CU_DNN, cudnnCreate, "cudnnCreate") \
  X(OOC_CU_DNN, cudnnCreateActivationDescriptor, "cudnnCreateActivationDescriptor") \
  X(OOC_CU_DNN, cudnnCreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor") \
  X(OOC_CU_DNN, cudnnCreateFilterDescriptor, "cudnnCreateFilterDescriptor") \
  X(OOC_CU_DNN, cudnnCreateLRNDescriptor, "cudnnCreateLRNDescriptor") \
  X(OOC_CU_DNN, cudnnCreatePoolingDescriptor, "cudnnCreatePoolingDescriptor") \
  X(OOC_CU_DNN, cudnnCreateTensorDescriptor, "cudnnCreateTensorDescriptor") \
  X(OOC_CU_DNN, cudnnDeriveBNTensorDescriptor, "cudnnDeriveBNTensorDescriptor") \
  X(OOC_CU_DNN, cudnnDestroy, "cudnnDestroy") \
  X(OOC_CU_DNN, cudnnDestroyActivationDescriptor, "cudnnDestroyActivationDescriptor") \
  X(OOC_CU_DNN, cudnnDestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor") \
  X(OOC_CU_DNN, cudnnDestroyFilterDescriptor, "cudnnDestroyFilterDescriptor") \
  X(OOC_CU_DNN, cudnnDestroyLRNDescriptor, "cudnnDestroyLRNDescriptor") \
  X(OOC_CU_DNN, cudnnDestroyPoolingDescriptor, "cudnnDestroyPoolingDescriptor") \
  X(OOC_CU_DNN, cudnnDestroyTensorDescriptor, "cudnnDestroyTensorDescriptor") \
  X(OOC_CU_DNN, cudnnGetConvolutionBackwardDataWorkspaceSize, "cudnnGetConvolutionBackwardDataWorkspaceSize") \
  X(OOC_CU_DNN, cudnnGetConvolutionBackwardFilterWorkspaceSize, "cudnnGetConvolutionBackwardFilterWorkspaceSize") \
  X(OOC_CU_DNN, cudnnGetConvolutionForwardWorkspaceSize, "cudnnGetConvolutionForwardWorkspaceSize") \
  X(OOC_CU_DNN, cudnnGetErrorString, "cudnnGetErrorString") \
  X(OOC_CU_DNN, cudnnGetPoolingNdForwardOutputDim, "cudnnGetPoolingNdForwardOutputDim") \
  X(OOC_CU_DNN, cudnnGetVersion, "cudnnGetVersion") \
  X(OOC_CU_DNN, cudnnLRNCrossChannelBackward, "cudnnLRNCrossChannelBackward") \
  X(OOC_CU_DNN, cudnnLRNCrossChannelForward, "cudnnLRNCrossChannelForward") \
  X(OOC_CU_DNN, cudnnPoolingBackward, "cudnnPoolingBackward") \
  X(OOC_CU_DNN, cudnnPoolingForward, "cudnnPoolingForward") \
  X(OOC_CU_DNN, cudnnSetActivationDescriptor, "cudnnSetActivationDescriptor") \
  X(OOC_CU_DNN, cudnnSetConvolutionGroupCount, "cudnnSetConvolutionGroupCount") \
  X(OOC_CU_DNN, cudnnSetConvolutionMathType, "cudnnSetConvolutionMathType") \
  X(OOC_CU_DNN, cudnnSetConvolutionNdDescriptor, "cudnnSetConvolutionNdDescriptor") \
  X(OOC_CU_DNN, cudnnSetFilterNdDescriptor, "cudnnSetFilterNdDescriptor") \
  X(OOC_CU_DNN, cudnnSetLRNDescriptor, "cudnnSetLRNDescriptor") \
  X(OOC_CU_DNN, cudnnSetPoolingNdDescriptor, "cudnnSetPoolingNdDescriptor") \
  X(OOC_CU_DNN, cudnnSetStream, "cudnnSetStream") \
  X(OOC_CU_DNN, cudnnSetTensorNdDescriptor, "cudnnSetTensorNdDescriptor") \
  X(OOC_CU_DNN, cudnnSoftmaxForward, "cudnnSoftmaxForward") \
  X(OOC_CU_BLAS, cublasCreate, "cublasCreate_v2") \
  X(OOC_CU_BLAS, cublasDestroy, "cublasDestroy_v2") \
  X(OOC_CU_BLAS, cublasSaxpy, "cublasSaxpy_v2") \
  X(OOC_CU_BLAS, cublasSdot, "cublasSdot_v2") \
  X(OOC_CU_BLAS, cublasSetMathMode, "cublasSetMathMode") \
  X(OOC_CU_BLAS, cublasSetStream, "cublasSetStream_v2") \
  X(OOC_CU_BLAS, cublasSgemmStridedBatched, "cublasSgemmStridedBatched") \
  X(OOC_CU_BLAS, cublasSgemv, "cublasSgemv_v2") \
  X(OOC_CU_BLAS, cublasSscal, "cublasSscal_v2")

struct ooc_cuda_api {
#define OOC_CUDA_API_MEMBER(lib, f, sym) __typeof__(&f) p_##f;
  OOC_CUDA_API(OOC_CUDA_API_MEMBER)
#undef OOC_CUDA_API_MEMBER
};

extern struct ooc_cuda_api ooc_cuda_api;

/* Load the three libraries and every entry point, once per process (later
 * calls return the first's answer). OOC_EUNSUP, naming the library or
 * symbol and dlerror()'s reason, when one is missing: the backend is then
 * unusable, as without a GPU. Thread-safe. */
int ooc_cuda_api_load(ooc_err *err);

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

#endif
