/* report/table.c — string tables (table.h): rows of cells, RFC 4180 CSV
 * in and out, flat JSON out, atomic saves (base/atomic.h).
 *
 * Ownership: a table owns its column names and rows (string vectors,
 * base/strv.h). Cost: reading is one pass over the file with a cell buffer
 * that doubles; writing is O(cells).
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/table.h"
#include "base/atomic.h"
#include "base/strv.h"
#include "base/util.h"

void
ooc_table_init(ooc_table *t)
{
  *t = (ooc_table){ .ncols = 0 };
}

void
ooc_table_fini(ooc_table *t)
{
  if (!t)
    return;
  for (int64_t i = 0; i < t->nrows; i++)
    ooc_strv_free(t->rows[i], t->ncols);
  free(t->rows);
  free(t->line);
  ooc_strv_free(t->cols, t->ncols);
  *t = (ooc_table){ .ncols = 0 };
}

int
ooc_table_col(const ooc_table *t, const char *name)
{
  for (int i = 0; i < t->ncols; i++)
    if (strcmp(t->cols[i], name) == 0)
      return i;
  return -1;
}

int
ooc_table_push_line(ooc_table *t, char **row, int64_t line)
{
  if (t->nrows == t->cap) {
    int64_t nc = t->cap ? t->cap * 2 : 64;
    char ***nr = realloc(t->rows, (size_t)nc * sizeof *nr);
    int64_t *nl;
    if (!nr)
      return OOC_ENOMEM;
    t->rows = nr;
    if (!(nl = realloc(t->line, (size_t)nc * sizeof *nl)))
      return OOC_ENOMEM;
    t->line = nl;
    t->cap = nc;
  }
  t->line[t->nrows] = line;
  t->rows[t->nrows++] = row;
  return OOC_OK;
}

int
ooc_table_push(ooc_table *t, char **row)
{
  return ooc_table_push_line(t, row, 0);
}

int64_t
ooc_table_row_line(const ooc_table *t, int64_t r)
{
  return t->line != NULL && t->line[r] > 0 ? t->line[r] : r + 2;
}

int
ooc_table_read_csv(const char *path, ooc_table *t, ooc_err *err)
{
  char *text = NULL, *p, *cell = NULL;
  size_t len, cl = 0, ccap = 0;
  char **rec = NULL;
  int nrec = 0, rcap = 0, line = 1, rc = OOC_OK, header = 1, last = 0;
  int rec_line = 1;             /* the line the record starts on */

  if ((rc = ooc_read_file(path, &text, &len, err)))
    return rc;
  p = text;
  ooc_table_init(t);
  /* last: a ',' ended the file, so one more (empty) field ends the
   * record ("a,b," holds three). */
  while (*p || last) {
    int quoted = 0, end_rec = 0;
    if (nrec == 0)
      rec_line = line;
    last = 0;
    cl = 0;
    if (*p == '"') {
      quoted = 1;
      p++;
    }
    for (;;) {
      char ch = *p;
      if (quoted) {
        if (!ch) {
          rc = ooc_err_set(err, OOC_EPARSE, "%s:%d: unterminated quote",
                           path, rec_line);
          goto fail;
        }
        if (ch == '"' && p[1] == '"') {
          p += 2;
        } else if (ch == '"') {
          p++;
          quoted = 0;
          continue;
        } else {
          if (ch == '\n')
            line++;
          p++;
        }
      } else {
        if (!ch || ch == ',' || ch == '\n' || ch == '\r')
          break;
        p++;
      }
      if (cl + 2 > ccap) {
        size_t nc = ccap ? ccap * 2 : 64;
        char *ncell = realloc(cell, nc);
        if (!ncell)
          goto nomem;
        cell = ncell;
        ccap = nc;
      }
      cell[cl++] = ch;
    }
    if (nrec == rcap) {
      int nc = rcap ? rcap * 2 : 64;
      char **nr = realloc(rec, (size_t)nc * sizeof *nr);
      if (!nr)
        goto nomem;
      rec = nr;
      rcap = nc;
    }
    rec[nrec] = malloc(cl + 1);
    if (!rec[nrec])
      goto nomem;
    if (cl)
      memcpy(rec[nrec], cell, cl);
    rec[nrec][cl] = '\0';
    nrec++;
    if (*p == ',') {
      p++;
      last = *p == '\0';
      continue;
    }
    if (*p == '\r')
      p++;
    if (*p == '\n')
      p++;
    end_rec = 1;
    if (end_rec) {
      if (header) {
        t->cols = rec;
        t->ncols = nrec;
        header = 0;
      } else {
        char **r;
        if (nrec != t->ncols) {
          rc = ooc_err_set(err, OOC_EPARSE,
                           "%s:%d: %d fields, the header has %d", path,
                           rec_line, nrec, t->ncols);
          goto fail;
        }
        r = realloc(rec, (size_t)nrec * sizeof *r);
        if (!r)
          goto nomem;
        if (ooc_table_push_line(t, r, rec_line)) {
          rec = r;
          goto nomem;
        }
      }
      rec = NULL;
      nrec = rcap = 0;
      line++;
    }
  }
  if (header) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: empty file (no header)", path);
    goto fail;
  }
  free(cell);
  free(text);
  return OOC_OK;
