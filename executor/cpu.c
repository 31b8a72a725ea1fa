/* executor/cpu.c — the cpu backend: host memory plays the device, oneDNN
 * the kernels (docs/executor.md, "The cpu backend").
 *
 * One idea: the driver actions an allocator policy sends are performed
 * with the kernel's own virtual memory calls, so that what a GPU driver
 * does is done for real: a segment (cudaMalloc) is an anonymous mmap; a
 * virtual range (cuMemAddressReserve) an mmap(PROT_NONE, MAP_NORESERVE)
 * reservation; a physical chunk (cuMemCreate) a memfd of its size; mapping
 * it (cuMemMap + cuMemSetAccess) an mmap(MAP_FIXED | MAP_SHARED) of the
 * memfd inside the range, so the same physical pages appear at whatever
 * address the policy chose; unmapping maps PROT_NONE anonymous memory back
 * over it, keeping the reservation. Pinned host buffers are page-aligned
 * malloc + mlock; when mlock is refused (RLIMIT_MEMLOCK, commonly 8 MiB
 * for a user) the buffer is used pageable and the result says how many
 * bytes were (the copies are memcpy either way). Copies are memcpy by the
 * copy stream's thread, optionally paced to a link rate: in 1 MiB pieces,
 * each followed by a sleep until the time the rate allows, so that a
 * slower host link can be emulated. Kernels run on the compute thread,
 * with oneDNN's OpenMP thread count fixed (default 1) so results are
 * deterministic and bit-identical between plans.
 *
 * Cost: one system call per driver action; a copy costs memcpy (and the
 * sleeps of its pacing); kernels cost what oneDNN does.
 */
#define _GNU_SOURCE 1   /* memfd_create (glibc 2.27, Linux 3.17) */
#include "config.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "executor/cpu.h"

#define PACE_CHUNK ((uint64_t)1 << 20)

static int
cpu_probe(ooc_err *err)
{
  return OOC_OK;
}

static void
cpu_destroy(void *state)
{
  cpu_state *st = state;
  int l;

  if (st->lay != NULL)
    for (l = 0; l < st->m->n_layers; l++) {
      cpu_prim_free(&st->lay[l].f);
      cpu_prim_free(&st->lay[l].b1);
      cpu_prim_free(&st->lay[l].b2);
      free(st->lay[l].stats);
      free(st->lay[l].pws);
    }
  free(st->lay);
  free(st->scratch);
  free(st->tmp);
  free(st->hv);
  if (st->strm != NULL)
    dnnl_stream_destroy(st->strm);
  if (st->eng != NULL)
    dnnl_engine_destroy(st->eng);
}

static int
cpu_create(void *state, const ooc_exec_env *env, ooc_err *err)
{
  cpu_state *st = state;

  st->m = env->model;
  st->p = env->program;
  st->threads = env->threads > 0 ? env->threads : 1;
  st->link_Bpns = env->link_GBps;   /* GB/s = bytes per ns */
  st->seed = env->seed;
  st->lay = calloc((size_t)st->m->n_layers, sizeof *st->lay);
  if (st->lay == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "cpu: out of memory");
  if (dnnl_engine_create(&st->eng, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&st->strm, st->eng, dnnl_stream_default_flags)
          != dnnl_success) {
    cpu_destroy(st);
    return ooc_err_set(err, OOC_EUNSUP, "cpu: oneDNN could not open a CPU "
                       "engine and stream");
  }
  return OOC_OK;
}

static int
cpu_thread_start(void *state, int stream, ooc_err *err)
{
  cpu_state *st = state;

  /* The kernels, and the host stream's optimizer steps (an offloaded
   * layer's, docs/offload.md), each on the --threads cores: the host
   * shares this machine with the "device". */
  if (stream == OOC_STREAM_COMPUTE || stream == OOC_STREAM_HOST)
    omp_set_num_threads(st->threads);
  return OOC_OK;
}

static int
sys_fail(const ooc_drv_action *a, const char *call, ooc_err *err)
{
  return ooc_err_set(err, OOC_ENOMEM, "cpu: %s for %s id %d (%llu bytes) "
                     "failed: %s", call,
                     ooc_drv_kind_name((ooc_drv_kind)a->kind), a->id,
                     (unsigned long long)a->bytes, strerror(errno));
}

