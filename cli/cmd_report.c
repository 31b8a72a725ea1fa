/* cli/cmd_report.c — `oocsim report`: the planner comparison report of one
 * scenario as DIR/report.html and DIR/report.md with their plots (report.h).
 *
 * Owner: report helper. This file parses options and prints where the
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

static void
usage(FILE *f)
{
  fprintf(f,
"Usage: oocsim report -m MODEL -b BATCH --hw HW [-p P1,P2,...|all]\n"
"                     [--allocator A] [--budget SIZE] [--set K=V]...\n"
"                     [--batches LIST] [--no-maxbatch] [-j N] -o DIR\n"
"\n"
"Compare every planner on one scenario and write DIR/report.html (self-\n"
"contained, images beside it) and DIR/report.md: the scenario, the\n"
"comparison table, the winner and why (where each planner's time goes and\n"
"how close it comes to the lower bound), plots (samples/s vs batch, memory\n"
"and timeline of the winner, largest batch per planner, slowdown vs link\n"
"bandwidth) and a what-if over the links of v100-pcie3, a100-pcie4,\n"
"h100-pcie5, v100-nvlink2 and gh200-c2c. The data behind it is in\n"
"DIR/data/.\n"
"\n"
"  -p, --planner LIST   planners to compare (default all)\n"
"      --batches LIST   batches of the throughput plot (default B/4, B/2, B,\n"
"                       3B/2, 2B)\n"
"      --no-maxbatch    skip the largest-batch search (faster)\n"
"  -j, --jobs N         threads (default: the number of CPUs)\n"
"\n"
"Example: oocsim report -m resnet50 -b 256 --hw v100-nvlink2 -o out/report\n"
"gnuplot is %s unless $OOCSIM_GNUPLOT names another program.\n",
          OOC_GNUPLOT);
}

enum { OPT_HW = 1000, OPT_ALLOC, OPT_BUDGET, OPT_SET, OPT_BATCHES,
       OPT_NOMAX, OPT_HELP };

static const struct option long_opts[] = {
  { "model", required_argument, NULL, 'm' },
  { "batch", required_argument, NULL, 'b' },
  { "hw", required_argument, NULL, OPT_HW },
  { "planner", required_argument, NULL, 'p' },
  { "allocator", required_argument, NULL, OPT_ALLOC },
  { "budget", required_argument, NULL, OPT_BUDGET },
  { "set", required_argument, NULL, OPT_SET },
  { "batches", required_argument, NULL, OPT_BATCHES },
  { "no-maxbatch", no_argument, NULL, OPT_NOMAX },
  { "jobs", required_argument, NULL, 'j' },
  { "output", required_argument, NULL, 'o' },
  { "help", no_argument, NULL, OPT_HELP },
  { NULL, 0, NULL, 0 }
};

int
ooc_cmd_report(int argc, char **argv)
{
  ooc_report_opts o = { .maxbatch = 1, .jobs = 1 };
  ooc_report_info info;
  ooc_kv sets[64];
  ooc_err err = { 0 };
  int64_t v;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int c, rc;

  o.jobs = ncpu > 0 ? (int)(ncpu < 64 ? ncpu : 64) : 1;
  o.sets = sets;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":m:b:p:j:o:", long_opts, NULL)) != -1) {
    switch (c) {
    case 'm': o.model = optarg; break;
    case 'b':
      if (ooc_parse_int(optarg, "-b", &v, &err))
        return ooc_cli_fail("%s", err.msg);
      if (v < 1)
        return ooc_cli_fail("-b %s: must be >= 1", optarg);
      o.batch = v;
      break;
    case OPT_HW: o.hw = optarg; break;
    case 'p': o.planners = optarg; break;
    case OPT_ALLOC: o.allocator = optarg; break;
    case OPT_BUDGET: o.budget = optarg; break;
    case OPT_SET:
      if (o.n_sets == 64)
        return ooc_cli_fail("--set: at most 64");
      if (ooc_cli_split_kv(optarg, "--set", &sets[o.n_sets].key,
                           &sets[o.n_sets].value, &err))
        return ooc_cli_fail("%s", err.msg);
      o.n_sets++;
      break;
    case OPT_BATCHES: o.batches = optarg; break;
    case OPT_NOMAX: o.maxbatch = 0; break;
    case 'j':
      if (ooc_cli_parse_jobs(optarg, &o.jobs, &err))
        return ooc_cli_fail("%s", err.msg);
      break;
    case 'o': o.dir = optarg; break;
    case OPT_HELP:
      usage(stdout);
      return 0;
    default:
      ooc_cli_getopt_error(c, argv, "report", &err);
      return ooc_cli_fail("%s", err.msg);
    }
  }
  if (optind < argc)
    return ooc_cli_fail("report: unexpected argument '%s'", argv[optind]);
  if (!o.model)
    return ooc_cli_fail("report: missing -m MODEL");
  if (o.batch < 1)
    return ooc_cli_fail("report: missing -b BATCH");
  if (!o.hw)
    return ooc_cli_fail("report: missing --hw HW");
  if (!o.dir)
    return ooc_cli_fail("report: missing -o DIR");
  rc = ooc_report_run(&o, &info, &err);
  if (rc && rc != OOC_EUNSUP)
    return ooc_cli_fail("%s", err.msg);
  printf("report: %s/report.html and %s/report.md (winner: %s; %d plots) "
         "in %.1f s\n", o.dir, o.dir, info.winner[0] ? info.winner : "none",
         info.plots_drawn, info.wall_s);
  if (rc)
    return ooc_cli_fail("%s", err.msg);
  return 0;
}
