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

static const ooc_cli_doc doc = {
  .name = "plot", .cmd = OOC_CMD_PLOT,
  .usage = "Usage: oocsim plot KIND --in FILE -o OUT.png|OUT.svg [--title TEXT]\n"
           "                   [--budget SIZE | --hw HW]\n",
  .about =
    "Draw a plot with gnuplot (the scripts in plots/). KIND and its input:\n"
    "  throughput  a sweep's results.csv: samples/s vs batch, a line per\n"
    "              planner, the in-core line, OOM points marked\n"
    "  bandwidth   a sweep over --hw-set link.h2d_GBps=...: slowdown vs link\n"
    "              bandwidth, with PCIe 3/4/5, NVLink 2 and C2C marked\n"
    "  maxbatch    a `sweep --maxbatch` results.csv: largest batch per planner\n"
    "              per GPU, as bars\n"
    "  memory      `simulate --mem-csv` output: allocated, reserved, and the\n"
    "              budget given with --budget or HW's usable memory (--hw;\n"
    "              not both, and no other KIND takes either)\n"
    "  gantt       a timeline CSV (lane,start_s,end_s,phase,layer,cause;\n"
    "              `simulate --timeline-csv`, `oocsim report`): compute/H2D/D2H\n"
    "              lanes, stalls in red\n"
    "\n"
    "The gnuplot data is written beside OUT, with .dat for its extension\n"
    "(throughput.png: throughput.dat). gnuplot is\n"
    OOC_GNUPLOT " unless $OOCSIM_GNUPLOT names another program; without it,\n"
    "or when it draws no image, the command exits 1 and OUT is left as it\n"
    "was.\n",
  .examples =
    "  oocsim plot throughput --in sweep/results.csv -o throughput.png\n"
    "  oocsim plot memory --in mem.csv --hw v100-nvlink2 -o memory.svg\n",
};

struct plot_ctx {
  const char *in, *out;
  const char *budget, *hw;    /* --budget, --hw as given (NULL: not) */
  ooc_plot_opts po;
};

static int
handle(void *ctx, int id, const char *arg, ooc_err *err)
{
  struct plot_ctx *c = ctx;
  ooc_hw *hw = NULL;
  int rc;

  switch (id) {
  case OOC_OPT_IN: c->in = arg; return OOC_OK;
  case OOC_OPT_OUTPUT: c->out = arg; return OOC_OK;
  case OOC_OPT_TITLE: c->po.title = arg; return OOC_OK;
  case OOC_OPT_BUDGET:
    c->budget = arg;
    return ooc_parse_size(arg, "--budget", &c->po.budget, err);
  case OOC_OPT_HW:
    c->hw = arg;
    if ((rc = ooc_hw_load(arg, NULL, 0, &hw, err)))
      return rc;
    c->po.budget = hw->mem_usable;
    ooc_hw_free(hw);
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "internal: unhandled option %d", id);
  }
}

int
ooc_cmd_plot(int argc, char **argv)
{
  struct plot_ctx c = { .po = { .title = NULL } };
  ooc_plot_kind kind;
  ooc_err err = { 0 };
  const char *pos[2];
  int n_pos = 0, help;

  if (ooc_cli_parse(OOC_CMD_PLOT, argc, argv, handle, &c, pos, 2, &n_pos,
                    &help, &err))
    return ooc_cli_fail("%s", err.msg);
  if (help) {
    ooc_cli_usage(stdout, &doc);
    return 0;
  }
  if (n_pos == 0)
    return ooc_cli_fail("plot: missing KIND (throughput, bandwidth, "
                        "maxbatch, memory, gantt)");
  if (n_pos > 1)
    return ooc_cli_fail("plot: unexpected argument '%s'", pos[1]);
  if (ooc_plot_kind_parse(pos[0], &kind, &err))
    return ooc_cli_fail("%s", err.msg);
  /* The budget line is memory's alone, and one of them draws it. */
  if (kind != OOC_PLOT_MEMORY && (c.budget != NULL || c.hw != NULL))
    return ooc_cli_fail("plot %s: %s %s: only plot memory draws a budget "
                        "line", pos[0], c.budget ? "--budget" : "--hw",
                        c.budget ? c.budget : c.hw);
  if (c.budget != NULL && c.hw != NULL)
    return ooc_cli_fail("plot memory: --budget %s and --hw %s both set the "
                        "budget line; give one of them", c.budget, c.hw);
  if (!c.in)
    return ooc_cli_fail("plot: missing --in FILE");
  if (!c.out)
    return ooc_cli_fail("plot: missing -o OUT.png|OUT.svg");
  {
    /* Neither the image nor the data written beside it (OUT.dat) may be
     * the input it is drawn from. */
    const char *ext = strrchr(c.out, '.');
    const char *opt[3] = { "--in", "-o", "the data file of -o" };
    const char *path[3] = { c.in, c.out, NULL };
    char dat[4096];
    /* The extension first: -o x.dat would otherwise be "the same file
     * as its data file" rather than not an image. */
    if (ooc_plot_check_out(c.out, &err) < 0)
      return ooc_cli_fail("plot: %s", err.msg);
    if (snprintf(dat, sizeof dat, "%.*s.dat", (int)(ext - c.out), c.out) <
        (int)sizeof dat)
      path[2] = dat;
    if (ooc_cli_check_distinct(opt, path, 3, 1, &err) < 0)
      return ooc_cli_fail("plot: %s", err.msg);
  }
  if (ooc_plot_draw(kind, c.in, c.out, &c.po, &err))
    return ooc_cli_fail("%s", err.msg);
  return 0;
}
