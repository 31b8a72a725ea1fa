#!/bin/sh
# tests/calib_link.sh — oocsim-calib-link (executor/calib_link.c): skips
# (77) without a GPU; with one, measures up to 64 MiB and checks that the
# "link" fragment it prints has every field of a profile's link object,
# with positive bandwidths, and its provenance.
. "$top_srcdir/tests/lib.sh"
CALIB="$top_builddir/oocsim-calib-link"

"$CALIB" --max-MiB 64 >"$TMP/link.json" 2>"$TMP/err"; rc=$?
if [ $rc -eq 77 ]; then
  grep -q "no CUDA device: skipping" "$TMP/err" && echo "skip: $(cat "$TMP/err")"
  exit 77
fi
[ $rc -eq 0 ] && ok "oocsim-calib-link runs" || not_ok "oocsim-calib-link rc=$rc: $(cat "$TMP/err")"
for k in h2d_GBps d2h_GBps h2d_pageable_GBps d2h_pageable_GBps \
         duplex_h2d_GBps duplex_d2h_GBps; do
  v=$(sed -n "s/^  \"$k\": \([0-9.]*\),*$/\1/p" "$TMP/link.json")
  if [ -n "$v" ] && awk "BEGIN { exit !($v > 0.1) }"; then ok "$k = $v"
  else not_ok "$k missing or not positive ('$v')"; fi
done
for k in latency_us copy_engines gpu date nvidia_driver cuda_runtime; do
  grep -q "\"$k\":" "$TMP/link.json" && ok "has $k" || not_ok "no $k"
done
finish
