/* cli/args.h — the options every oocsim command shares, parsed once.
 *
 * One table (ooc_cli_options) lists every option of every command: its
 * names, argument, help line and the commands that accept it. getopt_long's
 * table and each command's --help are both made from it, so what a command
 * accepts is exactly what its --help lists (tests/cli_help.sh checks it).
 * ooc_cli_args_parse() fills the shared struct below; commands with options
 * of their own (sweep, report, plot) pass their own handler to
 * ooc_cli_parse(). Values are checked as they are read, so a command only sees well-formed
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
#include "plan/planner.h"

/* The commands, as bits of an option's `cmds` mask. */
enum {
  OOC_CMD_LIST      = 1u << 0,
  OOC_CMD_INFO      = 1u << 1,
  OOC_CMD_PLAN      = 1u << 2,
  OOC_CMD_SIMULATE  = 1u << 3,
  OOC_CMD_COMPARE   = 1u << 4,
  OOC_CMD_MAXBATCH  = 1u << 5,
  OOC_CMD_MINBUDGET = 1u << 6,
  OOC_CMD_SWEEP     = 1u << 7,
  OOC_CMD_PLOT      = 1u << 8,
  OOC_CMD_REPORT    = 1u << 9,
  OOC_CMD_EXEC      = 1u << 10,
  OOC_CMD_VALIDATE  = 1u << 11,
  OOC_CMD_EXPLAIN   = 1u << 12,
  OOC_CMD_CALIBRATE = 1u << 13,
  OOC_CMD_IMPORT    = 1u << 14
};

/* What getopt_long returns for each option: the short letter when there
 * is one, else a value from 256 up. Options of the same name share it. */
enum {
  OOC_OPT_MODEL = 'm', OOC_OPT_BATCH = 'b', OOC_OPT_PLANNER = 'p',
  OOC_OPT_OUTPUT = 'o', OOC_OPT_JOBS = 'j',
  OOC_OPT_SET = 256, OOC_OPT_DTYPE, OOC_OPT_OPTIMIZER, OOC_OPT_HW,
  OOC_OPT_HW_SET, OOC_OPT_BUDGET, OOC_OPT_ALLOCATOR, OOC_OPT_OPT,
  OOC_OPT_ITERS, OOC_OPT_JSON, OOC_OPT_TRACE, OOC_OPT_MEMCSV,
  OOC_OPT_FORMAT, OOC_OPT_NOTIMING, OOC_OPT_SHARD, OOC_OPT_MERGE,
  OOC_OPT_MAXBATCH, OOC_OPT_FRESH, OOC_OPT_BATCHES, OOC_OPT_NOMAXBATCH,
  OOC_OPT_IN, OOC_OPT_TITLE, OOC_OPT_TIMELINE_CSV, OOC_OPT_HELP,
  OOC_OPT_BACKEND, OOC_OPT_WARMUP, OOC_OPT_THREADS, OOC_OPT_LINK,
  OOC_OPT_VERIFY, OOC_OPT_BASE, OOC_OPT_REPEAT, OOC_OPT_NOALGOS,
  OOC_OPT_NAME, OOC_OPT_NOLOSS, OOC_OPT_PRECISION, OOC_OPT_STEADY
};

/* One row of the option table (cli/args.c), from which both getopt_long's
 * table and every command's --help are made, so that they cannot drift.
 * An option whose argument or meaning differs between commands (a list in
 * sweep, one value elsewhere) has one row per meaning, with disjoint cmds
 * and the same id. */
typedef struct ooc_cli_option {
  const char *name;           /* long name, without "--" */
  char shortc;                /* short letter, 0: none */
  int id;                     /* OOC_OPT_* */
  const char *arg;            /* argument name in --help; NULL: a flag */
  unsigned cmds;              /* OOC_CMD_* bits of the commands taking it */
  const char *help;           /* one line; '\n' continues it */
} ooc_cli_option;

/* The option table, terminated by a row whose name is NULL. */
extern const ooc_cli_option ooc_cli_options[];

/* What --help prints around the generated option list: the usage lines,
 * what the command does, and one or two examples. */
typedef struct ooc_cli_doc {
  const char *name;           /* "compare" */
  unsigned cmd;               /* OOC_CMD_COMPARE */
  const char *usage;          /* "Usage: oocsim compare ...\n" lines */
  const char *about;          /* paragraphs, each line ending in '\n' */
  const char *examples;       /* example command lines, '\n'-terminated */
} ooc_cli_doc;

