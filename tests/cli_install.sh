#!/bin/sh
# tests/cli_install.sh — the installed oocsim reads the data of its own
# prefix, whatever was configured before, and once the source tree is gone.
#
# A copy of the source tree as shipped (make distdir) is configured with
# prefix P1 and installed, configured again in the same build directory
# with prefix P2 and installed again (the second install must rebuild what
# holds the paths), then the copy is moved away and P1 removed. P2's
# oocsim, run from elsewhere, must list the models of P2 and say so in
# --version; OOCSIM_DATADIR and --datadir must override it. Everything
# lives in one temporary directory, removed at exit.
. "$top_srcdir/tests/lib.sh"

# A clean make of our own: the parent's jobserver and flags are not ours.
unset MAKEFLAGS MFLAGS MAKELEVEL
MAKE=${MAKE:-make}
log="$TMP/build.log"
die() { echo "not ok - $1 (see below)"; tail -n 30 "$log"; exit 1; }

$MAKE -s -C "$top_builddir" distdir distdir="$TMP/src" >"$log" 2>&1 ||
  die "make distdir"
mkdir "$TMP/build"
cd "$TMP/build" || exit 1
"$TMP/src/configure" -q -C --without-cuda --prefix="$TMP/p1" CFLAGS=-O0 \
  >>"$log" 2>&1 || die "configure --prefix=p1"
$MAKE -s install >>"$log" 2>&1 || die "make install (p1)"
ok "installed in p1"
"$TMP/src/configure" -q -C --without-cuda --prefix="$TMP/p2" CFLAGS=-O0 \
  >>"$log" 2>&1 || die "configure --prefix=p2"
$MAKE -s install >>"$log" 2>&1 || die "make install (p2)"
ok "installed in p2"

# contrib/gpu-bundle: the build, its data and its libraries, to run on
# another machine (docs/validation.md); checked once the tree is gone.
sh "$TMP/src/contrib/gpu-bundle" "$TMP/bundle" >>"$log" 2>&1 || die "gpu-bundle"

mv "$TMP/src" "$TMP/moved"
rm -rf "$TMP/p1"
cd / || exit 1

expect_ok "the bundle runs, tree moved" "$TMP/bundle/run" oocsim list models
grep -q '^resnet50 ' "$TMP/out" && ok "the bundle lists resnet50" ||
  not_ok "the bundle lists resnet50: $(cat "$TMP/out")"
expect_ok "the bundle's --version" "$TMP/bundle/run" oocsim --version
grep -qF "data directory: $TMP/bundle (OOCSIM_DATADIR)" "$TMP/out" &&
  ok "the bundle reads its own data" || not_ok "the bundle's data: $(cat "$TMP/out")"

expect_ok "p2 list models, tree moved" "$TMP/p2/bin/oocsim" list models
grep -q '^resnet50 ' "$TMP/out" && ok "p2 lists resnet50" ||
  not_ok "p2 lists resnet50: $(cat "$TMP/out")"
expect_ok "p2 --version" "$TMP/p2/bin/oocsim" --version
grep -qF "data directory: $TMP/p2/share/oocsim (installed)" "$TMP/out" &&
  ok "--version names p2's data" || not_ok "--version: $(cat "$TMP/out")"

for d in hardware.md architecture.md executor.md validation.md; do
  [ -f "$TMP/p2/share/doc/oocsim/$d" ] && ok "$d installed" || not_ok "$d installed"
done
# What the installed documents embed is installed where they link to it.
for d in "$TMP/p2/share/doc/oocsim"/*.md; do
  for t in $(grep -oE '\]\([^):#]+\)' "$d" | sed -E 's/^\]\(//; s/\)$//' | sort -u); do
    [ -e "$(dirname "$d")/$t" ] && ok "$(basename "$d") -> $t installed" ||
      not_ok "$(basename "$d") links to $t, not installed"
  done
done
for d in models/README.md hwprofiles/README.md plots/README.md; do
  [ -f "$TMP/p2/share/oocsim/$d" ] && ok "$d installed" || not_ok "$d installed"
done

# Overrides: a copy of the data elsewhere, by environment and by option.
mkdir "$TMP/data"
cp -R "$TMP/p2/share/oocsim/models" "$TMP/p2/share/oocsim/hwprofiles" \
  "$TMP/data/"
rm "$TMP/data/models/alexnet.json"
OOCSIM_DATADIR="$TMP/data" "$TMP/p2/bin/oocsim" list models >"$TMP/out" 2>&1
if grep -q '^resnet50 ' "$TMP/out" && ! grep -q '^alexnet ' "$TMP/out"; then
  ok "OOCSIM_DATADIR is read"; else not_ok "OOCSIM_DATADIR: $(cat "$TMP/out")"; fi
OOCSIM_DATADIR="$TMP/p2/share/oocsim" "$TMP/p2/bin/oocsim" --datadir \
  "$TMP/data" --version >"$TMP/out" 2>&1
grep -qF "data directory: $TMP/data (--datadir)" "$TMP/out" &&
  ok "--datadir wins over OOCSIM_DATADIR" || not_ok "--datadir: $(cat "$TMP/out")"
expect_fail "--datadir missing" "--datadir $TMP/none: not a directory" \
  "$TMP/p2/bin/oocsim" --datadir "$TMP/none" list models
OOCSIM_DATADIR="$TMP/none" "$TMP/p2/bin/oocsim" list models >"$TMP/out" 2>&1
grep -qF "$TMP/none (OOCSIM_DATADIR) is not one, it has no models/" "$TMP/out" &&
  ok "bad OOCSIM_DATADIR is named" || not_ok "bad OOCSIM_DATADIR: $(cat "$TMP/out")"
# A folder without the zoo: an unknown model names the data directory,
# not just "available: none".
mkdir -p "$TMP/empty"
expect_fail "model, no data directory" \
  "unknown model 'resnet50' (none available; data directory: none: $TMP/empty (--datadir) is not one, it has no models/)" \
  "$TMP/p2/bin/oocsim" --datadir "$TMP/empty" info -m resnet50
finish
