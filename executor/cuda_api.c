/* executor/cuda_api.c — loads the CUDA runtime, cuDNN and cuBLAS for the
 * cuda backend with dlopen (executor/cuda_api.h says why).
 *
 * The libraries are the major versions the backend was compiled against
 * (libcudart.so.<CUDART_VERSION / 1000>, libcudnn.so.<CUDNN_MAJOR>,
 * libcublas.so.<CUBLAS_VER_MAJOR>), found where linking found them:
 * LD_LIBRARY_PATH, then the CUDA library folder configure found (the
 * programs' run path), then the ld.so cache; and, should the run path be
 * gone (a copied binary), that folder by name (OOC_CUDA_LIBDIR). They
 * stay loaded until the process ends.
 *
 * Cost: once per process, the libraries' own start-up (what every process
 * paid before, linked); nothing afterwards but an indirect call.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cublas_v2.h>

/* The table without the call macros: a name here is the header's own, so
 * a name a header maps to another symbol is looked up as that one. */
#define OOC_CUDA_API_LOADER
#include "executor/cuda_api.h"

#define STR(x) #x
#define SYMBOL(f) STR(f)        /* f macro-expanded first */

#ifndef OOC_CUDA_LIBDIR
#define OOC_CUDA_LIBDIR ""
#endif

struct ooc_cuda_api ooc_cuda_api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc;
static char load_msg[512];

static void *
open_lib(const char *stem, int major)
{
  char name[64], path[4096];
  const char *why;
  void *h;

  snprintf(name, sizeof name, "lib%s.so.%d", stem, major);
  if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != NULL)
    return h;
  /* Its reason, not the fallback's. */
  why = dlerror();
  snprintf(load_msg, sizeof load_msg, "cuda: cannot load %s (%s)", name,
           why != NULL ? why : "not found");
  load_rc = OOC_EUNSUP;
  if (OOC_CUDA_LIBDIR[0] != '\0' &&
      (size_t)snprintf(path, sizeof path, "%s/%s", OOC_CUDA_LIBDIR, name)
          < sizeof path &&
      (h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL)
    load_rc = OOC_OK;
  return h;
}

static void
load(void)
{
  void *lib[OOC_CU_NLIBS];
  void *fn;

  if ((lib[OOC_CU_RT] = open_lib("cudart", CUDART_VERSION / 1000)) == NULL ||
      (lib[OOC_CU_DNN] = open_lib("cudnn", CUDNN_MAJOR)) == NULL ||
      (lib[OOC_CU_BLAS] = open_lib("cublas", CUBLAS_VER_MAJOR)) == NULL)
    return;
#define LOAD(l, f)                                                           \
  if ((fn = dlsym(lib[l], SYMBOL(f))) == NULL) {                             \
    const char *why = dlerror();                                             \
    load_rc = OOC_EUNSUP;                                                    \
    snprintf(load_msg, sizeof load_msg, "cuda: the %s library has no %s "   \
             "(%s)", l == OOC_CU_RT ? "CUDA runtime"                         \
                     : l == OOC_CU_DNN ? "cuDNN" : "cuBLAS",                 \
             SYMBOL(f), why != NULL ? why : "not found");                    \
    return;                                                                  \
  }                                                                          \
  memcpy(&ooc_cuda_api.p_##f, &fn, sizeof fn);
  OOC_CUDA_API(LOAD)
#undef LOAD
}

int
ooc_cuda_api_load(ooc_err *err)
{
  pthread_once(&once, load);
  return load_rc != OOC_OK ? ooc_err_set(err, load_rc, "%s", load_msg)
                           : OOC_OK;
}
