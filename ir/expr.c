/* ir/expr.c — recursive-descent evaluator of model expressions (expr.h).
 *
 * One pass, no allocation: unary operators and primaries are recursive
 * descent, binary operators precedence climbing over one table; each
 * function consumes its part of the string and returns the value.
 * `skip` > 0 marks a branch that short-circuiting does not take; there
 * runtime faults (division by zero, overflow) are not reported, but syntax
 * and unknown names still are. Scopes (ooc_expr_scope) are the only part
 * that allocates: a variable stack and its chained hash index.
 * Owned by the model module; O(length of the expression), each name O(1)
 * on average in a scope.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/expr.h"
#include "base/util.h"

struct parser {
  const char *src;   /* whole expression, for messages */
  const char *p;     /* cursor */
  const ooc_expr_var *vars;
  int n_vars;
  const ooc_expr_scope *scope;   /* when set, names are looked up here */
  int skip;          /* > 0 inside a branch that is not taken */
  int depth;         /* nesting guard */
  int rc;            /* first error */
  ooc_err *err;
};

#define MAX_DEPTH 200

ooc_value
ooc_value_int(int64_t i)
{
  ooc_value v = { .is_int = 1, .i = i, .d = (double)i };
  return v;
}

ooc_value
ooc_value_double(double d)
{
  ooc_value v = { .is_int = 0, .i = 0, .d = d };
  return v;
}

ooc_value
ooc_value_from_number(double d)
{
  if (isfinite(d) && d == floor(d) && d >= -9.2e18 && d <= 9.2e18)
    return ooc_value_int((int64_t)d);
  return ooc_value_double(d);
}

static int
fail(struct parser *ps, int code, const char *what)
{
  if (ps->rc == 0) {
    ps->rc = code;
    /* A long expression is cut so that the reason still fits. */
    if (strlen(ps->src) > 80)
      ooc_err_set(ps->err, code, "expression '%.60s...': %s", ps->src, what);
    else
      ooc_err_set(ps->err, code, "expression '%s': %s", ps->src, what);
  }
  return code;
}

/* A runtime fault: reported only on the branch actually taken. */
static ooc_value
fault(struct parser *ps, int code, const char *what)
{
  if (ps->skip == 0)
    fail(ps, code, what);
  return ooc_value_int(0);
}

static void
ws(struct parser *ps)
{
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
         *ps->p == '\r')
    ps->p++;
}

/* Consume the punctuation character c if it comes next ("!" does not
 * match the start of "!="). Binary operators go through peek_op(). */
static int
eat(struct parser *ps, char c)
{
  ws(ps);
  if (ps->p[0] != c || (c == '!' && ps->p[1] == '='))
    return 0;
  ps->p++;
  return 1;
}

static int
truth(ooc_value v)
{
  return v.is_int ? v.i != 0 : v.d != 0.0;
}

static ooc_value expr(struct parser *ps);

/* Binary operators, in the order of peek_op()'s table. */
enum { OP_NONE, OP_OR, OP_AND, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
       OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD };

static ooc_value
arith(struct parser *ps, int op, ooc_value a, ooc_value b)
{
  if (a.is_int && b.is_int) {
    int64_t r = 0;
    int ovf = 0;
    switch (op) {
    case OP_ADD: ovf = __builtin_add_overflow(a.i, b.i, &r); break;
    case OP_SUB: ovf = __builtin_sub_overflow(a.i, b.i, &r); break;
    case OP_MUL: ovf = __builtin_mul_overflow(a.i, b.i, &r); break;
    case OP_DIV:
    case OP_MOD:
      if (b.i == 0)
        return fault(ps, OOC_EINVAL, "division by zero");
      if (a.i == INT64_MIN && b.i == -1)
        return fault(ps, OOC_ERANGE, "integer overflow");
      r = op == OP_DIV ? a.i / b.i : a.i % b.i;
      break;
    default: break;
    }
    if (ovf)
      return fault(ps, OOC_ERANGE, "integer overflow");
    return ooc_value_int(r);
  }
  {
    double x = a.d, y = b.d, r = 0;
    switch (op) {
    case OP_ADD: r = x + y; break;
    case OP_SUB: r = x - y; break;
    case OP_MUL: r = x * y; break;
    case OP_DIV:
      if (y == 0.0)
        return fault(ps, OOC_EINVAL, "division by zero");
      r = x / y;
      break;
    case OP_MOD:
      if (y == 0.0)
        return fault(ps, OOC_EINVAL, "division by zero");
      r = fmod(x, y);
      break;
    default: break;
    }
    if (!isfinite(r))
      return fault(ps, OOC_ERANGE, "result is not finite");
    return ooc_value_double(r);
  }
}

