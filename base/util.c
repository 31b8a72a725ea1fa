/* base/util.c — sizes, strict number parsing, files, data lookup, hashing. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "base/util.h"

#define MAX_FILE_BYTES (256u << 20)

/* Does s start as a number the parsers take: no leading white space
 * (strtod and strtoll would skip it) and no hexadecimal "0x" (strtod
 * reads hexadecimal floats)? */
static int
plain_number(const char *s)
{
  if (*s == '+' || *s == '-')
    s++;
  return !isspace((unsigned char)*s) && *s != '\0' &&
         !(s[0] == '0' && (s[1] == 'x' || s[1] == 'X'));
}

int
ooc_parse_budget(const char *s, uint64_t *out, ooc_err *err)
{
  int rc = ooc_parse_size(s, "--budget", out, err);

  if (rc == OOC_OK && *out == 0)
    return ooc_err_set(err, OOC_EINVAL, "--budget: '%s' must be > 0%s", s,
                       strtod(s, NULL) > 0 ? " (it rounds to 0 bytes)" : "");
  return rc;
}

int
ooc_parse_int(const char *s, const char *what, int64_t *out, ooc_err *err)
{
  char *end;
  long long v;

  if (s == NULL || *s == '\0')
    return ooc_err_set(err, OOC_EINVAL, "%s: empty value", what);
  if (!plain_number(s) || isspace((unsigned char)s[0]))
    return ooc_err_set(err, OOC_EINVAL, "%s: '%s' is not an integer", what, s);
  errno = 0;
  v = strtoll(s, &end, 10);
  if (errno == ERANGE)
    return ooc_err_set(err, OOC_ERANGE, "%s: '%s' overflows", what, s);
  if (*end != '\0' || end == s)
    return ooc_err_set(err, OOC_EINVAL, "%s: '%s' is not an integer", what, s);
  *out = v;
  return OOC_OK;
}

int
ooc_parse_double(const char *s, const char *what, double *out, ooc_err *err)
{
  char *end;
  double v;

  if (s == NULL || *s == '\0')
    return ooc_err_set(err, OOC_EINVAL, "%s: empty value", what);
  errno = 0;
  v = strtod(s, &end);
  if (*end != '\0' || end == s || !plain_number(s) ||
      isspace((unsigned char)s[0]))
    return ooc_err_set(err, OOC_EINVAL, "%s: '%s' is not a number", what, s);
  if (errno == ERANGE || !isfinite(v))
    return ooc_err_set(err, OOC_ERANGE, "%s: '%s' is out of range", what, s);
  *out = v;
  return OOC_OK;
}

int
ooc_parse_size(const char *s, const char *what, uint64_t *out, ooc_err *err)
{
  static const struct { const char *sfx; double mul; } units[] = {
    { "", 1 }, { "B", 1 },
    { "K", 1e3 }, { "KB", 1e3 }, { "KiB", 1024.0 },
    { "M", 1e6 }, { "MB", 1e6 }, { "MiB", 1048576.0 },
    { "G", 1e9 }, { "GB", 1e9 }, { "GiB", 1073741824.0 },
    { "T", 1e12 }, { "TB", 1e12 }, { "TiB", 1099511627776.0 },
  };
  const char *num_end;
  char *end;
  double v;
  size_t i;

  if (s == NULL || *s == '\0')
    return ooc_err_set(err, OOC_EINVAL, "%s: empty size", what);
  if (*s == '-')      /* '-0' is not negative, but no size has a sign */
    return ooc_err_set(err, OOC_EINVAL, "%s: size '%s' %s", what, s,
                       strtod(s + 1, NULL) == 0 ? "has a minus sign"
                                                : "is negative");
  /* Decimal digits, a fraction allowed (5.5GiB): strtod also reads hex
   * (0x10), exponents (1e9), inf and nan, none of which is a SIZE, so
   * what it reads must be exactly the digits scanned here. */
  num_end = s;
  while (isdigit((unsigned char)*num_end))
    num_end++;
  if (num_end > s && *num_end == '.' && isdigit((unsigned char)num_end[1]))
    for (num_end++; isdigit((unsigned char)*num_end); num_end++)
      ;
  errno = 0;
  v = strtod(s, &end);
  if (num_end == s || end != num_end)
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: '%s' is not a size (e.g. 16GiB, 8GB, 512MiB)",
                       what, s);
  if (!isfinite(v) || errno == ERANGE)
    return ooc_err_set(err, OOC_ERANGE, "%s: size '%s' overflows", what, s);
  while (*end == ' ')           /* "5 GiB" */
    end++;
  if (end > num_end && *end == '\0')
    return ooc_err_set(err, OOC_EINVAL, "%s: '%s' ends with a space", what,
                       s);
  for (i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(end, units[i].sfx) == 0)
      break;
  if (i == sizeof units / sizeof units[0])
    return ooc_err_set(err, OOC_EINVAL,
                       "%s: unknown unit in '%s' (use B, K or KB, KiB, M or "
                       "MB, MiB, G or GB, GiB, T or TB, TiB)", what, s);
  if (units[i].mul == 1 && v != floor(v))
    return ooc_err_set(err, OOC_EINVAL, "%s: '%s' is a fraction of a byte; "
                       "give a unit (%.*sGiB) or whole bytes", what, s,
                       (int)(num_end - s), s);
  v *= units[i].mul;
  if (v < 0 || v >= 18446744073709551615.0)
    return ooc_err_set(err, OOC_ERANGE, "%s: size '%s' overflows", what, s);
  *out = (uint64_t)(v + 0.5);
  return OOC_OK;
}