/* Print a command's --help: usage, about, "Options:" made from the table
 * (every option of doc->cmd, then -h, --help), "Examples:". */
void ooc_cli_usage(FILE *f, const ooc_cli_doc *doc);

/* Called for each option parsed, with its id and argument (NULL for a
 * flag); returns OOC_OK or an error through err. */
typedef int (*ooc_cli_handler)(void *ctx, int id, const char *arg,
                               ooc_err *err);

/* Run getopt_long over argv[1..argc) with the options of cmd (from the
 * table, plus -h/--help), calling handle for each. Positional arguments go
 * to pos (at most max_pos; more, or any when max_pos is 0, is "CMD:
 * unexpected argument 'X'"). *help is set when -h/--help is seen (parsing
 * stops there). Unknown options and missing values give "CMD: unknown
 * option '--x' (see 'oocsim CMD --help')" and "CMD: option '--x' needs a
 * value". getopt itself prints nothing. */
int ooc_cli_parse(unsigned cmd, int argc, char **argv, ooc_cli_handler handle,
                  void *ctx, const char **pos, int max_pos, int *n_pos,
                  int *help, ooc_err *err);

/* Shared options, as bits of ooc_cli_args_require's mask. */
enum {
  OOC_CLI_MODEL     = 1u << 0,   /* -m, --model MODEL */
  OOC_CLI_BATCH     = 1u << 1,   /* -b, --batch B */
  OOC_CLI_HW        = 1u << 4,   /* --hw HW */
  OOC_CLI_PLANNER   = 1u << 6,   /* -p, --planner P (or a list for compare) */
  OOC_CLI_OUTPUT    = 1u << 11   /* -o, --output FILE|DIR */
};

#define OOC_CLI_MAX_POS 16

typedef struct ooc_cli_args {
  const char *model;
  int64_t batch; int batch_set;
  int dtype_set; ooc_dtype dtype;
  ooc_optimizer optimizer;
  int optimizer_set;          /* --optimizer given */
  ooc_precision precision;    /* --precision (OOC_PREC_NONE: not given) */
  ooc_kv *sets; int n_sets;
  const char *hw;
  ooc_hw_override *hw_sets; int n_hw_sets;
  const char *planner;
  uint64_t budget;            /* 0: not given */
  const char *budget_arg;     /* --budget as given (NULL: not given) */
  const char *allocator;
  ooc_kv *opts; int n_opts;
  int json;
  const char *output;
  const char *trace;
  const char *mem_csv;
  const char *timeline_csv;
  const char *format;
  int no_timing;
  int iterations;             /* 0: not given */
  int steady;                 /* --steady */
  int jobs;                   /* -j (0: not given) */
  const char *backend;        /* --backend (exec, validate; NULL: cpu) */
  int warmup;                 /* --warmup (-1: not given) */
  int threads;                /* --threads (0: not given) */
  double link_GBps;           /* --link-GBps (0: not given) */
  int verify;                 /* --verify */
  const char *base;           /* --base PROFILE (calibrate) */
  int repeat;                 /* --repeat (calibrate; 0: not given) */
  int no_algorithms;          /* --no-algorithms (calibrate) */
  const char *name;           /* --name (import) */
  int no_loss;                /* --no-loss (import) */
  int help;                   /* --help / -h seen (parsing stops there) */
  const char *pos[OOC_CLI_MAX_POS]; int n_pos;
  char **owned; int n_owned;  /* owned copies of the K=V arguments */
} ooc_cli_args;

void ooc_cli_args_init(ooc_cli_args *a);
void ooc_cli_args_fini(ooc_cli_args *a);

/* Parse argv[1..argc) (argv[0] is the command name) with the options of
 * cmd into a (ooc_cli_parse; positional arguments into a->pos when
 * positional is non-zero). Returns OOC_OK, or OOC_EINVAL with err naming
 * the option. */
int ooc_cli_args_parse(ooc_cli_args *a, int argc, char **argv, unsigned cmd,
                       int positional, ooc_err *err);

/* The handler that fills an ooc_cli_args (ctx) from the shared options:
 * for commands that parse some options their own way and the rest like
 * everyone (report). */
int ooc_cli_args_handle(void *ctx, int id, const char *arg, ooc_err *err);

/* How every command that takes the shared options starts: initialise a,
 * parse argv with the options of doc->cmd (ooc_cli_args_parse) and, unless
 * --help was given, check that those in require were given
 * (ooc_cli_args_require). Returns 0 when the command goes on; otherwise 1,
 * with *status the command's exit status: 0 after printing its --help on
 * stdout, 1 after printing the error line on stderr (ooc_cli_fail).
 * a needs ooc_cli_args_fini either way. */