static int
compare(int op, ooc_value a, ooc_value b)
{
  int c;
  if (a.is_int && b.is_int)
    c = a.i < b.i ? -1 : a.i > b.i;
  else
    c = a.d < b.d ? -1 : a.d > b.d;
  switch (op) {
  case OP_EQ: return c == 0;
  case OP_NE: return c != 0;
  case OP_LT: return c < 0;
  case OP_LE: return c <= 0;
  case OP_GT: return c > 0;
  default: return c >= 0;
  }
}

static ooc_value
rounding(struct parser *ps, ooc_value x, int up)
{
  double r;
  if (x.is_int)
    return x;
  r = up ? ceil(x.d) : floor(x.d);
  if (r < -9.2e18 || r > 9.2e18)
    return fault(ps, OOC_ERANGE, "ceil/floor result out of integer range");
  return ooc_value_int((int64_t)r);
}

static ooc_value
call(struct parser *ps, const char *name, size_t len)
{
  ooc_value args[2];
  int n = 0, want;

  if (len == 3 && strncmp(name, "min", 3) == 0) want = 2;
  else if (len == 3 && strncmp(name, "max", 3) == 0) want = 2;
  else if (len == 4 && strncmp(name, "ceil", 4) == 0) want = 1;
  else if (len == 5 && strncmp(name, "floor", 5) == 0) want = 1;
  else {
    fail(ps, OOC_EINVAL, "unknown function (use min, max, ceil, floor)");
    return ooc_value_int(0);
  }
  ws(ps);
  if (*ps->p != ')') {
    for (;;) {
      ooc_value v = expr(ps);
      if (ps->rc)
        return v;
      if (n < 2)
        args[n] = v;
      n++;
      if (!eat(ps, ','))
        break;
    }
  }
  if (!eat(ps, ')')) {
    fail(ps, OOC_EINVAL, "expected ')' after function arguments");
    return ooc_value_int(0);
  }
  if (n != want) {
    fail(ps, OOC_EINVAL, want == 2 ? "min/max take two arguments"
                                   : "ceil/floor take one argument");
    return ooc_value_int(0);
  }
  if (want == 1)
    return rounding(ps, args[0], name[0] == 'c');
  {
    int lt = compare(OP_LT, args[0], args[1]);
    int take0 = name[1] == 'i' ? lt : !lt;
    ooc_value a = args[0], b = args[1];
    if (!(a.is_int && b.is_int)) {
      a = ooc_value_double(a.d);
      b = ooc_value_double(b.d);
    }
    return take0 ? a : b;
  }
}

static ooc_value
primary(struct parser *ps)
{
  const char *s;

  ws(ps);
  s = ps->p;
  if (*s == '(') {
    ooc_value v;
    ps->p++;
    v = expr(ps);
    if (ps->rc)
      return v;
    if (!eat(ps, ')'))
      fail(ps, OOC_EINVAL, "expected ')'");
    return v;
  }
  if (isdigit((unsigned char)*s) ||
      (*s == '.' && isdigit((unsigned char)s[1]))) {
    char *end;
    int is_real = 0;
    const char *q = s;
    while (isalnum((unsigned char)*q) || *q == '.' ||
           ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E'))) {
      if (*q == '.' || *q == 'e' || *q == 'E')
        is_real = 1;
      q++;
    }
    errno = 0;
    if (!is_real) {
      long long v = strtoll(s, &end, 10);
      if (end != q) {
        fail(ps, OOC_EINVAL, "malformed number");
        return ooc_value_int(0);
      }
      if (errno == ERANGE) {
        fail(ps, OOC_ERANGE, "integer literal overflows");
        return ooc_value_int(0);
      }
      ps->p = end;
      return ooc_value_int(v);
    } else {
      double v = strtod(s, &end);
      if (end != q) {
        fail(ps, OOC_EINVAL, "malformed number");
        return ooc_value_int(0);
      }
      if (errno == ERANGE || !isfinite(v)) {
        fail(ps, OOC_ERANGE, "number out of range");
        return ooc_value_int(0);
      }
      ps->p = end;
      return ooc_value_double(v);
    }
  }
  if (isalpha((unsigned char)*s) || *s == '_') {
    const char *q = s;
    size_t len;
    int i;
    while (isalnum((unsigned char)*q) || *q == '_')
      q++;
    len = (size_t)(q - s);
    ps->p = q;
    ws(ps);
    if (*ps->p == '(') {
      ps->p++;
      return call(ps, s, len);
    }
    if (ps->scope != NULL) {
      if ((i = ooc_expr_scope_find(ps->scope, s, len)) >= 0)
        return ps->scope->vars[i].v;
    } else {
      for (i = ps->n_vars - 1; i >= 0; i--)
        if (strncmp(ps->vars[i].name, s, len) == 0 &&
            ps->vars[i].name[len] == '\0')
          return ps->vars[i].v;
    }
    if (ps->rc == 0) {
      char what[160];
      snprintf(what, sizeof what, "unknown name '%.*s'",
               (int)(len > 100 ? 100 : len), s);
      fail(ps, OOC_EINVAL, what);
    }
    return ooc_value_int(0);
  }
  fail(ps, OOC_EINVAL, *s ? "unexpected character" : "unexpected end");
  return ooc_value_int(0);
}

