#!/bin/sh
# tests/cli_progress.sh — the long commands show progress with an ETA on a
# terminal (script(1) gives them one) and nothing when stderr is not one.
. "$top_srcdir/tests/lib.sh"

# Not a terminal: stderr stays empty.
for c in "maxbatch -m alexnet --hw v100-pcie3 -p vdnn" \
         "minbudget -m alexnet -b 256 --hw v100-pcie3 -p vdnn" \
         "report -m alexnet -b 64 --hw v100-pcie3 -p vdnn --no-maxbatch -j 2 -o $TMP/r1"; do
  name=${c%% *}
  $OOCSIM $c >"$TMP/out" 2>"$TMP/err"
  if [ "$name" = report ]; then grep -v 'gnuplot' "$TMP/err" >"$TMP/err2"; mv "$TMP/err2" "$TMP/err"; fi
  [ ! -s "$TMP/err" ] && ok "$name: quiet when stderr is not a terminal" || not_ok "$name wrote: $(head -c 200 "$TMP/err")"
done

if ! command -v script >/dev/null 2>&1; then
  echo "# script(1) not found: progress on a terminal not checked"
  finish; exit $?
fi
for c in "maxbatch -m alexnet --hw v100-pcie3 -p vdnn" \
         "minbudget -m alexnet -b 256 --hw v100-pcie3 -p vdnn" \
         "report -m alexnet -b 64 --hw v100-pcie3 -p vdnn --no-maxbatch -j 2 -o $TMP/r2"; do
  name=${c%% *}
  script -qec "$OOCSIM $c >/dev/null" "$TMP/tty.out" >/dev/null 2>&1 </dev/null
  tr '\r' '\n' <"$TMP/tty.out" | grep "^$name " >"$TMP/lines"
  if [ "$name" = minbudget ]; then
    grep -q "simulations .* elapsed  vdnn at " "$TMP/lines" && ok "$name: progress on a terminal" ||
      not_ok "$name progress: $(cat -v "$TMP/tty.out" | head -c 300)"
  else
    grep -q "ETA" "$TMP/lines" && ok "$name: progress with ETA on a terminal" ||
      not_ok "$name progress: $(cat -v "$TMP/tty.out" | head -c 300)"
  fi
done
finish