static int
cpu_mem(void *state, const ooc_drv_action *a, ooc_exec_region *r,
        const ooc_exec_region *range, ooc_err *err)
{
  long page = sysconf(_SC_PAGESIZE);
  void *q, *at;
  int fd;

  switch (a->kind) {
  case OOC_DRV_SEG_MALLOC:
    q = mmap(NULL, a->bytes ? a->bytes : 1, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED)
      return sys_fail(a, "mmap", err);
    r->base = q;
    return OOC_OK;
  case OOC_DRV_SEG_FREE:
  case OOC_DRV_VA_FREE:
    if (munmap(r->base, a->bytes ? a->bytes : 1) != 0)
      return sys_fail(a, "munmap", err);
    r->base = NULL;
    return OOC_OK;
  case OOC_DRV_VA_RESERVE:
    q = mmap(NULL, a->bytes ? a->bytes : 1, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (q == MAP_FAILED)
      return sys_fail(a, "mmap(PROT_NONE)", err);
    r->base = q;
    return OOC_OK;
  case OOC_DRV_CHUNK_CREATE:
    if (a->bytes == 0 || a->bytes % (uint64_t)page != 0)
      return ooc_err_set(err, OOC_EINVAL, "cpu: chunk of %llu bytes is not "
                         "a whole number of %ld-byte pages: the cpu backend "
                         "maps chunks with mmap (choose a va chunk that is)",
                         (unsigned long long)a->bytes, page);
    fd = memfd_create("oocsim-chunk", MFD_CLOEXEC);
    if (fd < 0)
      return sys_fail(a, "memfd_create", err);
    if (ftruncate(fd, (off_t)a->bytes) != 0) {
      int e = errno;
      close(fd);
      errno = e;
      return sys_fail(a, "ftruncate", err);
    }
    r->handle = (uint64_t)fd;
    return OOC_OK;
  case OOC_DRV_CHUNK_RELEASE:
    close((int)r->handle);
    return OOC_OK;
  case OOC_DRV_CHUNK_MAP:
  case OOC_DRV_CHUNK_UNMAP:
    at = (char *)range->base + (a->addr - range->addr);
    if ((uintptr_t)at % (uintptr_t)page != 0)
      return ooc_err_set(err, OOC_EINVAL, "cpu: chunk %d maps at offset "
                         "%llu of its range, not a page boundary", a->id,
                         (unsigned long long)(a->addr - range->addr));
    if (a->kind == OOC_DRV_CHUNK_MAP)
      q = mmap(at, r->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
               (int)r->handle, 0);
    else
      q = mmap(at, r->bytes, PROT_NONE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
               0);
    if (q == MAP_FAILED)
      return sys_fail(a, "mmap(MAP_FIXED)", err);
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "cpu: unknown driver action %d",
                       a->kind);
  }
}

static int
cpu_host_alloc(void *state, uint64_t bytes, void **p, int *pinned,
               ooc_err *err)
{
  cpu_state *st = state;
  long page = sysconf(_SC_PAGESIZE);
  size_t n = bytes ? (size_t)bytes : 1;

  if (posix_memalign(p, (size_t)page, n) != 0)
    return ooc_err_set(err, OOC_ENOMEM, "cpu: cannot allocate a %llu-byte "
                       "host buffer", (unsigned long long)bytes);
  *pinned = mlock(*p, n) == 0;
  if (!*pinned && st->n_unpinned++ == 0)
    snprintf(st->pin_why, sizeof st->pin_why, "%s", strerror(errno));
  return OOC_OK;
}

static void
cpu_host_free(void *state, void *p, uint64_t bytes, int pinned)
{
  if (pinned)
    munlock(p, bytes ? (size_t)bytes : 1);
  free(p);
}

static int
cpu_upload(void *state, void *dev, const void *host, uint64_t bytes,
           ooc_err *err)
{
  if (bytes > 0)
    memcpy(dev, host, bytes);
  return OOC_OK;
}

