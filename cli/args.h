/* cli/args.h — the options every oocsim command shares, parsed once.
 *
 * ooc_cli_args_parse() runs getopt_long over a command's arguments with the
 * subset of shared options the command accepts (a mask of OOC_CLI_* bits)
 * plus, optionally, the command's own extra options handled by a callback.
 * Values are checked as they are read, so a command only sees well-formed
 * input: -b is an integer >= 1, --budget a size (ooc_parse_size), --dtype a
 * known dtype, --set/--opt/--hw-set are split at the first '='. Anything
 * wrong yields OOC_EINVAL with err naming the option ("-b: '0' must be
 * >= 1", "unknown option '--frob'"); getopt itself prints nothing.
 *
 * Ownership: ooc_cli_args is caller-embedded (ooc_cli_args_init/_fini).
 * String options point into argv (borrowed); the K=V arrays are copies owned
 * by the struct and freed by _fini. Parsing is O(argc).
 */
#ifndef OOC_CLI_ARGS_H
#define OOC_CLI_ARGS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "analysis/scenario.h"

/* Shared options, as bits of the `accept` mask. */
enum {
  OOC_CLI_MODEL     = 1u << 0,   /* -m, --model MODEL */
  OOC_CLI_BATCH     = 1u << 1,   /* -b, --batch B */
  OOC_CLI_SET       = 1u << 2,   /* --set K=V (repeatable) */
  OOC_CLI_DTYPE     = 1u << 3,   /* --dtype fp32|fp16|bf16 */
  OOC_CLI_HW        = 1u << 4,   /* --hw HW */
  OOC_CLI_HW_SET    = 1u << 5,   /* --hw-set K=V (repeatable) */
  OOC_CLI_PLANNER   = 1u << 6,   /* -p, --planner P (or a list for compare) */
  OOC_CLI_BUDGET    = 1u << 7,   /* --budget SIZE */
  OOC_CLI_ALLOCATOR = 1u << 8,   /* --allocator A */
  OOC_CLI_OPT       = 1u << 9,   /* --opt K=V (repeatable) */
  OOC_CLI_JSON      = 1u << 10,  /* --json */
  OOC_CLI_OUTPUT    = 1u << 11,  /* -o, --output FILE|DIR */
  OOC_CLI_TRACE     = 1u << 12,  /* --trace FILE */
  OOC_CLI_MEMCSV    = 1u << 13,  /* --mem-csv FILE */
  OOC_CLI_FORMAT    = 1u << 14,  /* --format table|md|csv|json */
  OOC_CLI_NOTIMING  = 1u << 15,  /* --no-timing: wall times printed as 0 */
  OOC_CLI_OPTIMIZER = 1u << 16,  /* --optimizer sgd|momentum|adam */
  OOC_CLI_ITERS     = 1u << 17,  /* --iterations N (timed iterations) */
  OOC_CLI_POSITIONAL = 1u << 30  /* accept positional arguments */
};

#define OOC_CLI_MAX_POS 16

typedef struct ooc_cli_args {
  const char *model;
  int64_t batch; int batch_set;
  int dtype_set; ooc_dtype dtype;
  ooc_optimizer optimizer;
  ooc_kv *sets; int n_sets;
  const char *hw;
  ooc_hw_override *hw_sets; int n_hw_sets;
  const char *planner;
  uint64_t budget;            /* 0: not given */
  const char *allocator;
  ooc_kv *opts; int n_opts;
  int json;
  const char *output;
  const char *trace;
  const char *mem_csv;
  const char *format;
  int no_timing;
  int iterations;             /* 0: not given */
  int help;                   /* --help / -h seen (parsing stops there) */
  const char *pos[OOC_CLI_MAX_POS]; int n_pos;
  char **owned; int n_owned;  /* owned copies of the K=V arguments */
} ooc_cli_args;

/* A command's own options: `options` is a getopt_long table terminated by
 * a zero entry whose `val`s are >= 1000 (so they never clash with the
 * shared ones), `shortopts` their short letters in getopt syntax (may be
 * NULL). handle() gets each one with its argument (NULL if none) and
 * returns OOC_OK or an error through err. */
typedef struct ooc_cli_extra {
  const struct option *options;
  const char *shortopts;
  int (*handle)(void *ctx, int val, const char *arg, ooc_err *err);
  void *ctx;
} ooc_cli_extra;

void ooc_cli_args_init(ooc_cli_args *a);
void ooc_cli_args_fini(ooc_cli_args *a);

/* Parse argv[1..argc) (argv[0] is the command name). Returns OOC_OK, or
 * OOC_EINVAL with err naming the option. extra may be NULL. */
int ooc_cli_args_parse(ooc_cli_args *a, int argc, char **argv,
                       unsigned accept, const ooc_cli_extra *extra,
                       ooc_err *err);

/* How every command that takes the shared options starts: initialise a,
 * parse argv with the options in accept (ooc_cli_args_parse) and, unless
 * --help was given, check that those in require were given
 * (ooc_cli_args_require). Returns 0 when the command goes on; otherwise 1,
 * with *status the command's exit status: 0 after printing usage on stdout
 * for --help, 1 after printing the error line on stderr (ooc_cli_fail).
 * a needs ooc_cli_args_fini either way. */
int ooc_cli_args_start(ooc_cli_args *a, int argc, char **argv,
                       unsigned accept, unsigned require,
                       void (*usage)(FILE *), int *status);

/* Check that the options in `mask` were given (e.g. OOC_CLI_MODEL |
 * OOC_CLI_HW); err names the first missing one ("missing -m MODEL"). */
int ooc_cli_args_require(const ooc_cli_args *a, unsigned mask, ooc_err *err);

/* Fill a scenario spec from the parsed options (the spec borrows a). */
void ooc_cli_args_spec(const ooc_cli_args *a, ooc_scenario_spec *spec);

/* Split "K=V" into key and value; exposed for commands with list-valued options such as sweep's
 * --hw-set K=V1,V2. Returns OOC_EINVAL naming `opt` when there is no '='
 * or the key is empty. s is modified in place ('=' becomes NUL). */
int ooc_cli_split_kv(char *s, const char *opt, const char **key,
                     const char **value, ooc_err *err);

/* For the commands with their own getopt_long loop (sweep, plot, report;
 * opterr = 0, shortopts starting with ':'): the error for a return value c
 * they do not handle, argv and optind as getopt_long left them. c == ':'
 * gives "option '--x' needs a value", anything else "CMD: unknown option
 * '--x' (see oocsim CMD --help)". Returns OOC_EINVAL. */
int ooc_cli_getopt_error(int c, char *const *argv, const char *cmd,
                         ooc_err *err);

/* Parse a -j value: an integer in 1..1024 ("-j 0: must be 1..1024"). */
int ooc_cli_parse_jobs(const char *s, int *jobs, ooc_err *err);

/* Parse a --optimizer value: "sgd", "momentum" (SGD with momentum, the
 * default) or "adam". */
int ooc_cli_parse_optimizer(const char *s, ooc_optimizer *out, ooc_err *err);

#endif
