#!/bin/sh
# tests/check_layers.sh — the layering rules of docs/architecture.md, checked
# on what the compiler produced and on what the sources include:
#
#   base/ -> ir/ -> alloc/ -> sim/ | executor/ -> plan/ -> planners/
#         -> analysis/ -> report/ -> cli/
#
# 1. Link level (nm of every object in the layer folders): a file may use a
#    symbol defined in its own folder or in a lower layer only; sim/ and
#    executor/ never use each other.
# 2. No cycle between files at link level (repeatedly drop the files that
#    use nothing left, then those nothing left uses; what remains are the
#    cycles).
# 3. Include level: every #include "dir/x.h" in a layer folder names its own
#    folder or a lower layer, with the same exception.
# Exit 0 when all hold, 1 with the offending edges otherwise.
set -u
. "${top_srcdir:-.}/tests/lib.sh"

src=${top_srcdir:-.}
build=${top_builddir:-.}
layers="base ir alloc sim executor plan planners analysis report cli"
tmp=$TMP
check() { name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

rank() {
  r=0
  for l in $layers; do
    [ "$l" = "$1" ] && { echo $r; return; }
    r=$((r + 1))
  done
  echo -1
}

# The allowed edge relation, one "from to" pair per line.
for a in $layers; do
  for b in $layers; do
    ra=$(rank "$a"); rb=$(rank "$b")
    ok=0
    [ "$a" = "$b" ] && ok=1
    [ "$rb" -lt "$ra" ] && ok=1
    case "$a:$b" in sim:executor|executor:sim) ok=0 ;; esac
    [ $ok -eq 1 ] && echo "$a $b"
  done
done >"$tmp/allowed"

# --- 1. and 2.: objects ------------------------------------------------------
objs=
for l in $layers; do
  for o in "$build/$l"/*.o; do
    [ -f "$o" ] && objs="$objs $o"
  done
done
check "objects of every layer are built" test -n "$objs"
for o in $objs; do
  f=${o#"$build/"}
  nm -g --defined-only "$o" | awk -v f="$f" 'NF >= 3 { print "D", f, $3 }'
  nm -u "$o" | awk -v f="$f" '{ print "U", f, $NF }'
done >"$tmp/syms"
awk '$1 == "D" { def[$3] = $2 }
     $1 == "U" { use[NR] = $2 " " $3 }
     END { for (k in use) { split(use[k], u, " ")
             if ((u[2] in def) && def[u[2]] != u[1])
               print u[1], def[u[2]], u[2] } }' "$tmp/syms" |
  sort -u >"$tmp/edges"
check "the objects use each other's symbols" test -s "$tmp/edges"

awk 'NR == FNR { ok[$1 " " $2] = 1; next }
     { split($1, a, "/"); split($2, b, "/")
       if (!((a[1] " " b[1]) in ok))
         print "  " $1 " -> " $2 " (" $3 ")" }' \
  "$tmp/allowed" "$tmp/edges" >"$tmp/bad_link"
if [ -s "$tmp/bad_link" ]; then
  echo "calls against the layer order:"; cat "$tmp/bad_link"
fi
check "no file calls a higher layer or across sim/executor" \
  test ! -s "$tmp/bad_link"

# Kahn's algorithm on the file graph: drop files with no remaining use.
awk '{ e[$1 " " $2] = 1; node[$1] = 1; node[$2] = 1 }
     END {
       do {
         changed = 0
         for (n in node) {
           out = 0
           for (k in e) { split(k, p, " "); if (p[1] == n) { out = 1; break } }
           if (!out) {
             delete node[n]; changed = 1
             for (k in e) { split(k, p, " "); if (p[2] == n) delete e[k] }
           }
         }
       } while (changed)
       do {   # then the files nothing left uses: the rest is the cycles
         changed = 0
         for (n in node) {
           inc = 0
           for (k in e) { split(k, p, " "); if (p[2] == n) { inc = 1; break } }
           if (!inc) {
             delete node[n]; changed = 1
             for (k in e) { split(k, p, " "); if (p[1] == n) delete e[k] }
           }
         }
       } while (changed)
       for (k in e) print "  " k
     }' "$tmp/edges" | sed 's/ \([^ ]*\)$/ -> \1/' | sort >"$tmp/cycles"
if [ -s "$tmp/cycles" ]; then
  echo "link-level cycles (file -> file it calls):"; cat "$tmp/cycles"
fi
check "no cycle between files at link level" test ! -s "$tmp/cycles"

# --- 3. #include lines ---------------------------------------------------------
for l in $layers; do
  for f in "$src/$l"/*.c "$src/$l"/*.h; do
    [ -f "$f" ] || continue
    sed -n 's/^#include "\([a-z_]*\)\/[^"]*".*/\1/p' "$f" |
      while read -r d; do echo "$l/${f##*/} $d"; done
  done
done >"$tmp/incs"
awk 'NR == FNR { ok[$1 " " $2] = 1; next }
     { split($1, a, "/")
       if (!((a[1] " " $2) in ok)) print "  " $1 " includes " $2 "/" }' \
  "$tmp/allowed" "$tmp/incs" >"$tmp/bad_inc"
if [ -s "$tmp/bad_inc" ]; then
  echo "includes against the layer order:"; cat "$tmp/bad_inc"
fi
check "every #include names its own or a lower layer" test ! -s "$tmp/bad_inc"

# The folder graph, for the record (who calls whom).
awk '{ split($1, a, "/"); split($2, b, "/")
       if (a[1] != b[1]) print "  " a[1] " -> " b[1] }' "$tmp/edges" |
  sort -u
finish
