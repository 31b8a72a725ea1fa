/* alloc/options.c — the option parser every policy shares, and the
 * names of driver actions (alloc.h).
 *
 * One idea: an options string is "key[=value]:key..." (what follows the
 * name in an allocator spec); ooc_alloc_options_check() holds its keys
 * against a descriptor's list, ooc_alloc_option() finds one key's value.
 * Both only read the string and the descriptor's fields, so the policies
 * and the registry (alloc.c) can call them without calling each other.
 * Cost: O(length of the string x keys listed); called once per init().
 */
#include "config.h"

#include <string.h>

#include "alloc/alloc.h"
#include "base/util.h"

/* The key of the option starting at p: its length up to '=' or ':'. */
static size_t
key_len(const char *p)
{
  return strcspn(p, "=:");
}

/* Is key k (length n) in t's list? */
static int
listed(const ooc_allocator_type *t, const char *k, size_t n)
{
  int i;

  for (i = 0; t->options != NULL && t->options[i] != NULL; i++)
    if (strlen(t->options[i]) == n && strncmp(t->options[i], k, n) == 0)
      return 1;
  return 0;
}

int
ooc_alloc_options_check(const ooc_allocator_type *t, const char *options,
                        ooc_err *err)
{
  const char *p = options, *q;
  char list[256];

  if (options == NULL || *options == '\0')
    return OOC_OK;
  for (;;) {
    size_t n = key_len(p);

    if (n == 0)
      return ooc_err_set(err, OOC_EINVAL, "allocator '%s': empty option in "
                         "'%s'", t->name, options);
    if (!listed(t, p, n)) {
      if (t->options == NULL || t->options[0] == NULL)
        return ooc_err_set(err, OOC_EINVAL, "allocator '%s': unknown option "
                           "'%.*s' (it takes no options)", t->name, (int)n,
                           p);
      return ooc_err_set(err, OOC_EINVAL, "allocator '%s': unknown option "
                         "'%.*s' (valid: %s)", t->name, (int)n, p,
                         ooc_join_names(t->options, list, sizeof list));
    }
    for (q = options; q < p; q += strcspn(q, ":") + 1)
      if (key_len(q) == n && strncmp(q, p, n) == 0)
        return ooc_err_set(err, OOC_EINVAL, "allocator '%s': option '%.*s' "
                           "given twice", t->name, (int)n, p);
    p += strcspn(p, ":");
    if (*p == '\0')
      return OOC_OK;
    p++;
  }
}

int
ooc_alloc_option(const char *options, const char *key, const char **value,
                 size_t *len)
{
  size_t kn = strlen(key);
  const char *p = options;

  while (p != NULL && *p != '\0') {
    size_t n = key_len(p), end = strcspn(p, ":");
    if (n == kn && strncmp(p, key, kn) == 0) {
      if (value != NULL)
        *value = p[n] == '=' ? p + n + 1 : NULL;
      if (len != NULL)
        *len = p[n] == '=' ? end - n - 1 : 0;
      return 1;
    }
    p += end;
    if (*p == ':')
      p++;
  }
  return 0;
}

const char *
ooc_drv_kind_name(ooc_drv_kind k)
{
  static const char *const names[OOC_DRV_COUNT] = {
    "seg_malloc", "seg_free", "chunk_create", "chunk_map", "chunk_unmap",
    "chunk_release", "va_reserve", "va_free",
  };
  return (unsigned)k < OOC_DRV_COUNT ? names[k] : "?";
}
