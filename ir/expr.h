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
 * array, searched from the end so that inner scopes shadow outer ones.
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

#endif
