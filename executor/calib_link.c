/* executor/calib_link.c — measure the host<->device link of a real GPU and
 * print the "link" object of a hardware profile (hwprofiles/README.md).
 *
 * One idea: time pinned cudaMemcpyAsync copies of 4 KiB .. 1 GiB in each
 * direction with CUDA events, take the median of several repetitions per
 * size, and fit t = latency + size / bandwidth by weighted least squares
 * (gsl_fit_wlinear, weights 1/t^2 so that every size counts by its relative
 * error rather than the largest copies dominating). Then run H2D and D2H at
 * once on two streams to measure the shared-link rates, and time pageable
 * copies at the largest size. The result is a JSON fragment on stdout with
 * its provenance (GPU, PCI bus, date, CUDA and NVIDIA driver versions) under
 * "_measured"; a per-size table goes to stderr. docs/calibration.md says how
 * to use it.
 *
 * Exit status: 0 on success, 1 on a CUDA or usage error, 77 (the Automake
 * "skip" status) with "no CUDA device: skipping" when cudaGetDeviceCount
 * fails or finds no device.
 *
 * Ownership: all buffers and streams are created and released in main().
 * Cost: about 2 GiB of pinned host memory and 2 GiB of device memory (less
 * with --max), a few seconds of copies.
 *
 * Issue 2 item 9: the measurement that becomes the executor's calibration
 * mode; docs/hardware.md gives the public figures it replaces.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <gsl/gsl_fit.h>

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)
#define MAX_SIZES 40
#define MAX_REPS 64

#define CK(call)                                                          \
  do {                                                                    \
    cudaError_t e_ = (call);                                              \
    if (e_ != cudaSuccess) {                                              \
      fprintf(stderr, "oocsim-calib-link: %s: %s\n", #call,               \
              cudaGetErrorString(e_));                                    \
      goto fail;                                                          \
    }                                                                     \
  } while (0)

typedef struct link_bufs {
  void *h_src, *h_dst;        /* pinned host buffers */
  void *d_src, *d_dst;        /* device buffers */
  char *pageable;             /* ordinary malloc'ed host memory */
  cudaStream_t s_h2d, s_d2h;
  cudaEvent_t ev[4];
  uint64_t max;
} link_bufs;

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Repetitions per size: many for small copies, a few for large ones. */
static int
reps_for(uint64_t size)
{
  if (size <= 1 * MiB)
    return 50;
  if (size <= 64 * MiB)
    return 20;
  return 5;
}

/* Median seconds of one copy of `size` bytes; dir 0 = H2D, 1 = D2H.
 * pinned = 0 copies from/to pageable memory. Returns 0 or -1. */
static int
time_copy(link_bufs *b, int dir, int pinned, uint64_t size, int reps,
          double *out)
{
  double t[MAX_REPS];
  cudaStream_t s = dir == 0 ? b->s_h2d : b->s_d2h;
  void *host = pinned ? (dir == 0 ? b->h_src : b->h_dst) : b->pageable;
  int r;

  if (reps > MAX_REPS)
    reps = MAX_REPS;
  for (r = -1; r < reps; r++) {     /* r = -1: warm-up, not timed */
    float ms;
    CK(cudaEventRecord(b->ev[0], s));
    if (dir == 0)
      CK(cudaMemcpyAsync(b->d_dst, host, size, cudaMemcpyHostToDevice, s));
    else
      CK(cudaMemcpyAsync(host, b->d_src, size, cudaMemcpyDeviceToHost, s));
    CK(cudaEventRecord(b->ev[1], s));
    CK(cudaEventSynchronize(b->ev[1]));
    CK(cudaEventElapsedTime(&ms, b->ev[0], b->ev[1]));
    if (r >= 0)
      t[r] = 1e-3 * (double)ms;
  }
  *out = median(t, reps);
  return 0;
fail:
  return -1;
}

/* H2D and D2H at once: `n` copies of `chunk` bytes queued on each stream
 * after a common start; rates in B/s of each direction. */
