/* report/doc.h — a document written as Markdown and as a self-contained
 * HTML page at once (headings, paragraphs, lists, tables, images), so the
 * two always say the same.
 *
 * The HTML has its CSS inline and refers to images beside it by relative
 * paths; text is escaped for HTML, and '|' in table cells becomes '/' in
 * Markdown. Write errors surface when the document is closed.
 *
 * Ownership: ooc_doc is caller-embedded; ooc_doc_open opens its two files
 * and ooc_doc_close closes them (call it even when open failed: it closes
 * what was opened). Cost: linear in the text.
 */
#ifndef OOC_DOC_H
#define OOC_DOC_H

#include <stdio.h>
#include "base/atomic.h"
#include "base/error.h"

typedef struct ooc_doc {
  FILE *md, *html;            /* where to write (the atomic files' streams) */
  ooc_atomic_file amd, ahtml; /* base/atomic.h: replaced only when closed */
  int open_md, open_html;
} ooc_doc;

/* Create both files (as temporary files beside their targets,
 * base/atomic.h) and write the title: "# TITLE" and the HTML head with
 * <title> and <h1>. OOC_EIO names the file that could not be created and
 * why; nothing is left to close then. */
int ooc_doc_open(ooc_doc *d, const char *md_path, const char *html_path,
                 const char *title, ooc_err *err);

/* A heading of level 1 to 6. */
void ooc_doc_h(ooc_doc *d, int level, const char *text);

/* A paragraph (printf format; at most 4095 bytes). */
void ooc_doc_p(ooc_doc *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Open (open = 1) or close (0) a bulleted list. */
void ooc_doc_ul(ooc_doc *d, int open);

/* A list item (printf format; at most 2047 bytes). */
void ooc_doc_li(ooc_doc *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A table of n columns: the head row, then rows, then the end. Numbers are
 * right-aligned in every column but the first; a row with `mark` set is
 * highlighted (bold first cell in Markdown, class "win" in HTML). */
void ooc_doc_table_head(ooc_doc *d, int n, const char *const *h);
void ooc_doc_table_row(ooc_doc *d, int n, char cells[][96], int mark);
void ooc_doc_table_end(ooc_doc *d);

/* The image dir/file with its caption alt, or, when that file is not
 * there, a paragraph "(ALT: not drawn: MISSING)". */
void ooc_doc_img(ooc_doc *d, const char *dir, const char *file,
                 const char *alt, const char *missing);

/* The footer naming the oocsim version that wrote the document. */
void ooc_doc_footer(ooc_doc *d);

/* Close both files and put them in place; OOC_EIO names the first that
 * could not be written and why (the other is not replaced either when the
 * first fails). */
int ooc_doc_close(ooc_doc *d, ooc_err *err);

/* Give up: remove both temporary files; the targets are untouched. */
void ooc_doc_abort(ooc_doc *d);

/* s to f with <, >, & and " escaped for HTML text and attributes. */
void ooc_doc_html_esc(FILE *f, const char *s);
/* s to f as Markdown text: '<' as "&lt;" (renderers that allow HTML would
 * take a name such as "<script>" for markup). */
void ooc_doc_md_text(FILE *f, const char *s);
/* The same for a table cell: '|' as '/', a newline as a space. */
void ooc_doc_md_cell(FILE *f, const char *s);

#endif