static ooc_value
unary(struct parser *ps)
{
  ooc_value v;
  if (++ps->depth > MAX_DEPTH) {
    fail(ps, OOC_EINVAL, "nested too deeply");
    return ooc_value_int(0);
  }
  if (eat(ps, '-')) {
    v = unary(ps);
    if (!ps->rc)
      v = arith(ps, OP_SUB, ooc_value_int(0), v);
  } else if (eat(ps, '+')) {
    v = unary(ps);
  } else if (eat(ps, '!')) {
    v = unary(ps);
    v = ooc_value_int(!truth(v));
  } else {
    v = primary(ps);
  }
  ps->depth--;
  return v;
}

/* Binary operators: precedence climbing over one table, so a token costs
 * one look-up instead of a descent through every precedence level. */
static int
peek_op(struct parser *ps, int *prec, int *len)
{
  const char *p;
  ws(ps);
  p = ps->p;
  *len = 2;
  switch (p[0]) {
  case '|': *prec = 1; return p[1] == '|' ? OP_OR : OP_NONE;
  case '&': *prec = 2; return p[1] == '&' ? OP_AND : OP_NONE;
  case '=': *prec = 3; return p[1] == '=' ? OP_EQ : OP_NONE;
  case '!': *prec = 3; return p[1] == '=' ? OP_NE : OP_NONE;
  case '<':
    *prec = 4;
    if (p[1] == '=')
      return OP_LE;
    *len = 1;
    return OP_LT;
  case '>':
    *prec = 4;
    if (p[1] == '=')
      return OP_GE;
    *len = 1;
    return OP_GT;
  case '+': *prec = 5; *len = 1; return OP_ADD;
  case '-': *prec = 5; *len = 1; return OP_SUB;
  case '*': *prec = 6; *len = 1; return OP_MUL;
  case '/': *prec = 6; *len = 1; return OP_DIV;
  case '%': *prec = 6; *len = 1; return OP_MOD;
  default: return OP_NONE;
  }
}

static ooc_value
binary(struct parser *ps, int min_prec)
{
  ooc_value a = unary(ps), b;
  while (!ps->rc) {
    int prec = 0, len = 0, op = peek_op(ps, &prec, &len);
    if (op == OP_NONE || prec < min_prec)
      break;
    ps->p += len;
    if (op == OP_AND || op == OP_OR) {
      int t = truth(a), skip = op == OP_AND ? !t : t;
      if (skip)
        ps->skip++;
      b = binary(ps, prec + 1);
      if (skip)
        ps->skip--;
      a = ooc_value_int(op == OP_AND ? t && truth(b) : t || truth(b));
      continue;
    }
    b = binary(ps, prec + 1);
    if (ps->rc)
      break;
    if (op <= OP_GE)
      a = ooc_value_int(compare(op, a, b));
    else
      a = arith(ps, op, a, b);
  }
  return a;
}

static ooc_value
expr(struct parser *ps)
{
  ooc_value c = binary(ps, 1), a, b;
  int t;
  if (ps->rc || !eat(ps, '?'))
    return c;
  if (++ps->depth > MAX_DEPTH) {
    fail(ps, OOC_EINVAL, "nested too deeply");
    return c;
  }
  t = truth(c);
  if (!t)
    ps->skip++;
  a = expr(ps);
  if (!t)
    ps->skip--;
  if (ps->rc)
    return a;
  if (!eat(ps, ':')) {
    fail(ps, OOC_EINVAL, "expected ':' in '? :'");
    return a;
  }
  if (t)
    ps->skip++;
  b = expr(ps);
  if (t)
    ps->skip--;
  ps->depth--;
  return t ? a : b;
}

/* ---- scopes ------------------------------------------------------------ */

void
ooc_expr_scope_init(ooc_expr_scope *sc)
{
  memset(sc, 0, sizeof *sc);
}

