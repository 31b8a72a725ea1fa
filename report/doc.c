/* report/doc.c — Markdown and HTML written side by side (doc.h).
 *
 * Ownership: the two streams are the document's from ooc_doc_open to
 * ooc_doc_close. Cost: linear in the text written; a paragraph or list
 * item is formatted once, into a buffer of its size (a 6000-byte model
 * name is not cut).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/doc.h"

static const char html_head[] =
"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
"<title>%s</title>\n<style>\n"
"body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
"max-width:1000px;margin:2em auto;padding:0 1em;color:#222;line-height:1.5}\n"
"h1{border-bottom:2px solid #1f77b4;padding-bottom:.2em}\n"
"h2{margin-top:1.8em;border-bottom:1px solid #ddd}\n"
"table{border-collapse:collapse;margin:1em 0;font-size:.85em;"
"display:block;overflow-x:auto;max-width:100%%}\n"
"th,td{border:1px solid #ccc;padding:.3em .6em}\n"
"th{background:#f0f4f8;text-align:left}\n"
"td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
"tr.win td{background:#e8f5e9;font-weight:600}\n"
"figure{margin:1em 0}img{max-width:100%%;border:1px solid #eee}\n"
"figcaption{color:#666;font-size:.9em}\n"
"footer{margin-top:3em;color:#888;font-size:.85em}\n"
"</style>\n</head>\n<body>\n";

void
ooc_doc_html_esc(FILE *f, const char *s)
{
  for (; *s; s++) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

/* (Nothing oocsim writes uses HTML in Markdown, so every '<' is text.)
 * In a cell, '|' becomes '/' and a newline a space too. */
static void
md_write(FILE *f, const char *s, int cell)
{
  for (; *s; s++)
    if (*s == '<')
      fputs("&lt;", f);
    else if (cell && (*s == '|' || *s == '\n'))
      fputc(*s == '|' ? '/' : ' ', f);
    else
      fputc(*s, f);
}

void
ooc_doc_md_text(FILE *f, const char *s)
{
  md_write(f, s, 0);
}

void
ooc_doc_md_cell(FILE *f, const char *s)
{
  md_write(f, s, 1);
}

/* text as a Markdown line (md_pre text md_post) and as an HTML element
 * <tag>text</tag>. */
static void
doc_text(ooc_doc *d, const char *md_pre, const char *md_post,
         const char *tag, const char *text)
{
  fputs(md_pre, d->md);
  ooc_doc_md_text(d->md, text);
  fputs(md_post, d->md);
  fprintf(d->html, "<%s>", tag);
  ooc_doc_html_esc(d->html, text);
  fprintf(d->html, "</%s>\n", tag);
}

void
ooc_doc_h(ooc_doc *d, int level, const char *text)
{
  char pre[16], tag[8];

  snprintf(pre, sizeof pre, "\n%.*s ", level, "######");
  snprintf(tag, sizeof tag, "h%d", level);
  doc_text(d, pre, "\n\n", tag, text);
}

/* fmt with ap as doc_text's text: on the stack when it fits, else on
 * the heap (out of memory: the part that fit). */
static void
doc_vtext(ooc_doc *d, const char *md_pre, const char *md_post,
          const char *tag, const char *fmt, va_list ap)
{
  char small[2048], *big = NULL;
  va_list ap2;
  int len;

  va_copy(ap2, ap);
  len = vsnprintf(small, sizeof small, fmt, ap);
  if (len >= (int)sizeof small && (big = malloc((size_t)len + 1)) != NULL)
    vsnprintf(big, (size_t)len + 1, fmt, ap2);
  va_end(ap2);
  doc_text(d, md_pre, md_post, tag, big != NULL ? big : small);
  free(big);
}

void
ooc_doc_p(ooc_doc *d, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  doc_vtext(d, "", "\n\n", "p", fmt, ap);
  va_end(ap);
}

void
ooc_doc_ul(ooc_doc *d, int open)
{
  if (open)
    fputs("<ul>\n", d->html);
  else {
    fputs("</ul>\n", d->html);
    fputs("\n", d->md);
  }
}

void
ooc_doc_li(ooc_doc *d, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  doc_vtext(d, "- ", "\n", "li", fmt, ap);
  va_end(ap);
}