int ooc_cli_args_start(ooc_cli_args *a, int argc, char **argv,
                       const ooc_cli_doc *doc, int positional,
                       unsigned require, int *status);

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

/* Split a -p list ("all", every registered planner, or "a,b,c"; a name
 * given twice counts once) into a heap array of planner types (caller
 * frees it). "-p: unknown planner ..." or "-p: empty planner list". */
int ooc_cli_parse_planners(const char *spec, const ooc_planner_type ***out,
                           int *n, ooc_err *err);

/* Every --opt key of a must be one at least one of ts[0 .. n) accepts:
 * else "--opt K: no chosen planner accepts this option". (A planner
 * refuses the keys it does not take when it runs; a command that runs
 * several checks here first, so that a key none takes is an error.) */
int ooc_cli_check_opts(const ooc_cli_args *a, const ooc_planner_type **ts,
                       int n, ooc_err *err);

/* Read a plan file for simulate and exec (ir/plan_io.h), and check what
 * the reader cannot: its planner is one this oocsim has
 * ("p.json: scenario.planner: unknown planner 'x' (valid: ...)"), its
 * allocator spec is valid ("p.json: scenario.allocator: ...") and it
 * takes every option recorded ("p.json: scenario.opts: planner 'vdnn':
 * unknown option 'x' (valid: ...)"). */
struct ooc_plan_file;
int ooc_cli_plan_file_read(const char *path, struct ooc_plan_file *pf,
                           ooc_err *err);

/* Do paths a and b name one file? Existing files are compared by
 * identity (stat: device and inode), so "o/x", "./o/x", "o//x" and a
 * symbolic link to it are one file; a path that does not exist yet is
 * compared as the real path of its folder plus its base name (and as
 * the string itself when the folder does not resolve either). 1: the
 * same file, 0: not. O(path length) plus two stat and realpath calls. */
int ooc_cli_same_file(const char *a, const char *b);

/* The file a -m, --hw or --base argument reads (a path, or a zoo name
 * the data directory resolves: subdir "models" or "hwprofiles"), when
 * one exists: for the guards below, so that an output never replaces a
 * model or profile the command reads, named either way. NULL when it
 * names none (an unknown name is the loader's error to give); else a
 * heap string the caller frees. */
char *ooc_cli_input_file(const char *subdir, const char *name);

/* The first option given that shapes the model (-b, --set, --dtype,
 * --precision, --optimizer), as spelled, or NULL: for the commands where
 * no model is loaded from them. */
const char *ooc_cli_model_option(const ooc_cli_args *a);

/* ooc_cli_check_distinct for outputs paths[0 .. n) (opts their
 * options, n <= 6) against the model and profile a command reads, named
 * by path or zoo name (ooc_cli_input_file; NULL: none): "-m and -o name
 * the same file ...", with model_opt and hw_opt as the inputs' names. */
int ooc_cli_check_not_inputs(const char *model_opt, const char *model,
                             const char *hw_opt, const char *hw,
                             const char *const *opts,
                             const char *const *paths, int n, ooc_err *err);

/* The guard of commands with several files: paths[i] (NULL: not given)
 * are the files named by opts[i] ("--trace", "PLAN.json"), of which the
 * first n_in are read and the rest written. Fails when an output is the
 * same file (ooc_cli_same_file) as another output or as an input:
 * "--trace and --mem-csv name the same file 'o/x'" (the later path as
 * given). Inputs may share a file. */
int ooc_cli_check_distinct(const char *const *opts,
                           const char *const *paths, int n, int n_in,
                           ooc_err *err);

/* ooc_cli_check_distinct after every output given can be written
 * (ooc_atomic_check; its error prefixed with the option): the guard of
 * a command that writes its outputs after long work, so that none is
 * left behind when a later one fails. */
int ooc_cli_check_outputs(const char *const *opts, const char *const *paths,
                          int n, int n_in, ooc_err *err);

/* Parse a -j value: an integer in 1..1024 ("-j 0: must be 1..1024"). */
int ooc_cli_parse_jobs(const char *s, int *jobs, ooc_err *err);

/* Parse a --optimizer value: "sgd", "momentum" (SGD with momentum, the
 * default) or "adam". */
int ooc_cli_parse_optimizer(const char *s, ooc_optimizer *out, ooc_err *err);

#endif
