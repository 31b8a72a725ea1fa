/* cli/cmd_report.c — `oocsim report`: the planner comparison report of one
 * scenario as DIR/report.html and DIR/report.md with their plots (report.h).
 *
 * Owner: report helper. This file parses options (the option table,
 * cli/args.c), draws the progress line on a terminal and prints where the
 * report is; without gnuplot the report is written without plots and the
 * command exits 1 saying gnuplot is missing.
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
#include "report/report.h"

static const ooc_cli_doc doc = {
  .name = "report", .cmd = OOC_CMD_REPORT,
  .usage =
    "Usage: oocsim report -m MODEL -b BATCH --hw HW [-p P1,P2,...|all]\n"
    "                     [--allocator A] [--budget SIZE] [--set K=V]...\n"
    "                     [--dtype D | --precision P] [--optimizer O]\n"
    "                     [--hw-set K=V]...\n"
    "                     [--batches LIST] [--no-maxbatch] [--no-timing]\n"
    "                     [-j N] -o DIR\n",
  .about =
    "Compare every planner on one scenario and write DIR/report.html (self-\n"
    "contained, images beside it) and DIR/report.md: the scenario, the\n"
    "comparison table, the winner and why (where each planner's time goes and\n"
    "how close it comes to the lower bound), plots (samples/s vs batch, memory\n"
    "and timeline of the winner, largest batch per planner, slowdown vs link\n"
    "bandwidth) and a what-if over the links of v100-pcie3, a100-pcie4,\n"
    "h100-pcie5, v100-nvlink2 and gh200-c2c. The data behind it is in\n"
    "DIR/data/. A progress line with ETA is drawn on stderr when it is a\n"
    "terminal. Without gnuplot the report is written without plots and the\n"
    "command exits 1; gnuplot is " OOC_GNUPLOT " unless $OOCSIM_GNUPLOT names\n"
    "another program.\n",
  .examples =
    "  oocsim report -m resnet50 -b 256 --hw v100-nvlink2 -o out/report\n"
    "  oocsim report -m resnet --set depth=1001 -b 16 --hw v100-pcie3 "
    "-p vdnn,window,checkpoint-dp --no-maxbatch -o out/r1001\n",
};

/* The options report reads its own way (a planner list, the budget as
 * text for the sweeps); the rest go to the shared struct. */
struct report_ctx {
  ooc_cli_args a;
  ooc_report_opts *o;
};

static int
handle(void *ctx, int id, const char *arg, ooc_err *err)
{
  struct report_ctx *c = ctx;
  ooc_report_opts *o = c->o;
  uint64_t b;
  int rc;

  switch (id) {
  case OOC_OPT_PLANNER: o->planners = arg; return OOC_OK;
  case OOC_OPT_BUDGET:
    if ((rc = ooc_parse_budget(arg, &b, err)))
      return rc;
    o->budget = arg;
    return OOC_OK;
  case OOC_OPT_DTYPE: o->dtype = arg; break;      /* and checked there */
  case OOC_OPT_PRECISION: o->precision = arg; break;
  case OOC_OPT_OPTIMIZER: o->optimizer = arg; break;
  case OOC_OPT_BATCHES: o->batches = arg; return OOC_OK;
  case OOC_OPT_NOMAXBATCH: o->maxbatch = 0; return OOC_OK;
  case OOC_OPT_STEADY: o->steady = 1; return OOC_OK;
  case OOC_OPT_NOTIMING: o->no_timing = 1; return OOC_OK;
  case OOC_OPT_JOBS: return ooc_cli_parse_jobs(arg, &o->jobs, err);
  case OOC_OPT_OUTPUT: o->dir = arg; return OOC_OK;
  default: break;
  }
  return ooc_cli_args_handle(&c->a, id, arg, err);
}

int
ooc_cmd_report(int argc, char **argv)
{
  ooc_report_opts o = { .maxbatch = 1, .jobs = 1 };
  ooc_report_info info;
  ooc_progress prog;
  struct report_ctx ctx = { .o = &o };
  ooc_err err = { 0 };
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int rc, help;

  o.jobs = ncpu > 0 ? (int)(ncpu < 64 ? ncpu : 64) : 1;
  ooc_cli_args_init(&ctx.a);
  if (ooc_cli_parse(OOC_CMD_REPORT, argc, argv, handle, &ctx, NULL, 0, NULL,
                    &help, &err)) {
    rc = ooc_cli_fail("%s", err.msg);
    goto done;
  }
  if (help) {
    ooc_cli_usage(stdout, &doc);
    rc = 0;
    goto done;
  }
  o.model = ctx.a.model;
  o.batch = ctx.a.batch_set ? ctx.a.batch : 0;
  o.hw = ctx.a.hw;
  o.allocator = ctx.a.allocator;
  o.sets = ctx.a.sets;
  o.n_sets = ctx.a.n_sets;
  o.hw_sets = ctx.a.hw_sets;
  o.n_hw_sets = ctx.a.n_hw_sets;
  if (!o.model || o.batch < 1 || !o.hw || !o.dir) {
    rc = ooc_cli_fail("report: missing %s", !o.model ? "-m MODEL"
                      : o.batch < 1 ? "-b BATCH" : !o.hw ? "--hw HW"
                      : "-o DIR");
    goto done;
  }
  ooc_progress_begin(&prog, isatty(2) ? stderr : NULL, "report");
  o.progress = &prog;
  rc = ooc_report_run(&o, &info, &err);
  ooc_progress_end(&prog);
  if (rc && rc != OOC_EUNSUP) {
    rc = ooc_cli_fail("%s", err.msg);
    goto done;
  }
  printf("report: %s/report.html and %s/report.md (winner: %s; %d plots)",
         o.dir, o.dir, info.winner[0] ? info.winner : "none",
         info.plots_drawn);
  /* Left out with every other wall-clock figure under --no-timing (it
   * read "in 0.0 s"). */
  if (!o.no_timing)
    printf(" in %.1f s", info.wall_s);
  putchar('\n');
  rc = rc ? ooc_cli_fail("%s", err.msg) : 0;
done:
  ooc_cli_args_fini(&ctx.a);
  return rc;
}