const char *
ooc_fmt_bytes(uint64_t b, char *buf, size_t n)
{
  static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  double v = (double)b;
  int i = 0;

  while (v >= 1024.0 && i < 4) {
    v /= 1024.0;
    i++;
  }
  if (i == 0)
    snprintf(buf, n, "%llu B", (unsigned long long)b);
  else
    snprintf(buf, n, "%.2f %s", v, u[i]);
  return buf;
}

const char *
ooc_fmt_flops(double flops, char *buf, size_t n)
{
  static const char *const u[] = { "FLOP", "KFLOP", "MFLOP", "GFLOP",
                                    "TFLOP", "PFLOP" };
  double x = flops;
  int i = 0;

  while (x >= 1000.0 && i < 5) {
    x /= 1000.0;
    i++;
  }
  if (i == 0)
    snprintf(buf, n, "%.0f FLOP", x);
  else
    snprintf(buf, n, "%.2f %s", x, u[i]);
  return buf;
}

const char *
ooc_fmt_count(uint64_t v, char *buf, size_t n)
{
  static const char *const u[] = { "", " K", " M", " B", " T" };
  double x = (double)v;
  int i = 0;

  while (x >= 1000.0 && i < 4) {
    x /= 1000.0;
    i++;
  }
  if (i == 0)
    snprintf(buf, n, "%llu", (unsigned long long)v);
  else
    snprintf(buf, n, "%.1f%s", x, u[i]);
  return buf;
}

