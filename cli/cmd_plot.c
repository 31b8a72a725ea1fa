/* cli/cmd_plot.c — `oocsim plot KIND --in FILE -o OUT.png|OUT.svg`: draw
 * one of the plots/ gnuplot scripts from a sweep, memory or timeline CSV
 * (plot.h lists the kinds and their inputs).
 *
 * Owner: report helper. Without gnuplot the data file (OUT.dat) is still
 * written and the command exits 1 saying gnuplot is missing.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ir/hw.h"
#include "base/util.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "report/plot.h"

static void
usage(FILE *f)
{
  fprintf(f,
"Usage: oocsim plot KIND --in FILE -o OUT.png|OUT.svg [--title TEXT]\n"
"                   [--budget SIZE | --hw HW]\n"
"\n"
"Draw a plot with gnuplot (the scripts in plots/). KIND and its input:\n"
"  throughput  a sweep's results.csv: samples/s vs batch, a line per\n"
"              planner, the in-core line, OOM points marked\n"
"  bandwidth   a sweep over --hw-set link.h2d_GBps=...: slowdown vs link\n"
"              bandwidth, with PCIe 3/4/5, NVLink 2 and C2C marked\n"
"  maxbatch    a `sweep --maxbatch` results.csv: largest batch per planner\n"
"              per GPU, as bars\n"
"  memory      `simulate --mem-csv` output: allocated, reserved, and the\n"
"              budget given with --budget (or HW's usable memory, --hw)\n"
"  gantt       a timeline CSV (lane,start_s,end_s,phase,layer; written by\n"
"              `oocsim report`): compute/H2D/D2H lanes, stalls in red\n"
"\n"
"The gnuplot data is written beside OUT as OUT.dat. gnuplot is %s unless\n"
"$OOCSIM_GNUPLOT names another program; without it the command exits 1.\n",
          OOC_GNUPLOT);
}

enum { OPT_IN = 1000, OPT_TITLE, OPT_BUDGET, OPT_HW, OPT_HELP };

static const struct option long_opts[] = {
  { "in", required_argument, NULL, OPT_IN },
  { "output", required_argument, NULL, 'o' },
  { "title", required_argument, NULL, OPT_TITLE },
  { "budget", required_argument, NULL, OPT_BUDGET },
  { "hw", required_argument, NULL, OPT_HW },
  { "help", no_argument, NULL, OPT_HELP },
  { NULL, 0, NULL, 0 }
};

int
ooc_cmd_plot(int argc, char **argv)
{
  const char *in = NULL, *out = NULL;
  ooc_plot_opts po = { .title = NULL };
  ooc_plot_kind kind;
  ooc_err err = { 0 };
  int c;

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":o:", long_opts, NULL)) != -1) {
    switch (c) {
    case OPT_IN: in = optarg; break;
    case 'o': out = optarg; break;
    case OPT_TITLE: po.title = optarg; break;
    case OPT_BUDGET:
      if (ooc_parse_size(optarg, "--budget", &po.budget, &err))
        return ooc_cli_fail("%s", err.msg);
      break;
    case OPT_HW: {
      ooc_hw *hw = NULL;
      if (ooc_hw_load(optarg, NULL, 0, &hw, &err))
        return ooc_cli_fail("%s", err.msg);
      po.budget = hw->mem_usable;
      ooc_hw_free(hw);
      break;
    }
    case OPT_HELP:
      usage(stdout);
      return 0;
    default:
      ooc_cli_getopt_error(c, argv, "plot", &err);
      return ooc_cli_fail("%s", err.msg);
    }
  }
  if (optind >= argc)
    return ooc_cli_fail("plot: missing KIND (throughput, bandwidth, "
                        "maxbatch, memory, gantt)");
  if (optind + 1 < argc)
    return ooc_cli_fail("plot: unexpected argument '%s'", argv[optind + 1]);
  if (ooc_plot_kind_parse(argv[optind], &kind, &err))
    return ooc_cli_fail("%s", err.msg);
  if (!in)
    return ooc_cli_fail("plot: missing --in FILE");
  if (!out)
    return ooc_cli_fail("plot: missing -o OUT.png|OUT.svg");
  if (ooc_plot_draw(kind, in, out, &po, &err))
    return ooc_cli_fail("%s", err.msg);
  return 0;
}
