/* cli/commands.h — the oocsim subcommands. Each takes the arguments after
 * its name (argv[0] is the command name), parses them with getopt_long,
 * prints results on stdout and a single "oocsim: ..." line on stderr on
 * failure, and returns the process exit status (0 success, 1 bad input or
 * failure). `--help` prints the command's usage on stdout and returns 0.
 */
#ifndef OOC_COMMANDS_H
#define OOC_COMMANDS_H

#include <stdio.h>
#include "base/error.h"

int ooc_cmd_list(int argc, char **argv);
int ooc_cmd_info(int argc, char **argv);
int ooc_cmd_plan(int argc, char **argv);
int ooc_cmd_simulate(int argc, char **argv);
int ooc_cmd_maxbatch(int argc, char **argv);
int ooc_cmd_compare(int argc, char **argv);
int ooc_cmd_sweep(int argc, char **argv);
int ooc_cmd_plot(int argc, char **argv);
int ooc_cmd_report(int argc, char **argv);
int ooc_cmd_minbudget(int argc, char **argv);
int ooc_cmd_exec(int argc, char **argv);
int ooc_cmd_validate(int argc, char **argv);
int ooc_cmd_explain(int argc, char **argv);
int ooc_cmd_calibrate(int argc, char **argv);
int ooc_cmd_import(int argc, char **argv);

/* The hint under an infeasible simulate or compare result: "smallest
 * budget that fits: X with planner P" over the n planners ts (NULL: every
 * registered one), with spec's allocator and options (analysis/minbudget.h),
 * on f. Returns 0, or 1 after printing the error line. */
struct ooc_scenario_spec;
struct ooc_planner_type;
int ooc_cli_minbudget_hint(FILE *f, const struct ooc_scenario_spec *spec,
                           const struct ooc_planner_type *const *ts, int n);

/* Standard output (cli/stdout.c). _init, first thing in main, makes
 * stdout a stream that keeps the reason of its first failed write.
 * _flush flushes it: 0, or 1 after "oocsim: writing standard output:
 * REASON" (e.g. "No space left on device"). _close flushes and closes it
 * at exit: rc, or 1 after that line when output was lost and rc was 0. */
void ooc_cli_stdout_init(void);
int ooc_cli_stdout_flush(void);
/* Flush stdout; on failure OOC_EIO with err saying why ("writing standard
 * output: No space left on device"), printing nothing. */
int ooc_cli_stdout_check(ooc_err *err);
int ooc_cli_stdout_close(int rc);

/* Print "oocsim: <msg>\n" on stderr and return 1. */
int ooc_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