void
ooc_text_pos(const char *text, const char *at, int *line, int *col)
{
  const char *p;

  *line = 1;
  *col = 1;
  for (p = text; p < at && *p; p++) {
    if (*p == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

int
ooc_json_precheck(const char *text, size_t len, size_t max_bytes,
                  int max_depth, const char *origin, const char *kind,
                  ooc_err *err)
{
  char b1[32], b2[32];
  int depth = 0, in_str = 0, line, col;
  size_t i;

  if (len > max_bytes)
    return ooc_err_set(err, OOC_ERANGE, "%s: too large: %s, at most %s for "
                       "%s", origin, ooc_fmt_bytes(len, b1, sizeof b1),
                       ooc_fmt_bytes(max_bytes, b2, sizeof b2), kind);
  for (i = 0; i < len; i++) {
    char ch = text[i];
    unsigned char u = (unsigned char)ch;
    if (u >= 0x80) {
      /* UTF-8 (RFC 3629): a lead byte and its continuation bytes, no
       * overlong form, no surrogate, nothing above U+10FFFF. */
      int n = ooc_utf8_len(text + i, len - i);
      if (n == 0) {
        ooc_text_pos(text, text + i, &line, &col);
        return ooc_err_set(err, OOC_EPARSE, "%s: not UTF-8 text: byte 0x%02x "
                           "at line %d, column %d (%s)", origin, u, line,
                           col, kind);
      }
      i += (size_t)n - 1;
      continue;
    }
    if (in_str) {
      if (ch == '\\') {
        /* A NUL written as an escape would cut the string short where
         * the parser hands it on: refuse it, as a NUL byte is. */
        if (i + 5 < len && text[i + 1] == 'u' && text[i + 2] == '0' &&
            text[i + 3] == '0' && text[i + 4] == '0' && text[i + 5] == '0') {
          ooc_text_pos(text, text + i, &line, &col);
          return ooc_err_set(err, OOC_EPARSE, "%s: a string holds \\u0000 "
                             "(a NUL character) at line %d, column %d (%s)",
                             origin, line, col, kind);
        }
        i++;
      } else if (ch == '"') {
        in_str = 0;
      }
      continue;
    }
    if (ch == '"') {
      in_str = 1;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_depth) {
        ooc_text_pos(text, text + i, &line, &col);
        return ooc_err_set(err, OOC_ERANGE, "%s: nested too deep at line "
                           "%d, column %d: more than %d levels of arrays and "
                           "objects (%s)", origin, line, col, max_depth,
                           kind);
      }
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      depth--;
    }
  }
  return OOC_OK;
}

int
ooc_control_char(const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
      return (unsigned char)*s;
  return -1;
}

int
ooc_json_strict(const char *text, size_t len, const char *origin,
                const char *kind, ooc_err *err)
{
  int in_str = 0, line, col;
  size_t i;

  for (i = 0; i < len; i++) {
    char ch = text[i];
    unsigned char u = (unsigned char)ch;
    if (in_str) {
      if (ch == '\\') {
        i++;
      } else if (ch == '"') {
        in_str = 0;
      } else if (u < 0x20) {
        /* RFC 8259 §7: escaped, never raw (a tab, a newline, or an
         * escape sequence that would reach a terminal as it is). */
        ooc_text_pos(text, text + i, &line, &col);
        return ooc_err_set(err, OOC_EPARSE, "%s: a string holds control "
                           "character 0x%02x at line %d, column %d; write it "
                           "escaped (%s)", origin, u, line, col, kind);
      }
      continue;
    }
    if (ch == '"') {
      in_str = 1;
    } else if (u < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
      ooc_text_pos(text, text + i, &line, &col);
      return ooc_err_set(err, OOC_EPARSE, "%s: control character 0x%02x at "
                         "line %d, column %d (JSON whitespace is space, tab, "
                         "newline and carriage return) (%s)", origin, u,
                         line, col, kind);
    } else if (ch == '0' && i + 1 < len && text[i + 1] >= '0' &&
               text[i + 1] <= '9') {
      /* RFC 8259 §6: a number's integer part has no leading zero (its
       * exponent may). */
      size_t j = i;
      if (j > 0 && text[j - 1] == '-')
        j--;
      if (j == 0 || strchr("0123456789.eE+-", text[j - 1]) == NULL) {
        ooc_text_pos(text, text + i, &line, &col);
        return ooc_err_set(err, OOC_EPARSE, "%s: a number with a leading "
                           "zero at line %d, column %d (JSON numbers have "
                           "none; write 7, not 07) (%s)", origin, line, col,
                           kind);
      }
    }
  }
  return OOC_OK;
}

/* A key of an object and its position there. */
struct key_pos {
  const char *key;
  int pos;
};

static int
cmp_key_pos(const void *pa, const void *pb)
{
  const struct key_pos *a = pa, *b = pb;
  int c = strcmp(a->key, b->key);

  if (c != 0)
    return c;
  return (a->pos > b->pos) - (a->pos < b->pos);
}

/* The position of the first member of object node whose key an earlier
 * member already has, or -1 when none (-2: out of memory). Small objects
 * compare each key with those before it; larger ones sort (key, position)
 * and take the smallest second position of a run of equal keys: both
 * give the member the document-order walk meets first. */
static int
first_dup(const cJSON *node)
{
  const cJSON *it, *prev;
  struct key_pos *kp;
  int n = 0, i, pos, best = -1;

  for (it = node->child; it != NULL; it = it->next)
    n++;
  if (n <= 16) {
    for (it = node->child, pos = 0; it != NULL; it = it->next, pos++)
      for (prev = node->child; it->string != NULL && prev != it;
           prev = prev->next)
        if (prev->string != NULL && strcmp(prev->string, it->string) == 0)
          return pos;
    return -1;
  }
  kp = malloc((size_t)n * sizeof *kp);
  if (kp == NULL)
    return -2;
  n = 0;
  for (it = node->child, pos = 0; it != NULL; it = it->next, pos++)
    if (it->string != NULL)
      kp[n++] = (struct key_pos){ .key = it->string, .pos = pos };
  qsort(kp, (size_t)n, sizeof *kp, cmp_key_pos);
  for (i = 1; i < n; i++)
    if (strcmp(kp[i - 1].key, kp[i].key) == 0 &&
        (best < 0 || kp[i].pos < best) &&
        (i < 2 || strcmp(kp[i - 2].key, kp[i].key) != 0))
      best = kp[i].pos;
  free(kp);
  return best;
}

/* ooc_json_check_dups's walk; where names the enclosing object's key. */
static int
dups(const cJSON *node, const char *where, const char *origin, ooc_err *err)
{
  const cJSON *it;
  int rc, pos, dup = -1;

  if (node != NULL && cJSON_IsObject(node) &&
      (dup = first_dup(node)) == -2)
    return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", origin);
  for (it = node != NULL ? node->child : NULL, pos = 0; it != NULL;
       it = it->next, pos++) {
    if (pos == dup)
      return ooc_err_set(err, OOC_EINVAL, "%s: key '%s' given twice%s%s"
                         "%s", origin, it->string,
                         where != NULL ? " (in '" : "",
                         where != NULL ? where : "",
                         where != NULL ? "')" : "");
    if ((cJSON_IsObject(it) || cJSON_IsArray(it)) &&
        (rc = dups(it, cJSON_IsObject(node) ? it->string : where, origin,
                   err)) != OOC_OK)
      return rc;
  }
  return OOC_OK;
}

int
ooc_json_check_dups(const struct cJSON *node, const char *origin,
                    ooc_err *err)
{
  return dups(node, NULL, origin, err);
}

int
ooc_read_file(const char *path, char **out, size_t *len, ooc_err *err)
{
  FILE *f;
  char *buf = NULL;
  size_t cap = 0, n = 0, got;
  struct stat st;

  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return ooc_err_set(err, OOC_EIO, "%s: is a directory", path);
  f = fopen(path, "rb");
  if (f == NULL)
    return ooc_err_set(err, OOC_EIO, "%s: %s", path, strerror(errno));
  for (;;) {
    if (n + 65536 + 1 > cap) {
      size_t ncap = cap ? cap * 2 : 65536 * 2;
      char *nb;
      if (ncap > MAX_FILE_BYTES + 65536 * 2) {
        free(buf);
        fclose(f);
        return ooc_err_set(err, OOC_EIO, "%s: file is larger than 256 MiB",
                           path);
      }
      nb = realloc(buf, ncap);
      if (nb == NULL) {
        free(buf);
        fclose(f);
        return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", path);
      }
      buf = nb;
      cap = ncap;
    }
    got = fread(buf + n, 1, 65536, f);
    n += got;
    if (got < 65536)
      break;
  }
  if (ferror(f)) {
    free(buf);
    fclose(f);
    return ooc_err_set(err, OOC_EIO, "%s: read error", path);
  }
  fclose(f);
  buf[n] = '\0';
  if (memchr(buf, '\0', n) != NULL) {
    free(buf);
    return ooc_err_set(err, OOC_EPARSE,
                       "%s: binary data (NUL byte), not text", path);
  }
  *out = buf;
  if (len)
    *len = n;
  return OOC_OK;
}

/* --datadir, set once by main before any lookup (NULL: not given). */
static const char *datadir_option;

int
ooc_data_set_dir(const char *dir, ooc_err *err)
{
  struct stat st;

  if (dir == NULL || *dir == '\0')
    return ooc_err_set(err, OOC_EINVAL, "--datadir: empty directory name");
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return ooc_err_set(err, OOC_EINVAL, "--datadir %s: not a directory", dir);
  datadir_option = dir;
  return OOC_OK;
}

/* The directory the user named (--datadir, then $OOCSIM_DATADIR) and where
 * it came from; NULL when neither is given. */
static const char *
data_dir_override(const char **origin)
{
  const char *env;

  if (datadir_option != NULL) {
    *origin = "--datadir";
    return datadir_option;
  }
  env = getenv("OOCSIM_DATADIR");
  if (env != NULL && *env != '\0') {
    *origin = "OOCSIM_DATADIR";
    return env;
  }
  return NULL;
}

/* 1 when the running program is the installed one ($(bindir)/oocsim). */
static int
running_installed(void)
{
  char exe[PATH_MAX], bindir[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash;

  if (k <= 0)
    return 0;
  exe[k] = '\0';
  slash = strrchr(exe, '/');
  if (slash)
    *slash = '\0';
  return realpath(OOC_BINDIR, bindir) != NULL && strcmp(bindir, exe) == 0;
}

/* The data directories in search order, with where each comes from: the
 * one the user named alone, else the installed $(pkgdatadir) first when
 * the running binary is the installed one and the source tree first when
 * it is not (a build tree's ./oocsim). Returns their number. */
static int
data_dirs(const char *dirs[2], const char *origins[2])
{
  const char *origin;
  const char *over = data_dir_override(&origin);

  if (over != NULL) {
    dirs[0] = over;
    origins[0] = origin;
    return 1;
  }
  if (running_installed()) {
    dirs[0] = OOC_PKGDATADIR;
    origins[0] = "installed";
    dirs[1] = OOC_SRCDIR;
    origins[1] = "source tree";
  } else {
    dirs[0] = OOC_SRCDIR;
    origins[0] = "source tree";
    dirs[1] = OOC_PKGDATADIR;
    origins[1] = "installed";
  }
  return 2;
}

static int
is_dir(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first data directory that has a models/ folder, or NULL. */
static const char *
data_dir_found(const char **origin)
{
  const char *dirs[2], *origins[2];
  char p[PATH_MAX];
  int i, n = data_dirs(dirs, origins);

  for (i = 0; i < n; i++) {
    snprintf(p, sizeof p, "%s/models", dirs[i]);
    if (is_dir(p)) {
      *origin = origins[i];
      return dirs[i];
    }
  }
  return NULL;
}

const char *
ooc_data_dir(void)
{
  const char *origin;
  const char *d = data_dir_found(&origin);
  return d != NULL ? d : "";
}

const char *
ooc_data_dir_describe(char *buf, size_t n)
{
  const char *dirs[2], *origins[2], *origin;
  const char *d = data_dir_found(&origin);
  int k;

  if (d != NULL) {
    snprintf(buf, n, "%s (%s)", d, origin);
    return buf;
  }
  k = data_dirs(dirs, origins);
  /* (A data directory is one with a models/ folder: the zoo.) */
  if (k == 1)
    snprintf(buf, n, "none: %s (%s) is not one, it has no models/",
             dirs[0], origins[0]);
  else
    snprintf(buf, n, "none: neither %s nor %s is one, neither has "
             "models/", dirs[0], dirs[1]);
  return buf;
}

static int
cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int
ooc_data_list(const char *subdir, char ***names, int *count, ooc_err *err)
{
  char p[PATH_MAX];
  const char *dir = ooc_data_dir();
  DIR *d;
  struct dirent *e;
  char **v = NULL;
  int n = 0, cap = 0;

  *names = NULL;
  *count = 0;
  snprintf(p, sizeof p, "%s/%s", dir, subdir);
  d = opendir(p);
  if (d == NULL) {
    char where[PATH_MAX + 64];
    return ooc_err_set(err, OOC_ENOTFOUND, "no %s directory found (data "
                       "directory: %s)", subdir,
                       ooc_data_dir_describe(where, sizeof where));
  }
  while ((e = readdir(d)) != NULL) {
    size_t L = strlen(e->d_name);
    if (L <= 5 || strcmp(e->d_name + L - 5, ".json") != 0 ||
        e->d_name[0] == '.')
      continue;
    if (n == cap) {
      char **nv;
      cap = cap ? 2 * cap : 32;
      nv = realloc(v, (size_t)cap * sizeof *v);
      if (nv == NULL)
        goto fail;
      v = nv;
    }
    v[n] = strndup(e->d_name, L - 5);
    if (v[n] == NULL)
      goto fail;
    n++;
  }
  closedir(d);
  qsort(v, (size_t)n, sizeof *v, cmp_str);
  *names = v;
  *count = n;
  return OOC_OK;
fail:
  closedir(d);
  ooc_data_list_free(v, n);
  return ooc_err_set(err, OOC_ENOMEM, "out of memory listing %s", subdir);
}

void
ooc_data_list_free(char **names, int n)
{
  int i;
  for (i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

int
ooc_data_find(const char *subdir, const char *name, char **path, ooc_err *err)
{
  const char *dirs[2], *origins[2];
  char p[PATH_MAX], list[256];
  size_t L = strlen(name);
  int i, n;

  *path = NULL;
  if (L == 0)
    return ooc_err_set(err, OOC_EINVAL, "empty %s name (give a name from "
                       "'oocsim list %s' or a JSON path)",
                       strcmp(subdir, "models") == 0 ? "model"
                       : strcmp(subdir, "hwprofiles") == 0 ? "profile"
                                                           : subdir,
                       strcmp(subdir, "models") == 0 ? "models"
                       : strcmp(subdir, "hwprofiles") == 0 ? "hw"
                                                           : subdir);
  if (strchr(name, '/') != NULL || (L > 5 && strcmp(name + L - 5, ".json") == 0)) {
    *path = strdup(name);
    return *path ? OOC_OK : ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  n = data_dirs(dirs, origins);
  for (i = 0; i < n; i++) {
    snprintf(p, sizeof p, "%s/%s/%s.json", dirs[i], subdir, name);
    if (access(p, R_OK) == 0) {
      *path = strdup(p);
      return *path ? OOC_OK : ooc_err_set(err, OOC_ENOMEM, "out of memory");
    }
  }
  {
    char **names;
    int k, cnt;
    size_t off = 0;
    list[0] = '\0';
    if (ooc_data_list(subdir, &names, &cnt, NULL) == OOC_OK) {
      for (k = 0; k < cnt && off + strlen(names[k]) + 3 < sizeof list; k++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
                                k ? ", " : "", names[k]);
      ooc_data_list_free(names, cnt);
    }
  }
  if (list[0] == '\0') {
    /* Nothing to choose from: the data directory is what is wrong. */
    char where[PATH_MAX + 64];
    return ooc_err_set(err, OOC_ENOTFOUND, "unknown %s '%s' (none "
                       "available; data directory: %s)",
                       strcmp(subdir, "hwprofiles") == 0 ? "hardware profile"
                                                         : "model",
                       name, ooc_data_dir_describe(where, sizeof where));
  }
  return ooc_err_set(err, OOC_ENOTFOUND, "unknown %s '%s' (available: %s)",
                     strcmp(subdir, "hwprofiles") == 0 ? "hardware profile"
                                                       : "model",
                     name, list);
}

double
ooc_wall_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t
ooc_mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

int64_t
ooc_median_i64(int64_t *v, int n)
{
  if (n <= 0)
    return -1;
  qsort(v, (size_t)n, sizeof *v, cmp_i64);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t
ooc_hash64(const void *data, size_t n, uint64_t seed)
{
  const unsigned char *p = data;
  uint64_t h = seed;
  size_t i;

  for (i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

const char *
ooc_join_names(const char *const *names, char *buf, size_t n)
{
  size_t off = 0;
  int i;

  buf[0] = '\0';
  for (i = 0; names != NULL && names[i] != NULL; i++) {
    int k = snprintf(buf + off, n - off, "%s%s", i ? ", " : "", names[i]);
    if (k < 0 || (size_t)k >= n - off)
      break;
    off += (size_t)k;
  }
  return buf;
}
