/* cli/cmd_sweep.c — `oocsim sweep`: what-if grids over batch sizes,
 * profiles, --hw-set values, allocators, budgets and planners (sweep.h),
 * written as DIR/results.csv and DIR/results.json; `--merge` joins shards.
 *
 * Owner: report helper. The work is in sweep.c; this file parses options,
 * draws the progress bar (stderr, only when it is a terminal) and turns
 * errors into one "oocsim: ..." line.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "report/sweep.h"

/* Where a sweep writes when no -o is given. */
#define DEFAULT_DIR "sweep"

static void
usage(FILE *f)
{
  fprintf(f,
"Usage: oocsim sweep -m MODEL -b BATCHES --hw HW[,HW...] -p PLANNERS|all\n"
"                    [--allocator A[,A...]] [--budget SIZE[,SIZE...]]\n"
"                    [--hw-set KEY=V1,V2,...]... [--set K=V]... [--maxbatch]\n"
"                    [-j N] [--shard K/N] [--fresh] [-o DIR]\n"
"       oocsim sweep --merge DIR... -o DIR\n"
"\n"
"Run every point of a grid and write DIR/results.csv (one row per point:\n"
"the grid coordinates, then every summary field) and DIR/results.json.\n"
"\n"
"  -b, --batch LIST      batch sizes: 256 | 64,128,256 | A:B:STEP (64:1024:64)\n"
"      --hw LIST         hardware profiles (names or paths)\n"
"  -p, --planner LIST    planners, or 'all'\n"
"      --allocator LIST  allocator specs, e.g. caching,bestfit,\n"
"                        caching:expandable_segments (default caching)\n"
"      --budget LIST     device budgets (default: each profile's usable memory)\n"
"      --hw-set K=V,...  one more axis over a profile field, e.g.\n"
"                        link.h2d_GBps=8,16,32,64,128,450; K1+K2=V,... sets\n"
"                        both keys to each value\n"
"      --set K=V         model parameter (fixed for the whole grid)\n"
"      --maxbatch        each point is the largest trainable batch (no -b)\n"
"      --iterations N    timed iterations per simulation (default 2)\n"
"  -j, --jobs N          points run in parallel on N threads (default 1)\n"
"      --shard K/N       run only points with index %% N == K-1 (1 <= K <= N)\n"
"      --merge DIR...    join shard directories into -o DIR, in grid order\n"
"      --fresh           ignore rows already in DIR/results.csv\n"
"  -o, --output DIR      output directory (created if missing; default\n"
"                        ./" DEFAULT_DIR ", required with --merge)\n"
"\n"
"Grid order (the last varies fastest): hw, each --hw-set axis, allocator,\n"
"budget, planner, batch. Points already in DIR/results.csv (same grid\n"
"coordinates) are skipped, so an interrupted sweep resumes where it\n"
"stopped. A progress bar with ETA is drawn on stderr when it is a terminal.\n");
}

enum { OPT_HW = 1000, OPT_ALLOC, OPT_BUDGET, OPT_HWSET, OPT_SET, OPT_SHARD,
       OPT_MERGE, OPT_MAXBATCH, OPT_ITERS, OPT_FRESH, OPT_HELP };

static const struct option long_opts[] = {
  { "model", required_argument, NULL, 'm' },
  { "batch", required_argument, NULL, 'b' },
  { "hw", required_argument, NULL, OPT_HW },
  { "planner", required_argument, NULL, 'p' },
  { "allocator", required_argument, NULL, OPT_ALLOC },
  { "budget", required_argument, NULL, OPT_BUDGET },
  { "hw-set", required_argument, NULL, OPT_HWSET },
  { "set", required_argument, NULL, OPT_SET },
  { "jobs", required_argument, NULL, 'j' },
  { "shard", required_argument, NULL, OPT_SHARD },
  { "merge", no_argument, NULL, OPT_MERGE },
  { "maxbatch", no_argument, NULL, OPT_MAXBATCH },
  { "iterations", required_argument, NULL, OPT_ITERS },
  { "fresh", no_argument, NULL, OPT_FRESH },
  { "output", required_argument, NULL, 'o' },
  { "help", no_argument, NULL, OPT_HELP },
  { NULL, 0, NULL, 0 }
};

struct bar {
  int last_len;
};

/* "[#########.........]  12/64 points  0:12 elapsed, ETA 0:48" */
static void
progress(void *ctx, int64_t done, int64_t total, double elapsed)
{
  struct bar *b = ctx;
  char line[160], eta[32] = "--:--";
  int w = 30, fill = total > 0 ? (int)(w * done / total) : w, len;
  double rest = done > 0 ? elapsed * (double)(total - done) / (double)done : 0;

  if (done > 0)
    snprintf(eta, sizeof eta, "%d:%02d", (int)rest / 60, (int)rest % 60);
  len = snprintf(line, sizeof line, "\r[%.*s%.*s] %" PRId64 "/%" PRId64
                 " points  %d:%02d elapsed, ETA %s", fill,
                 "##############################", w - fill,
                 "..............................", done, total,
                 (int)elapsed / 60, (int)elapsed % 60, eta);
  fputs(line, stderr);
  if (len < b->last_len)
    fprintf(stderr, "%*s", b->last_len - len, "");
  b->last_len = len;
  if (done == total)
    fputc('\n', stderr);
  fflush(stderr);
}

