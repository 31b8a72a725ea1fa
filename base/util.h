/* base/util.h — small shared helpers: sizes, data-file lookup, files, hashing.
 *
 * Data lookup: models, profiles and plot scripts are found by name in the
 * data directory: the one named by --datadir (ooc_data_set_dir), else by
 * $OOCSIM_DATADIR, else the installed $(pkgdatadir) when the running binary
 * is the installed one and the source tree it was built from when it is not
 * (so `./oocsim` in a build tree uses the tree's models/ and hwprofiles/),
 * then the other of those two. The configured paths come from base/paths.h,
 * which make generates from the configured prefix and rewrites whenever it
 * changes, so every object that sees them is rebuilt (Makefile.am).
 */
#ifndef OOC_UTIL_H
#define OOC_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"
#include "base/paths.h"

/* Parse "16GiB", "8GB", "512MiB", "5.5GiB", "123" into bytes: decimal
 * digits, a fraction allowed, then an optional suffix: B, K, KB, KiB, M,
 * MB, MiB, G, GB, GiB, T, TB, TiB (KB=1e3, KiB=1024), as oocsim(1)
 * documents SIZE. Rejects negatives, hex (0x10), exponents (1e9), junk
 * and overflow with err naming `what`. */
int ooc_parse_size(const char *s, const char *what, uint64_t *out,
                   ooc_err *err);
/* A device budget (--budget): a SIZE, as above, of at least one byte;
 * errors name "--budget" and the value given. */
int ooc_parse_budget(const char *s, uint64_t *out, ooc_err *err);
/* Strict integer / double parsing with the same error style. */
int ooc_parse_int(const char *s, const char *what, int64_t *out, ooc_err *err);
int ooc_parse_double(const char *s, const char *what, double *out,
                     ooc_err *err);

/* Human-readable bytes ("1.50 GiB", "523.00 KiB", "172 B") into buf: the
 * largest binary unit that keeps the value >= 1. */
const char *ooc_fmt_bytes(uint64_t b, char *buf, size_t n);

/* A count with a decimal unit ("172", "61.1 K", "25.6 M", "1.5 B") into
 * buf: parameters, FLOPs per sample and the like. */
const char *ooc_fmt_count(uint64_t v, char *buf, size_t n);
/* FLOPs in adaptive decimal units: "840 FLOP", "1.53 MFLOP", "4.09 GFLOP",
 * "12.30 TFLOP" (three significant figures at least). */
const char *ooc_fmt_flops(double flops, char *buf, size_t n);

/* Line and column (both from 1) of position `at` in text, for messages
 * about where a parser stopped. O(at - text). */
void ooc_text_pos(const char *text, const char *at, int *line, int *col);

/* "a, b, c" of a NULL-terminated list of names into buf (n bytes; names
 * that do not fit are left out). Returns buf. */
const char *ooc_join_names(const char *const *names, char *buf, size_t n);

/* Read a whole file into a NUL-terminated heap buffer (caller frees).
 * Refuses files over 256 MiB and files containing NUL bytes. */
int ooc_read_file(const char *path, char **out, size_t *len, ooc_err *err);

/* Before a JSON text is parsed: refuse one longer than max_bytes ("too
 * large: 300.00 MiB, at most 64.00 MiB for a model"), or nested deeper
 * than max_depth arrays and objects ("nested too deep at line 3, column
 * 65: more than 64 levels"), naming origin and the kind of file. The
 * parser's memory grows with both (tens of bytes per input byte), and its
 * own depth limit would only say "malformed". Also refuse text that is not
 * UTF-8 ("not UTF-8 text: byte 0xff at line 2, column 12") and a string
 * holding \u0000, which the parser would cut short there. O(len), no
 * allocation. */
int ooc_json_precheck(const char *text, size_t len, size_t max_bytes,
                      int max_depth, const char *origin, const char *kind,
                      ooc_err *err);

/* The first control character of s (a byte below 0x20, or 0x7f), or -1:
 * a name that holds one would reach a terminal as it is. O(length). */
int ooc_control_char(const char *s);

/* After a JSON text parsed: refuse what the parser lets through but RFC
 * 8259 does not, so that every oocsim input is JSON another tool reads
 * alike: a raw control character in a string ("a string holds control
 * character 0x1b at line 9, column 18; write it escaped"), one outside a
 * string other than tab, newline and carriage return, and a number with a
 * leading zero ("07"). After the parse, so that a file that is not JSON
 * at all gets the parser's message, naming where it stops. O(len), no
 * allocation. */
int ooc_json_strict(const char *text, size_t len, const char *origin,
                    const char *kind, ooc_err *err);

/* The first key given twice in one object of the JSON tree at node, as
 * "origin: key 'k' given twice (in <where>)"; OOC_OK when none. The
 * parser keeps both and lookups see the first, so a repeated key would
 * silently lose a value. Objects are walked in document order, each
 * object's keys checked before its members are entered, so the key
 * reported is the first repetition met in that order. O(n log n) in each
 * object's size (its keys are sorted); OOC_ENOMEM when that sort's array
 * cannot be had. */
struct cJSON;
int ooc_json_check_dups(const struct cJSON *node, const char *origin,
                        ooc_err *err);

/* Resolve a model/profile name: if it contains '/' or ends in ".json" it is
 * a path; otherwise "<datadir>/<subdir>/<name>.json". The result is a heap
 * string (caller frees). OOC_ENOTFOUND lists the available names. */
int ooc_data_find(const char *subdir, const char *name, char **path,
                  ooc_err *err);

/* List the names (without .json) in subdir, sorted; caller frees each
 * string and the array with ooc_data_list_free. */
int ooc_data_list(const char *subdir, char ***names, int *n, ooc_err *err);
void ooc_data_list_free(char **names, int n);

/* The data directory actually used ("" if none). */
const char *ooc_data_dir(void);

/* Use dir, and only dir, as the data directory (--datadir; takes precedence
 * over $OOCSIM_DATADIR). dir is borrowed and must outlive every lookup.
 * OOC_EINVAL "--datadir X: not a directory". Not thread-safe: call it
 * before any lookup. */
int ooc_data_set_dir(const char *dir, ooc_err *err);

/* Where data is read from, for --version and error messages: "DIR (ORIGIN)"
 * with ORIGIN one of --datadir, OOCSIM_DATADIR, installed, source tree; or
 * "none: ..." naming the directories tried. Returns buf. */
const char *ooc_data_dir_describe(char *buf, size_t n);

/* Monotonic wall clock in seconds (sim_wall_s, benchmarks). */
double ooc_wall_s(void);

/* The same in integer nanoseconds (measurements that are timed in ns). */
int64_t ooc_mono_ns(void);

/* The median of v[0..n) (sorts v; the mean of the two middle values for
 * an even n); -1 for n 0. */
int64_t ooc_median_i64(int64_t *v, int n);

/* FNV-1a 64-bit hash of n bytes, continuing from seed (OOC_HASH_SEED, the
 * FNV offset basis, to start): calibration signatures, layer names, model
 * fingerprints, sweep rows. */
uint64_t ooc_hash64(const void *data, size_t n, uint64_t seed);
#define OOC_HASH_SEED 0xcbf29ce484222325ULL

#endif
