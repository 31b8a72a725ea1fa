/* base/progress.c — the progress line (progress.h). */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "base/progress.h"
#include "base/util.h"

/* Seconds between two redraws (at most five a second). */
#define DRAW_S 0.2
#define BAR 30

void
ooc_progress_begin(ooc_progress *p, FILE *f, const char *what)
{
  *p = (ooc_progress){ .f = f };
  snprintf(p->what, sizeof p->what, "%s", what ? what : "");
  p->t0 = ooc_wall_s();
}

void
ooc_progress_part(ooc_progress *p, int64_t base, int64_t total)
{
  if (p == NULL)
    return;
  p->base = base;
  p->total = total;
}

static void
fmt_time(double s, char *buf, size_t n)
{
  int t = (int)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, n, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, n, "%d:%02d", t / 60, t % 60);
}

void
ooc_progress_show(ooc_progress *p, int64_t done, int64_t total,
                  const char *unit, const char *note)
{
  char line[256], el[16], eta[16] = "--:--";
  double now, elapsed;
  int len = 0, fill;

  if (p == NULL || p->f == NULL)
    return;
  if (p->total > 0) {
    done += p->base;
    total = p->total;
  }
  now = ooc_wall_s();
  if (now - p->last_draw < DRAW_S && !(total > 0 && done >= total))
    return;
  p->last_draw = now;
  elapsed = now - p->t0;
  fmt_time(elapsed, el, sizeof el);
  if (total > 0 && done > 0)
    fmt_time(elapsed * (double)(total - done) / (double)done, eta,
             sizeof eta);
  len += snprintf(line + len, sizeof line - (size_t)len, "\r%s ", p->what);
  if (total > 0) {
    fill = (int)(BAR * (done < total ? done : total) / total);
    len += snprintf(line + len, sizeof line - (size_t)len,
                    "[%.*s%.*s] %" PRId64 "/%" PRId64 " %s  %s elapsed, "
                    "ETA %s", fill, "##############################",
                    BAR - fill, "..............................", done,
                    total, unit ? unit : "", el, eta);
  } else {
    len += snprintf(line + len, sizeof line - (size_t)len,
                    "%" PRId64 " %s  %s elapsed", done, unit ? unit : "", el);
  }
  if (note != NULL && note[0] != '\0' && len < (int)sizeof line)
    len += snprintf(line + len, sizeof line - (size_t)len, "  %s", note);
  if (len >= (int)sizeof line)
    len = (int)sizeof line - 1;
  fputs(line, p->f);
  if (len < p->last_len)
    fprintf(p->f, "%*s", p->last_len - len, "");
  p->last_len = len;
  p->drawn = 1;
  fflush(p->f);
}

void
ooc_progress_end(ooc_progress *p)
{
  if (p == NULL || p->f == NULL || !p->drawn)
    return;
  fputc('\n', p->f);
  fflush(p->f);
  p->drawn = 0;
  p->last_len = 0;
}
