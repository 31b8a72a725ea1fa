/* cli/cmd_sweep.c — `oocsim sweep`: what-if grids over batch sizes,
 * profiles, --hw-set values, allocators, budgets and planners (sweep.h),
 * written as DIR/results.csv and DIR/results.json; `--merge` joins shards.
 *
 * Owner: report helper. The work is in sweep.c; this file parses options
 * (the option table, cli/args.c), starts the progress line (base/progress.h:
 * stderr, only when it is a terminal) and turns errors into one
 * "oocsim: ..." line.
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

static const ooc_cli_doc doc = {
  .name = "sweep", .cmd = OOC_CMD_SWEEP,
  .usage =
    "Usage: oocsim sweep -m MODEL -b BATCHES --hw HW[,HW...] -p PLANNERS|all\n"
    "                    [--dtype D[,D...] | --precision P[,P...]]\n"
    "                    [--optimizer O[,O...]]\n"
    "                    [--allocator A[,A...]] [--budget SIZE[,SIZE...]]\n"
    "                    [--hw-set KEY=V1,V2,...]... [--set K=V]... [--maxbatch]\n"
    "                    [-j N] [--shard K/N] [--fresh] [--no-timing] [-o DIR]\n"
    "       oocsim sweep --merge DIR... -o DIR\n",
  .about =
    "Run every point of a grid and write DIR/results.csv (one row per point:\n"
    "the grid coordinates, then the result columns of docs/output-schema.md)\n"
    "and DIR/results.json (the same rows; empty cells are null).\n"
    "\n"
    "Grid order (the last varies fastest): hw, each --hw-set axis, dtype\n"
    "(or precision), optimizer, allocator, budget, planner, batch. A\n"
    "--precision axis adds a 'precision' column before 'dtype', which then\n"
    "holds the dtype each precision gives activations. Points already in\n"
    "DIR/results.csv (same coordinates) are skipped, so an interrupted sweep\n"
    "resumes where it stopped; a directory that holds rows of another grid\n"
    "is refused (use another -o DIR, or --fresh to replace its results).\n"
    "A progress line with ETA is drawn on stderr when it is a terminal.\n",
  .examples =
    "  oocsim sweep -m resnet50 -b 64:1024:64 --hw v100-pcie3,h100-pcie5 "
    "-p all -j 2\n"
    "  oocsim sweep -m resnet50 -b 256 --hw v100-pcie3 -p window "
    "--dtype fp32,fp16 --optimizer sgd,adam -o sw\n",
};

struct sweep_ctx {
  ooc_sweep_grid *g;
  ooc_sweep_opts *o;
  int merge;
  int grid_opt;         /* the first option other than --merge and -o, 0 */
};

/* How the user spelled option id, for the message that refuses it with
 * --merge (the shards' grid.json fixes the grid and how it ran). */
static const char *
opt_spelling(int id)
{
  switch (id) {
  case OOC_OPT_MODEL: return "-m";
  case OOC_OPT_BATCH: return "-b";
  case OOC_OPT_HW: return "--hw";
  case OOC_OPT_PLANNER: return "-p";
  case OOC_OPT_DTYPE: return "--dtype";
  case OOC_OPT_PRECISION: return "--precision";
  case OOC_OPT_OPTIMIZER: return "--optimizer";
  case OOC_OPT_ALLOCATOR: return "--allocator";
  case OOC_OPT_BUDGET: return "--budget";
  case OOC_OPT_HW_SET: return "--hw-set";
  case OOC_OPT_SET: return "--set";
  case OOC_OPT_JOBS: return "-j";
  case OOC_OPT_SHARD: return "--shard";
  case OOC_OPT_MAXBATCH: return "--maxbatch";
  case OOC_OPT_STEADY: return "--steady";
  case OOC_OPT_NOTIMING: return "--no-timing";
  case OOC_OPT_ITERS: return "--iterations";
  case OOC_OPT_FRESH: return "--fresh";
  default: return "an option";
  }
}

