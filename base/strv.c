/* base/strv.c — splitting, copying and freeing string vectors (strv.h).
 * The vector grows by doubling while splitting: O(length of s).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/strv.h"

void
ooc_strv_free(char **v, int n)
{
  int i;
  if (!v)
    return;
  for (i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

char **
ooc_strv_dup(char *const *v, int n)
{
  char **d = calloc((size_t)n, sizeof *d);
  if (!d)
    return NULL;
  for (int i = 0; i < n; i++)
    if (!(d[i] = strdup(v[i]))) {
      ooc_strv_free(d, n);
      return NULL;
    }
  return d;
}

int
ooc_strv_split(const char *s, char sep, const char *what, char ***out,
               int *n, ooc_err *err)
{
  char **v = NULL;
  int cnt = 0, cap = 0;
  const char *p = s, *e;

  if (!*s)
    return ooc_err_set(err, OOC_EINVAL, "%s: empty list", what);
  for (;;) {
    e = strchr(p, sep);
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 0) {
      ooc_strv_free(v, cnt);
      return ooc_err_set(err, OOC_EINVAL, "%s '%s': empty item", what, s);
    }
    if (cnt == cap) {
      int nc = cap ? cap * 2 : 8;
      char **nv = realloc(v, (size_t)nc * sizeof *nv);
      if (!nv)
        goto nomem;
      v = nv;
      cap = nc;
    }
    v[cnt] = malloc(len + 1);
    if (!v[cnt])
      goto nomem;
    memcpy(v[cnt], p, len);
    v[cnt][len] = '\0';
    cnt++;
    if (!e)
      break;
    p = e + 1;
  }
  *out = v;
  *n = cnt;
  return OOC_OK;
nomem:
  ooc_strv_free(v, cnt);
  return ooc_err_set(err, OOC_ENOMEM, "out of memory");
}
