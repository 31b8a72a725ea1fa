/* cli/main.c — `oocsim COMMAND ...`: dispatch to the subcommands. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "base/util.h"
#include "executor/executor.h"

struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

static const struct command commands[] = {
  { "list", ooc_cmd_list,
    "list models, hardware profiles, planners or allocators" },
  { "info", ooc_cmd_info, "per-layer table and totals of a model" },
  { "import", ooc_cmd_import, "turn an ONNX model into an oocsim model" },
  { "plan", ooc_cmd_plan, "run a planner and write its program (plan.json)" },
  { "simulate", ooc_cmd_simulate, "predict time and memory of a plan" },
  { "compare", ooc_cmd_compare, "compare planners on one scenario" },
  { "maxbatch", ooc_cmd_maxbatch, "largest batch a planner can train" },
  { "minbudget", ooc_cmd_minbudget,
    "smallest device budget at which a planner fits" },
  { "sweep", ooc_cmd_sweep, "what-if grid over batches, profiles, planners" },
  { "plot", ooc_cmd_plot, "draw plots from sweep or simulate outputs" },
  { "report", ooc_cmd_report, "planner comparison report (HTML + Markdown)" },
  { "explain", ooc_cmd_explain,
    "what a plan keeps, swaps, recomputes, and what each costs" },
  { "calibrate", ooc_cmd_calibrate,
    "measure this machine into a hardware profile" },
  { "exec", ooc_cmd_exec, "replay a plan on real hardware and measure it" },
  { "validate", ooc_cmd_validate,
    "plan, simulate, execute and compare planners" },
};

static void
usage(FILE *f)
{
  size_t i;
  fprintf(f, "Usage: oocsim COMMAND [OPTIONS]\n\n"
             "Predict, plan and verify out-of-core training of deep networks.\n\n"
             "Commands:\n");
  for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);

  fprintf(f, "\nGlobal options (before COMMAND):\n"
             "      --datadir DIR   read models, profiles and plot scripts from "
             "DIR\n"
             "                      (default: $OOCSIM_DATADIR, else the "
             "installed data)\n"
             "  -V, --version       print the version, the data directory and the\n"
             "                      executor backends built\n"
             "  -h, --help          show this help\n"
             "\nRun 'oocsim COMMAND --help' for a command's options; "
             "see also oocsim(1).\n"
             "\nExamples:\n"
             "  oocsim list allocators\n"
             "  oocsim compare -m resnet50 -b 512 --hw v100-nvlink2 -p all\n");
}

static int
version(void)
{
  char where[4200];
  int i;

  printf("oocsim %s\ndata directory: %s\nexecutor backends:", PACKAGE_VERSION,
         ooc_data_dir_describe(where, sizeof where));
  for (i = 0; ooc_exec_backends[i] != NULL; i++)
    printf("%s %s", i ? "," : "", ooc_exec_backend_name(ooc_exec_backends[i]));
  printf("%s\n", i == 0 ? " none (configure found neither oneDNN nor CUDA)"
                         : "");
  return 0;
}

static int
run(int argc, char **argv)
{
  ooc_err err = { 0 };
  size_t i;

  /* Global options come before the command. */
  while (argc >= 2 && strncmp(argv[1], "--datadir", 9) == 0 &&
         (argv[1][9] == '\0' || argv[1][9] == '=')) {
    const char *dir = argv[1][9] == '=' ? argv[1] + 10 : NULL;
    int used = 1;
    if (dir == NULL) {
      if (argc < 3)
        return ooc_cli_fail("--datadir needs a directory");
      dir = argv[2];
      used = 2;
    }
    if (ooc_data_set_dir(dir, &err) < 0)
      return ooc_cli_fail("%s", err.msg);
    argc -= used;
    argv += used;
  }
  if (argc < 2) {
    fputs("Usage: oocsim COMMAND [OPTIONS]\n"
          "Run 'oocsim --help' for the commands, 'oocsim COMMAND --help' for "
          "their options.\n", stderr);
    return 1;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--version") == 0 ||
      strcmp(argv[1], "-V") == 0) {
    if (argc > 2)
      return ooc_cli_fail("%s takes nothing after it (got '%s')", argv[1],
                          argv[2]);
    if (argv[1][1] == 'V' || strcmp(argv[1], "--version") == 0)
      return version();
    usage(stdout);
    return 0;
  }
  for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0)
      return commands[i].run(argc - 1, argv + 1);
  if (argv[1][0] == '-')
    return ooc_cli_fail("unknown option '%s' (before the command: "
                        "--datadir DIR, -V, -h; run 'oocsim --help')",
                        argv[1]);
  return ooc_cli_fail("unknown command '%s' (run 'oocsim --help')", argv[1]);
}

int
main(int argc, char **argv)
{
  /* Everything a command printed must reach stdout: output that was
   * lost (a full disk, a closed pipe end) never exits 0. */
  ooc_cli_stdout_init();
  return ooc_cli_stdout_close(run(argc, argv));
}