static int
time_duplex(link_bufs *b, uint64_t chunk, int n, int reps, double *h2d,
            double *d2h)
{
  double th[MAX_REPS], td[MAX_REPS];
  int r, i;

  if (reps > MAX_REPS)
    reps = MAX_REPS;
  for (r = -1; r < reps; r++) {
    float mh, md;
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(b->ev[0], b->s_h2d));
    CK(cudaStreamWaitEvent(b->s_d2h, b->ev[0], 0));
    CK(cudaEventRecord(b->ev[2], b->s_d2h));
    for (i = 0; i < n; i++) {
      CK(cudaMemcpyAsync(b->d_dst, b->h_src, chunk, cudaMemcpyHostToDevice,
                         b->s_h2d));
      CK(cudaMemcpyAsync(b->h_dst, b->d_src, chunk, cudaMemcpyDeviceToHost,
                         b->s_d2h));
    }
    CK(cudaEventRecord(b->ev[1], b->s_h2d));
    CK(cudaEventRecord(b->ev[3], b->s_d2h));
    CK(cudaEventSynchronize(b->ev[1]));
    CK(cudaEventSynchronize(b->ev[3]));
    CK(cudaEventElapsedTime(&mh, b->ev[0], b->ev[1]));
    CK(cudaEventElapsedTime(&md, b->ev[2], b->ev[3]));
    if (r >= 0) {
      th[r] = 1e-3 * (double)mh;
      td[r] = 1e-3 * (double)md;
    }
  }
  *h2d = (double)chunk * n / median(th, reps);
  *d2h = (double)chunk * n / median(td, reps);
  return 0;
fail:
  return -1;
}

/* Weighted least squares of t = L + S / B. Returns 0, or -1 if the fit is
 * degenerate. maxrel: the largest relative residual. */
static int
fit_link(const double *size, const double *t, int n, double *lat,
         double *bw, double *maxrel)
{
  double w[MAX_SIZES], c0, c1, cov00, cov01, cov11, chisq;
  int i;

  for (i = 0; i < n; i++)
    w[i] = 1.0 / (t[i] * t[i]);
  if (gsl_fit_wlinear(size, 1, w, 1, t, 1, (size_t)n, &c0, &c1, &cov00,
                      &cov01, &cov11, &chisq) != 0 || !(c1 > 0))
    return -1;
  *lat = c0 > 0 ? c0 : 0;
  *bw = 1.0 / c1;
  *maxrel = 0;
  for (i = 0; i < n; i++) {
    double pred = *lat + size[i] / *bw;
    double rel = (pred - t[i]) / t[i];
    if (rel < 0)
      rel = -rel;
    if (rel > *maxrel)
      *maxrel = rel;
  }
  return 0;
}

/* "550.54.15" from /proc/driver/nvidia/version, or "unknown". */
static void
nvidia_driver(char *buf, size_t n)
{
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  char line[512], *p;

  snprintf(buf, n, "unknown");
  if (f == NULL)
    return;
  if (fgets(line, sizeof line, f) != NULL &&
      (p = strstr(line, "Kernel Module")) != NULL) {
    p += strlen("Kernel Module");
    while (*p == ' ' || *p == '\t')
      p++;
    snprintf(buf, n, "%.*s", (int)strcspn(p, " \t\n"), p);
  }
  fclose(f);
}

static void
usage(FILE *f)
{
  fprintf(f,
          "usage: oocsim-calib-link [--device N] [--max-MiB M]\n"
          "Measures pinned and pageable host<->device copies (4 KiB up to M "
          "MiB,\ndefault 1024) and prints the \"link\" object of a hardware "
          "profile.\n");
}