static int
cpu_download(void *state, void *host, const void *dev, uint64_t bytes,
             ooc_err *err)
{
  if (bytes > 0)
    memcpy(host, dev, bytes);
  return OOC_OK;
}

static int64_t
mono_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
cpu_copy(void *state, int stream, void *dst, const void *src, uint64_t bytes,
         ooc_err *err)
{
  cpu_state *st = state;
  uint64_t off, n;
  int64_t t0;

  if (bytes == 0)
    return OOC_OK;
  if (st->link_Bpns <= 0) {
    memcpy(dst, src, bytes);
    return OOC_OK;
  }
  t0 = mono_ns();
  for (off = 0; off < bytes; off += n) {
    int64_t due, now;
    n = bytes - off < PACE_CHUNK ? bytes - off : PACE_CHUNK;
    memcpy((char *)dst + off, (const char *)src + off, n);
    due = t0 + (int64_t)((double)(off + n) / st->link_Bpns);
    while ((now = mono_ns()) < due) {
      struct timespec ts = { .tv_sec = (due - now) / 1000000000,
                             .tv_nsec = (due - now) % 1000000000 };
      nanosleep(&ts, NULL);
    }
  }
  return OOC_OK;
}

static int
cpu_sync(void *state, ooc_err *err)
{
  cpu_state *st = state;

  return dnnl_stream_wait(st->strm) == dnnl_success
             ? OOC_OK
             : ooc_err_set(err, OOC_EINVAL, "cpu: dnnl_stream_wait failed");
}

static int
cpu_prepare(void *state, const ooc_kernel *k, ooc_err *err)
{
  cpu_state *st = state;

  if (k->phase != OOC_PH_UPDATE && cpu_dnnl_has(&st->m->layers[k->layer]))
    return cpu_dnnl_prepare(st, k, err);
  return cpu_kern_prepare(st, k, err);
}

static int
cpu_compute(void *state, const ooc_kernel *k, void *const *ptr,
            int iteration, ooc_err *err)
{
  cpu_state *st = state;

  if (k->phase == OOC_PH_BWD && k->dout_fresh &&
      st->m->layers[k->layer].op != OOC_OPK_SOFTMAX_CE)
    memset(ptr[k->dout], 0, st->p->tensors[k->dout].bytes);
  if (k->phase != OOC_PH_UPDATE && cpu_dnnl_has(&st->m->layers[k->layer]))
    return cpu_dnnl_run(st, k, ptr, err);
  return cpu_kern_run(st, k, ptr, iteration, err);
}

static void
cpu_info(const void *state, ooc_exec_backend_info *out)
{
  const cpu_state *st = state;
  const dnnl_version_t *v = dnnl_version();
  int n;

  out->side_bytes = st->scratch_bytes + st->tmp_bytes + st->layer_side;
  out->loss = st->loss;
  n = snprintf(out->note, sizeof out->note, "oneDNN %d.%d.%d (%s), %d "
               "kernel thread%s", v->major, v->minor, v->patch,
               v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other runtime",
               st->threads, st->threads == 1 ? "" : "s");
  if (st->n_unpinned > 0 && n > 0 && (size_t)n < sizeof out->note)
    snprintf(out->note + n, sizeof out->note - (size_t)n, "; %d host "
             "buffer%s pageable (mlock: %s)", st->n_unpinned,
             st->n_unpinned == 1 ? "" : "s", st->pin_why);
}

const ooc_exec_backend ooc_exec_cpu = {
  .name = "cpu",
  .summary = "host memory as the device (mmap segments, memfd chunks), "
             "oneDNN kernels, memcpy copies optionally paced to a link rate",
  .state_size = sizeof(cpu_state),
  .host_visible = 1,
  .probe = cpu_probe,
  .create = cpu_create,
  .destroy = cpu_destroy,
  .thread_start = cpu_thread_start,
  .mem = cpu_mem,
  .host_alloc = cpu_host_alloc,
  .host_free = cpu_host_free,
  .upload = cpu_upload,
  .download = cpu_download,
  .prepare = cpu_prepare,
  .compute = cpu_compute,
  .copy = cpu_copy,
  .sync = cpu_sync,
  .info = cpu_info,
};