static int
handle(void *ctx, int id, const char *arg, ooc_err *err)
{
  struct sweep_ctx *c = ctx;
  ooc_sweep_grid *g = c->g;
  int64_t v;

  if (id != OOC_OPT_MERGE && id != OOC_OPT_OUTPUT && c->grid_opt == 0)
    c->grid_opt = id;
  switch (id) {
  case OOC_OPT_MODEL: return ooc_sweep_set_model(g, arg, err);
  case OOC_OPT_BATCH: return ooc_sweep_parse_batches(g, arg, err);
  case OOC_OPT_HW: return ooc_sweep_parse_hw(g, arg, err);
  case OOC_OPT_PLANNER: return ooc_sweep_parse_planners(g, arg, err);
  case OOC_OPT_DTYPE: return ooc_sweep_parse_dtypes(g, arg, err);
  case OOC_OPT_PRECISION: return ooc_sweep_parse_precisions(g, arg, err);
  case OOC_OPT_OPTIMIZER: return ooc_sweep_parse_optimizers(g, arg, err);
  case OOC_OPT_ALLOCATOR: return ooc_sweep_parse_allocators(g, arg, err);
  case OOC_OPT_BUDGET: return ooc_sweep_parse_budgets(g, arg, err);
  case OOC_OPT_HW_SET: return ooc_sweep_add_hwset(g, arg, err);
  case OOC_OPT_SET: return ooc_sweep_add_set(g, arg, err);
  case OOC_OPT_JOBS: return ooc_cli_parse_jobs(arg, &c->o->jobs, err);
  case OOC_OPT_SHARD: {
    int k, n, used = 0;
    if (sscanf(arg, "%d/%d%n", &k, &n, &used) != 2 || arg[used] != '\0' ||
        n < 1 || k < 1 || k > n)
      return ooc_err_set(err, OOC_EINVAL, "--shard '%s': expected K/N with "
                         "1 <= K <= N", arg);
    c->o->shard_k = k;
    c->o->shard_n = n;
    return OOC_OK;
  }
  case OOC_OPT_MERGE: c->merge = 1; return OOC_OK;
  case OOC_OPT_MAXBATCH: g->maxbatch = 1; return OOC_OK;
  case OOC_OPT_STEADY: g->steady = 1; return OOC_OK;
  case OOC_OPT_NOTIMING: g->no_timing = 1; return OOC_OK;
  case OOC_OPT_ITERS:
    /* The words of the other commands (cli/args.c). */
    if (ooc_parse_int(arg, "--iterations", &v, err) < 0 || v < 1 || v > 1000)
      return ooc_err_set(err, OOC_EINVAL, "--iterations: '%s' must be an "
                         "integer in [1, 1000]", arg);
    g->iterations = (int)v;
    return OOC_OK;
  case OOC_OPT_FRESH: c->o->resume = 0; return OOC_OK;
  case OOC_OPT_OUTPUT: c->o->dir = arg; return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "internal: unhandled option %d", id);
  }
}

int
ooc_cmd_sweep(int argc, char **argv)
{
  ooc_sweep_grid g;
  ooc_sweep_opts o = { .jobs = 1, .resume = 1 };
  ooc_sweep_stats st;
  ooc_sweep_merged ms;
  ooc_progress prog;
  ooc_err err = { 0 };
  struct sweep_ctx ctx = { .g = &g, .o = &o };
  const char *pos[256];
  int rc = 1, help, n_pos = 0;

  ooc_sweep_grid_init(&g);
  if (ooc_cli_parse(OOC_CMD_SWEEP, argc, argv, handle, &ctx, pos, 256,
                    &n_pos, &help, &err)) {
    ooc_cli_fail("%s", err.msg);
    goto out;
  }
  if (help) {
    ooc_cli_usage(stdout, &doc);
    rc = 0;
    goto out;
  }
  if (ctx.merge) {
    if (!o.dir) {
      ooc_cli_fail("sweep --merge: missing -o DIR (where the merged results "
                   "go)");
      goto out;
    }
    if (n_pos == 0) {
      ooc_cli_fail("sweep --merge: name the shard directories");
      goto out;
    }
    if (ctx.grid_opt != 0) {
      ooc_cli_fail("sweep --merge: %s cannot be given (a merge only joins "
                   "the shards' rows; their grid.json fixes the grid and "
                   "how its points ran)",
                   opt_spelling(ctx.grid_opt));
      goto out;
    }
    for (int i = 0; i < n_pos; i++)
      if (ooc_cli_same_file(pos[i], o.dir)) {
        ooc_cli_fail("sweep --merge: -o %s is shard '%s'; merge into "
                     "another directory", o.dir, pos[i]);
        goto out;
      }
    if (ooc_sweep_merge(pos, n_pos, o.dir, &ms, &err)) {
      ooc_cli_fail("%s", err.msg);
      goto out;
    }
    printf("merged %d director%s into %s/results.csv: %lld of %lld grid "
           "points", n_pos, n_pos == 1 ? "y" : "ies", o.dir,
           (long long)ms.present,
           (long long)ms.points);
    if (ms.dups > 0)
      printf(" (%lld held twice: the first directory's rows kept)",
             (long long)ms.dups);
    printf("\n");
    if (ms.present < ms.points)
      fprintf(stderr, "oocsim: warning: %lld grid point%s in no shard "
              "(first: %s): a shard did not finish or a point failed; the "
              "same sweep with -o %s runs just those\n",
              (long long)(ms.points - ms.present),
              ms.points - ms.present == 1 ? " is" : "s are",
              ms.first_missing, o.dir);
    rc = 0;
    goto out;
  }
  if (n_pos > 0) {
    ooc_cli_fail("sweep: unexpected argument '%s'", pos[0]);
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
  ooc_progress_begin(&prog, isatty(2) ? stderr : NULL, "sweep");
  o.progress = &prog;
  rc = ooc_sweep_run(&g, &o, &st, NULL, &err);
  ooc_progress_end(&prog);
  if (rc) {
    rc = 1;
    ooc_cli_fail("%s", err.msg);
    goto out;
  }
  rc = 1;
  if (g.no_timing)
    st.wall_s = 0;              /* as every wall-clock figure */
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