int
main(int argc, char **argv)
{
  link_bufs b = { 0 };
  double sz[MAX_SIZES], th[MAX_SIZES], td[MAX_SIZES];
  double lat_h, lat_d, bw_h, bw_d, rel_h, rel_d, dup_h, dup_d, tp;
  double pg_h = 0, pg_d = 0;
  char name[256], bus[64], drv[64], host[128], date[32];
  int dev = 0, ndev = 0, engines = 0, n = 0, i, drv_v = 0, rt_v = 0;
  uint64_t size, max_req = GiB, chunk;
  struct cudaDeviceProp prop;
  time_t now;
  int status = 1;

  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      char *end;
      long d = strtol(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0' || d < 0 || d > 1024) {
        fprintf(stderr, "oocsim-calib-link: --device: '%s' is not a device "
                        "number\n", argv[i]);
        return 1;
      }
      dev = (int)d;
    } else if (strcmp(argv[i], "--max-MiB") == 0 && i + 1 < argc) {
      char *end;
      long m = strtol(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0' || m < 1 || m > 65536) {
        fprintf(stderr, "oocsim-calib-link: --max-MiB: must be 1..65536\n");
        return 1;
      }
      max_req = (uint64_t)m * MiB;
    } else {
      usage(stderr);
      return 1;
    }
  }
  {
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
      fprintf(stderr, "oocsim-calib-link: no CUDA device: skipping (%s)\n",
              e != cudaSuccess ? cudaGetErrorString(e)
                               : "cudaGetDeviceCount found 0 devices");
      return 77;
    }
  }
  if (dev < 0 || dev >= ndev) {
    fprintf(stderr, "oocsim-calib-link: --device %d: only %d device(s)\n",
            dev, ndev);
    return 1;
  }
  CK(cudaSetDevice(dev));
  CK(cudaGetDeviceProperties(&prop, dev));
  snprintf(name, sizeof name, "%s", prop.name);
  CK(cudaDeviceGetAttribute(&engines, cudaDevAttrAsyncEngineCount, dev));
  CK(cudaDeviceGetPCIBusId(bus, (int)sizeof bus, dev));
  CK(cudaDriverGetVersion(&drv_v));
  CK(cudaRuntimeGetVersion(&rt_v));
  nvidia_driver(drv, sizeof drv);
  if (gethostname(host, sizeof host) != 0)
    snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

  /* Buffers: halve the largest size until the pinned allocation succeeds. */
  for (b.max = max_req; b.max >= 4 * KiB; b.max /= 2) {
    if (cudaMallocHost(&b.h_src, b.max) == cudaSuccess &&
        cudaMallocHost(&b.h_dst, b.max) == cudaSuccess &&
        cudaMalloc(&b.d_src, b.max) == cudaSuccess &&
        cudaMalloc(&b.d_dst, b.max) == cudaSuccess)
      break;
    cudaFreeHost(b.h_src);
    cudaFreeHost(b.h_dst);
    cudaFree(b.d_src);
    cudaFree(b.d_dst);
    b.h_src = b.h_dst = b.d_src = b.d_dst = NULL;
    (void)cudaGetLastError();
  }
  if (b.h_src == NULL) {
    fprintf(stderr, "oocsim-calib-link: cannot allocate copy buffers\n");
    goto fail;
  }
  b.pageable = malloc(b.max);
  if (b.pageable == NULL) {
    fprintf(stderr, "oocsim-calib-link: %s\n", strerror(errno));
    goto fail;
  }
  memset(b.h_src, 1, b.max);
  memset(b.h_dst, 2, b.max);
  memset(b.pageable, 3, b.max);
  CK(cudaMemset(b.d_src, 4, b.max));
  CK(cudaStreamCreateWithFlags(&b.s_h2d, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b.s_d2h, cudaStreamNonBlocking));
  for (i = 0; i < 4; i++)
    CK(cudaEventCreate(&b.ev[i]));

  /* One direction at a time, every size. */
  fprintf(stderr, "# %s (%s), %d copy engines\n# %12s %12s %12s\n", name, bus,
          engines, "bytes", "h2d_us", "d2h_us");
  for (size = 4 * KiB; size <= b.max && n < MAX_SIZES; size *= 2, n++) {
    sz[n] = (double)size;
    if (time_copy(&b, 0, 1, size, reps_for(size), &th[n]) < 0 ||
        time_copy(&b, 1, 1, size, reps_for(size), &td[n]) < 0)
      goto fail;
    fprintf(stderr, "  %12llu %12.2f %12.2f\n", (unsigned long long)size,
            th[n] * 1e6, td[n] * 1e6);
  }
  if (n < 3 || fit_link(sz, th, n, &lat_h, &bw_h, &rel_h) < 0 ||
      fit_link(sz, td, n, &lat_d, &bw_d, &rel_d) < 0) {
    fprintf(stderr, "oocsim-calib-link: too few sizes or a degenerate fit\n");
    goto fail;
  }
  /* Pageable: the largest size only. */
  if (time_copy(&b, 0, 0, b.max, 3, &tp) < 0)
    goto fail;
  pg_h = (double)b.max / tp;
  if (time_copy(&b, 1, 0, b.max, 3, &tp) < 0)
    goto fail;
  pg_d = (double)b.max / tp;
  /* Both directions at once: 8 copies of up to 256 MiB on each stream. */
  chunk = b.max < 256 * MiB ? b.max : 256 * MiB;
  if (time_duplex(&b, chunk, 8, 3, &dup_h, &dup_d) < 0)
    goto fail;

  printf("\"link\": {\n"
         "  \"h2d_GBps\": %.2f,\n  \"d2h_GBps\": %.2f,\n"
         "  \"h2d_pageable_GBps\": %.2f,\n  \"d2h_pageable_GBps\": %.2f,\n"
         "  \"duplex_h2d_GBps\": %.2f,\n  \"duplex_d2h_GBps\": %.2f,\n"
         "  \"latency_us\": %.2f,\n  \"copy_engines\": %d,\n",
         bw_h / 1e9, bw_d / 1e9, pg_h / 1e9, pg_d / 1e9, dup_h / 1e9,
         dup_d / 1e9, 0.5 * (lat_h + lat_d) * 1e6, engines < 1 ? 1 : engines);
  printf("  \"_measured\": {\n"
         "    \"tool\": \"oocsim-calib-link %s\",\n"
         "    \"gpu\": \"%s\",\n    \"pci_bus\": \"%s\",\n"
         "    \"host\": \"%s\",\n    \"date\": \"%s\",\n"
         "    \"nvidia_driver\": \"%s\",\n"
         "    \"cuda_driver_api\": \"%d.%d\",\n"
         "    \"cuda_runtime\": \"%d.%d\",\n"
         "    \"method\": \"pinned cudaMemcpyAsync, 4 KiB..%llu MiB, median "
         "of 5-50 per size, t = L + S/B by weighted least squares "
         "(gsl_fit_wlinear, w = 1/t^2); duplex: 8 x %llu MiB per direction "
         "on two streams; pageable at %llu MiB\",\n"
         "    \"h2d_latency_us\": %.2f,\n    \"d2h_latency_us\": %.2f,\n"
         "    \"h2d_fit_max_rel_residual\": %.3f,\n"
         "    \"d2h_fit_max_rel_residual\": %.3f\n  }\n}\n",
         PACKAGE_VERSION, name, bus, host, date, drv, drv_v / 1000,
         (drv_v % 1000) / 10, rt_v / 1000, (rt_v % 1000) / 10,
         (unsigned long long)(b.max / MiB), (unsigned long long)(chunk / MiB),
         (unsigned long long)(b.max / MiB), lat_h * 1e6, lat_d * 1e6, rel_h,
         rel_d);
  status = 0;
fail:
  for (i = 0; i < 4; i++)
    if (b.ev[i] != NULL)
      cudaEventDestroy(b.ev[i]);
  if (b.s_h2d != NULL)
    cudaStreamDestroy(b.s_h2d);
  if (b.s_d2h != NULL)
    cudaStreamDestroy(b.s_d2h);
  cudaFreeHost(b.h_src);
  cudaFreeHost(b.h_dst);
  cudaFree(b.d_src);
  cudaFree(b.d_dst);
  free(b.pageable);
  return status;
}