void
ooc_expr_scope_fini(ooc_expr_scope *sc)
{
  if (sc == NULL)
    return;
  free(sc->vars);
  free(sc->hash);
  free(sc->next);
  free(sc->head);
  ooc_expr_scope_init(sc);
}

/* The project's FNV-1a (base/util.h) of name[0..len), to the bucket
 * index's width. */
static uint32_t
name_hash(const char *name, size_t len)
{
  return (uint32_t)ooc_hash64(name, len, OOC_HASH_SEED);
}

/* Make room for one more variable: grow the arrays, and double the
 * buckets (relinking every variable, bottom to top) when the load would
 * pass 1. */
static int
scope_reserve(ooc_expr_scope *sc)
{
  if (sc->n == sc->cap) {
    int c;
    ooc_expr_var *v;
    uint32_t *h;
    int32_t *nx;
    if (sc->cap > INT_MAX / 2)
      return OOC_ENOMEM;
    c = sc->cap ? 2 * sc->cap : 64;
    v = realloc(sc->vars, (size_t)c * sizeof *v);
    if (v == NULL)
      return OOC_ENOMEM;
    sc->vars = v;
    h = realloc(sc->hash, (size_t)c * sizeof *h);
    if (h == NULL)
      return OOC_ENOMEM;
    sc->hash = h;
    nx = realloc(sc->next, (size_t)c * sizeof *nx);
    if (nx == NULL)
      return OOC_ENOMEM;
    sc->next = nx;
    sc->cap = c;
  }
  if ((uint32_t)sc->n + 1 > sc->n_buckets) {
    uint32_t nb = sc->n_buckets ? 2 * sc->n_buckets : 64, b;
    int32_t *hd = malloc((size_t)nb * sizeof *hd);
    int i;
    if (hd == NULL)
      return OOC_ENOMEM;
    for (b = 0; b < nb; b++)
      hd[b] = -1;
    for (i = 0; i < sc->n; i++) {
      b = sc->hash[i] & (nb - 1);
      sc->next[i] = hd[b];
      hd[b] = i;
    }
    free(sc->head);
    sc->head = hd;
    sc->n_buckets = nb;
  }
  return OOC_OK;
}

int
ooc_expr_scope_push(ooc_expr_scope *sc, const char *name, ooc_value v)
{
  uint32_t b;
  int rc;

  if ((rc = scope_reserve(sc)))
    return rc;
  sc->vars[sc->n].name = name;
  sc->vars[sc->n].v = v;
  sc->hash[sc->n] = name_hash(name, strlen(name));
  b = sc->hash[sc->n] & (sc->n_buckets - 1);
  sc->next[sc->n] = sc->head[b];
  sc->head[b] = sc->n;
  sc->n++;
  return OOC_OK;
}

void
ooc_expr_scope_pop_to(ooc_expr_scope *sc, int n)
{
  while (sc->n > n) {
    sc->n--;
    sc->head[sc->hash[sc->n] & (sc->n_buckets - 1)] = sc->next[sc->n];
  }
}

int
ooc_expr_scope_find(const ooc_expr_scope *sc, const char *name, size_t len)
{
  uint32_t h;
  int32_t i;

  if (sc->n == 0)
    return -1;
  h = name_hash(name, len);
  for (i = sc->head[h & (sc->n_buckets - 1)]; i >= 0; i = sc->next[i])
    if (sc->hash[i] == h && strncmp(sc->vars[i].name, name, len) == 0 &&
        sc->vars[i].name[len] == '\0')
      return i;
  return -1;
}

/* ---- entry points ------------------------------------------------------ */

static int
eval(struct parser *ps, ooc_value *out)
{
  ooc_value v;

  v = expr(ps);
  if (ps->rc)
    return ps->rc;
  ws(ps);
  if (*ps->p != '\0')
    return fail(ps, OOC_EINVAL, *ps->p == ')' ? "unbalanced ')'"
                                              : "unexpected text after "
                                                "the expression");
  *out = v;
  return OOC_OK;
}

int
ooc_expr_eval(const char *src, const ooc_expr_var *vars, int n_vars,
              ooc_value *out, ooc_err *err)
{
  struct parser ps = { .src = src, .p = src, .vars = vars, .n_vars = n_vars,
                       .err = err };

  return eval(&ps, out);
}

int
ooc_expr_eval_scope(const char *src, const ooc_expr_scope *sc,
                    ooc_value *out, ooc_err *err)
{
  struct parser ps = { .src = src, .p = src, .scope = sc, .err = err };

  return eval(&ps, out);
}