void
ooc_doc_table_head(ooc_doc *d, int n, const char *const *h)
{
  fputs("|", d->md);
  for (int i = 0; i < n; i++) {
    fputc(' ', d->md);
    ooc_doc_md_cell(d->md, h[i]);
    fputs(" |", d->md);
  }
  fputs("\n|", d->md);
  for (int i = 0; i < n; i++)
    fputs(i ? "---:|" : "---|", d->md);
  fputs("\n", d->md);
  fputs("<table>\n<tr>", d->html);
  for (int i = 0; i < n; i++) {
    fputs("<th>", d->html);
    ooc_doc_html_esc(d->html, h[i]);
    fputs("</th>", d->html);
  }
  fputs("</tr>\n", d->html);
}

void
ooc_doc_table_row(ooc_doc *d, int n, char cells[][96], int mark)
{
  fputs("|", d->md);
  for (int i = 0; i < n; i++) {
    fputs(mark && i == 0 ? " **" : " ", d->md);
    ooc_doc_md_cell(d->md, cells[i]);
    fputs(mark && i == 0 ? "** |" : " |", d->md);
  }
  fputs("\n", d->md);
  fputs(mark ? "<tr class=\"win\">" : "<tr>", d->html);
  for (int i = 0; i < n; i++) {
    fputs(i ? "<td class=\"n\">" : "<td>", d->html);
    ooc_doc_html_esc(d->html, cells[i]);
    fputs("</td>", d->html);
  }
  fputs("</tr>\n", d->html);
}

void
ooc_doc_table_end(ooc_doc *d)
{
  fputs("\n", d->md);
  fputs("</table>\n", d->html);
}

void
ooc_doc_img(ooc_doc *d, const char *dir, const char *file, const char *alt,
            const char *missing)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (access(path, R_OK) == 0) {
    fputs("![", d->md);
    ooc_doc_md_text(d->md, alt);
    fprintf(d->md, "](%s)\n\n", file);
    fputs("<figure><img src=\"", d->html);
    ooc_doc_html_esc(d->html, file);
    fputs("\" alt=\"", d->html);
    ooc_doc_html_esc(d->html, alt);
    fputs("\"><figcaption>", d->html);
    ooc_doc_html_esc(d->html, alt);
    fputs("</figcaption></figure>\n", d->html);
  } else {
    ooc_doc_p(d, "(%s: not drawn: %s)", alt, missing);
  }
}

int
ooc_doc_open(ooc_doc *d, const char *md_path, const char *html_path,
             const char *title, ooc_err *err)
{
  int rc;

  *d = (ooc_doc){ .md = NULL };
  if ((rc = ooc_atomic_open(&d->amd, md_path, err)) < 0)
    return rc;
  d->open_md = 1;
  if ((rc = ooc_atomic_open(&d->ahtml, html_path, err)) < 0) {
    ooc_doc_abort(d);
    return rc;
  }
  d->open_html = 1;
  d->md = d->amd.f;
  d->html = d->ahtml.f;
  {
    /* The title escaped in <title> too, as in <h1> below. */
    char *esc = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&esc, &n);
    if (m != NULL) {
      ooc_doc_html_esc(m, title);
      if (fclose(m) != 0) {
        free(esc);
        esc = NULL;
      }
    }
    fprintf(d->html, html_head, esc != NULL ? esc : "oocsim");
    free(esc);
  }
  fputs("# ", d->md);
  ooc_doc_md_text(d->md, title);
  fputs("\n", d->md);
  fputs("<h1>", d->html);
  ooc_doc_html_esc(d->html, title);
  fputs("</h1>\n", d->html);
  return OOC_OK;
}

void
ooc_doc_footer(ooc_doc *d)
{
  fprintf(d->md, "\n---\nGenerated by oocsim %s.\n", PACKAGE_VERSION);
  fprintf(d->html, "<footer>Generated by oocsim %s.</footer>\n"
          "</body>\n</html>\n", PACKAGE_VERSION);
}

int
ooc_doc_close(ooc_doc *d, ooc_err *err)
{
  int rc = OOC_OK;

  if (d->open_md) {
    d->open_md = 0;
    rc = ooc_atomic_commit(&d->amd, err);
  }
  if (d->open_html) {
    d->open_html = 0;
    if (rc == OOC_OK)
      rc = ooc_atomic_commit(&d->ahtml, err);
    else
      ooc_atomic_abort(&d->ahtml);
  }
  d->md = d->html = NULL;
  return rc;
}

void
ooc_doc_abort(ooc_doc *d)
{
  if (d->open_md)
    ooc_atomic_abort(&d->amd);
  if (d->open_html)
    ooc_atomic_abort(&d->ahtml);
  d->open_md = d->open_html = 0;
  d->md = d->html = NULL;
}