int
ooc_cmd_sweep(int argc, char **argv)
{
  ooc_sweep_grid g;
  ooc_sweep_opts o = { .jobs = 1, .resume = 1 };
  ooc_sweep_stats st;
  ooc_err err = { 0 };
  struct bar bar = { 0 };
  int c, rc = 1, merge = 0;
  int64_t v;

  ooc_sweep_grid_init(&g);
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":m:b:p:j:o:", long_opts, NULL)) != -1) {
    int r = OOC_OK;
    switch (c) {
    case 'm': r = ooc_sweep_set_model(&g, optarg, &err); break;
    case 'b': r = ooc_sweep_parse_batches(&g, optarg, &err); break;
    case OPT_HW: r = ooc_sweep_parse_hw(&g, optarg, &err); break;
    case 'p': r = ooc_sweep_parse_planners(&g, optarg, &err); break;
    case OPT_ALLOC: r = ooc_sweep_parse_allocators(&g, optarg, &err); break;
    case OPT_BUDGET: r = ooc_sweep_parse_budgets(&g, optarg, &err); break;
    case OPT_HWSET: r = ooc_sweep_add_hwset(&g, optarg, &err); break;
    case OPT_SET: r = ooc_sweep_add_set(&g, optarg, &err); break;
    case 'j': r = ooc_cli_parse_jobs(optarg, &o.jobs, &err); break;
    case OPT_SHARD: {
      int k, n, used = 0;
      if (sscanf(optarg, "%d/%d%n", &k, &n, &used) != 2 ||
          optarg[used] != '\0' || n < 1 || k < 1 || k > n)
        r = ooc_err_set(&err, OOC_EINVAL, "--shard '%s': expected K/N with "
                        "1 <= K <= N", optarg);
      o.shard_k = k;
      o.shard_n = n;
      break;
    }
    case OPT_MERGE: merge = 1; break;
    case OPT_MAXBATCH: g.maxbatch = 1; break;
    case OPT_ITERS:
      r = ooc_parse_int(optarg, "--iterations", &v, &err);
      if (!r && (v < 1 || v > 1000))
        r = ooc_err_set(&err, OOC_EINVAL, "--iterations %s: must be 1..1000",
                        optarg);
      g.iterations = (int)v;
      break;
    case OPT_FRESH: o.resume = 0; break;
    case 'o': o.dir = optarg; break;
    case OPT_HELP:
      usage(stdout);
      rc = 0;
      goto out;
    default: r = ooc_cli_getopt_error(c, argv, "sweep", &err); break;
    }
    if (r) {
      ooc_cli_fail("%s", err.msg);
      goto out;
    }
  }
  if (merge) {
    if (!o.dir) {
      ooc_cli_fail("sweep --merge: missing -o DIR (where the merged results "
                   "go)");
      goto out;
    }
    if (optind >= argc) {
      ooc_cli_fail("sweep --merge: name the shard directories");
      goto out;
    }
    if (ooc_sweep_merge((const char *const *)argv + optind, argc - optind,
                        o.dir, &err)) {
      ooc_cli_fail("%s", err.msg);
      goto out;
    }
    printf("merged %d directories into %s/results.csv\n", argc - optind,
           o.dir);
    rc = 0;
    goto out;
  }
  if (optind < argc) {
    ooc_cli_fail("sweep: unexpected argument '%s'", argv[optind]);
    goto out;
  }
  if (g.maxbatch && g.n_batches) {
    ooc_cli_fail("sweep: --maxbatch searches the batch; drop -b");
    goto out;
  }
  if (!o.dir)
    o.dir = DEFAULT_DIR;
  if (ooc_sweep_grid_check(&g, &err)) {
    ooc_cli_fail("%s", err.msg);
    goto out;
  }
  if (isatty(2)) {
    o.progress = progress;
    o.progress_ctx = &bar;
  }
  if (ooc_sweep_run(&g, &o, &st, NULL, &err)) {
    ooc_cli_fail("%s", err.msg);
    goto out;
  }
  printf("sweep: %" PRId64 " point%s (%" PRId64 " already done, %" PRId64
         " run) in %.1f s -> %s/results.csv, %s/results.json\n", st.points,
         st.points == 1 ? "" : "s", st.skipped, st.ran, st.wall_s, o.dir,
         o.dir);
  if (st.failed) {
    ooc_cli_fail("sweep: %" PRId64 " of %" PRId64 " points failed (left out; "
                 "a rerun retries them); first: %s", st.failed, st.points,
                 st.first_error);
    goto out;
  }
  rc = 0;
out:
  ooc_sweep_grid_fini(&g);
  return rc;
}