nomem:
  rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
fail:
  ooc_strv_free(rec, nrec);
  free(cell);
  free(text);
  ooc_table_fini(t);
  return rc;
}

void
ooc_csv_cell(FILE *f, const char *s)
{
  if (strpbrk(s, ",\"\n\r")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"')
        fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
}

int
ooc_table_write_csv(FILE *f, const ooc_table *t)
{
  for (int i = 0; i < t->ncols; i++) {
    if (i)
      fputc(',', f);
    ooc_csv_cell(f, t->cols[i]);
  }
  fputc('\n', f);
  for (int64_t r = 0; r < t->nrows; r++) {
    for (int i = 0; i < t->ncols; i++) {
      if (i)
        fputc(',', f);
      ooc_csv_cell(f, t->rows[r][i]);
    }
    fputc('\n', f);
  }
  return ferror(f) ? OOC_EIO : OOC_OK;
}

static int
is_name_col(const char *c)
{
  static const char *const names[] = { "model", "set", "hw", "allocator",
    "budget", "planner", "precision", "dtype", "optimizer", "oom_op",
    "oom_reason",
    "plan_note", "lane", "phase", "layer", NULL };
  for (int i = 0; names[i]; i++)
    if (strcmp(c, names[i]) == 0)
      return 1;
  return 0;
}

static int
is_json_number(const char *s)
{
  char *end;
  double v;
  if (!*s || *s == '+' || *s == '.' || isspace((unsigned char)*s))
    return 0;
  if ((*s == '0' && s[1] && s[1] != '.' && s[1] != 'e' && s[1] != 'E'))
    return 0;
  v = strtod(s, &end);
  return *end == '\0' && isfinite(v) && !strchr(s, 'x') && !strchr(s, 'X') &&
         !strchr(s, 'n') && !strchr(s, 'N') && s[strlen(s) - 1] != '.';
}

static void
json_str(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch == '\n')
      fputs("\\n", f);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

int
ooc_table_write_json(FILE *f, const ooc_table *t)
{
  fputs("[", f);
  for (int64_t r = 0; r < t->nrows; r++) {
    fputs(r ? ",\n  {" : "\n  {", f);
    for (int i = 0; i < t->ncols; i++) {
      const char *v = t->rows[r][i];
      if (i)
        fputs(", ", f);
      json_str(f, t->cols[i]);
      fputs(": ", f);
      if (strcmp(t->cols[i], "feasible") == 0 && (!strcmp(v, "0") ||
                                                  !strcmp(v, "1")))
        fputs(v[0] == '1' ? "true" : "false", f);
      else if (!*v)
        fputs("null", f);
      else if (!is_name_col(t->cols[i]) && is_json_number(v))
        fputs(v, f);
      else
        json_str(f, v);
    }
    fputs("}", f);
  }
  fputs(t->nrows ? "\n]\n" : "]\n", f);
  return ferror(f) ? OOC_EIO : OOC_OK;
}

int
ooc_table_same_cols(const ooc_table *a, const ooc_table *b)
{
  if (a->ncols != b->ncols)
    return 0;
  for (int i = 0; i < a->ncols; i++)
    if (strcmp(a->cols[i], b->cols[i]) != 0)
      return 0;
  return 1;
}

int
ooc_table_save_csv(const ooc_table *t, const char *path, ooc_err *err)
{
  ooc_atomic_file af;
  int rc;

  if ((rc = ooc_atomic_open(&af, path, err)) < 0)
    return rc;
  ooc_table_write_csv(af.f, t);
  return ooc_atomic_commit(&af, err);
}

int
ooc_table_save_json(const ooc_table *t, const char *path, ooc_err *err)
{
  ooc_atomic_file af;
  int rc;

  if ((rc = ooc_atomic_open(&af, path, err)) < 0)
    return rc;
  ooc_table_write_json(af.f, t);
  return ooc_atomic_commit(&af, err);
}
