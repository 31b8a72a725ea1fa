/* ir/expr.h — the small expression language of model files.
 *
 * Numeric fields of a model (models/README.md, "Expressions") are numbers
 * or strings such as "(depth - 2) / 3" or "s < 2 ? 2 : 3", evaluated over
 * the model's params, its `let` values and the repeat variables in scope.
 * Values are integers (int64, overflow-checked) or doubles: a literal
 * without '.' or an exponent is an integer, and so are the results of
 * integer arithmetic, comparisons, ceil() and floor(). `/` and `%` on two
 * integers truncate toward zero as in C; with a double on either side `/`
 * is the real quotient.
 *
 * Grammar (C precedence): ?: || && (== !=) (< <= > >=) (+ -) (* / %)
 * unary (- + !), primary: number, name, name(args), ( expr ). Functions:
 * min(a,b), max(a,b), ceil(x), floor(x). && || and ?: short-circuit, so
 * "n != 0 && m / n > 1" never divides by zero.
 *
 * The evaluator parses and evaluates in one recursive-descent pass over the
 * string: O(length), no allocation. Names are resolved against a caller's
 * array, searched from the end so that inner scopes shadow outer ones
 * (O(variables) per name: for a handful), or against an ooc_expr_scope,
 * the same stack indexed by a hash table (O(1) per name on average: for
 * model files with any number of params and lets).
 */
#ifndef OOC_EXPR_H
#define OOC_EXPR_H

#include <stdint.h>
#include "base/error.h"

typedef struct ooc_value {
  int is_int;   /* 1: i holds the value (d mirrors it); 0: d holds it */
  int64_t i;
  double d;
} ooc_value;

typedef struct ooc_expr_var {
  const char *name;  /* not owned */
  ooc_value v;
} ooc_expr_var;

/* A stack of variables, later entries shadowing earlier ones, with a
 * chained hash index: head[bucket] is the topmost variable of that bucket
 * and next[i] the one below variable i, so popping the top restores the
 * index in O(1) and a lookup meets the innermost definition first.
 * Caller-embedded (ooc_expr_scope_init/_fini); it owns its arrays, not the
 * names, which must outlive it. */
typedef struct ooc_expr_scope {
  ooc_expr_var *vars;   /* vars[0..n) */
  uint32_t *hash;       /* per variable: the hash of its name */
  int32_t *next;        /* per variable: the one below it in its bucket */
  int32_t *head;        /* per bucket: the topmost variable, or -1 */
  int n, cap;
  uint32_t n_buckets;   /* a power of two, >= n */
} ooc_expr_scope;

void ooc_expr_scope_init(ooc_expr_scope *sc);
void ooc_expr_scope_fini(ooc_expr_scope *sc);

/* Push name = v (name is not copied). OOC_OK or OOC_ENOMEM (the scope is
 * unchanged). Amortised O(1). */
int ooc_expr_scope_push(ooc_expr_scope *sc, const char *name, ooc_value v);

/* Pop variables until n remain (n <= sc->n). O(popped). */
void ooc_expr_scope_pop_to(ooc_expr_scope *sc, int n);

/* The index of the innermost variable named name[0..len), or -1. */
int ooc_expr_scope_find(const ooc_expr_scope *sc, const char *name,
                        size_t len);

/* Integer and double constructors. */
ooc_value ooc_value_int(int64_t i);
ooc_value ooc_value_double(double d);

/* A double that holds an exact integer in int64 range becomes an int. */
ooc_value ooc_value_from_number(double d);

/* Evaluate src over vars[0..n_vars) (later entries shadow earlier ones).
 * Returns OOC_OK and *out, or OOC_EINVAL (syntax, unknown name, division by
 * zero) / OOC_ERANGE (integer overflow, non-finite result) with err
 * "expression 'SRC': WHAT". */
int ooc_expr_eval(const char *src, const ooc_expr_var *vars, int n_vars,
                  ooc_value *out, ooc_err *err);

/* The same over the variables of a scope. */
int ooc_expr_eval_scope(const char *src, const ooc_expr_scope *sc,
                        ooc_value *out, ooc_err *err);

#endif
