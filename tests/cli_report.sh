#!/bin/sh
# tests/cli_report.sh — `oocsim plot` and `oocsim report`: every plot kind
# gives a valid PNG and SVG when gnuplot is present; the report names every
# planner and the winner (checked against its own data); without gnuplot
# both still write their data and exit 1 saying gnuplot is missing.
. "${top_srcdir:-.}/tests/lib.sh"

is_png() { [ -s "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "211PNG" ]; }
is_svg() { [ -s "$1" ] && grep -q '<svg' "$1"; }

# Inputs: a batch sweep, a bandwidth sweep, a maxbatch sweep.
$OOCSIM sweep -m alexnet -b 64,128,256 --hw v100-pcie3 -p incore,vdnn,window -o "$TMP/thr" >/dev/null 2>&1 \
  && ok "throughput sweep" || not_ok "throughput sweep"
$OOCSIM sweep -m alexnet -b 128 --hw v100-pcie3 -p vdnn,window --hw-set link.h2d_GBps+link.d2h_GBps=8,32,128 -o "$TMP/bw" >/dev/null 2>&1 \
  && ok "bandwidth sweep" || not_ok "bandwidth sweep"
$OOCSIM sweep --maxbatch -m alexnet --hw v100-pcie3,a100-pcie4 -p vdnn,window -o "$TMP/mb" >/dev/null 2>&1 \
  && ok "maxbatch sweep" || not_ok "maxbatch sweep"

# A small report (also gives the memory and timeline CSVs).
R="$TMP/rep"
$OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p incore,vdnn,window -j 2 -o "$R" >"$TMP/rout" 2>"$TMP/rerr"
rrc=$?
have_gnuplot=1
grep -q "gnuplot is missing" "$TMP/rerr" && have_gnuplot=0
if [ $have_gnuplot -eq 1 ]; then
  [ $rrc -eq 0 ] && ok "report exits 0" || not_ok "report rc=$rrc: $(cat "$TMP/rerr")"
else
  echo "# gnuplot not found: plot checks skipped"
fi
[ -s "$R/report.md" ] && [ -s "$R/report.html" ] && ok "report.md and report.html written" || not_ok "report files"
for p in incore vdnn window; do
  grep -q "^| \**$p\**  *|" "$R/report.md" && grep -q "<td>$p</td>" "$R/report.html" \
    && ok "report lists $p" || not_ok "report misses $p"
done
# The winner is the feasible planner with the smallest iteration time at
# batch 128 in the report's own data.
want=$(awk -F, 'NR>1 && $7==128 && $10==1 { if (best=="" || $11 < bt) { best=$6; bt=$11 } } END { print best }' "$R/data/throughput/results.csv")
grep -q "^Winner: $want," "$R/report.md" && grep -q "Winner: $want," "$R/report.html" \
  && ok "report names the winner ($want)" || not_ok "winner: want $want, got $(grep Winner "$R/report.md")"
grep -q "What if: other host links" "$R/report.md" && grep -q "gh200-c2c" "$R/report.md" \
  && ok "what-if section" || not_ok "what-if section"
grep -q "Where the time goes" "$R/report.html" && grep -q "<style>" "$R/report.html" \
  && ok "html has the breakdown and inline CSS" || not_ok "html content"
head -n 1 "$R/data/timeline.csv" | grep -q '^lane,start_s,end_s,phase,layer$' \
  && grep -q '^compute,.*,fwd,' "$R/data/timeline.csv" && grep -q '^compute,.*,bwd,' "$R/data/timeline.csv" \
  && ok "timeline CSV" || not_ok "timeline CSV"
head -n 1 "$R/data/memory.csv" | grep -q '^time_s,allocated_bytes,reserved_bytes$' && ok "memory CSV" || not_ok "memory CSV"

if [ $have_gnuplot -eq 1 ]; then
  for img in throughput memory gantt maxbatch bandwidth; do
    is_png "$R/$img.png" && grep -q "src=\"$img.png\"" "$R/report.html" \
      && ok "report image $img.png" || not_ok "report image $img.png"
  done
  for f in png svg; do
    for k in throughput:thr bandwidth:bw maxbatch:mb; do
      kind=${k%%:*}; dir=${k#*:}
      $OOCSIM plot $kind --in "$TMP/$dir/results.csv" -o "$TMP/p-$kind.$f" 2>"$TMP/perr"
      is_$f "$TMP/p-$kind.$f" && ok "plot $kind .$f" || not_ok "plot $kind .$f: $(cat "$TMP/perr")"
    done
    $OOCSIM plot memory --in "$R/data/memory.csv" --hw v100-pcie3 -o "$TMP/p-memory.$f" 2>"$TMP/perr"
    is_$f "$TMP/p-memory.$f" && ok "plot memory .$f" || not_ok "plot memory .$f: $(cat "$TMP/perr")"
    $OOCSIM plot gantt --in "$R/data/timeline.csv" -o "$TMP/p-gantt.$f" 2>"$TMP/perr"
    is_$f "$TMP/p-gantt.$f" && ok "plot gantt .$f" || not_ok "plot gantt .$f: $(cat "$TMP/perr")"
  done
  # The bandwidth data holds one block per planner, sorted by bandwidth.
  x=$(awk '/^# vdnn/ {b=1; next} b && NF==2 {printf "%s ", $1} b && NF==0 {exit}' "$TMP/p-bandwidth.dat")
  [ "$x" = "8 32 128 " ] && ok "bandwidth data per planner in order" || not_ok "bandwidth data: $x"
fi

# Without gnuplot: data still written, exit 1, one line naming gnuplot.
expect_fail "plot without gnuplot" "gnuplot is missing" env OOCSIM_GNUPLOT=/nonexistent/gnuplot $OOCSIM plot throughput --in "$TMP/thr/results.csv" -o "$TMP/ng.png"
[ -s "$TMP/ng.dat" ] && ok "plot without gnuplot writes its data" || not_ok "no data file"
rm -rf "$TMP/rep2"
expect_fail "report without gnuplot" "gnuplot is missing" env OOCSIM_GNUPLOT=/nonexistent/gnuplot $OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p vdnn,window --no-maxbatch -o "$TMP/rep2"
[ -s "$TMP/rep2/report.md" ] && [ -s "$TMP/rep2/report.html" ] && [ -s "$TMP/rep2/data/throughput/results.csv" ] \
  && ok "report without gnuplot writes Markdown, HTML and CSV" || not_ok "report without gnuplot: files missing"
grep -q "not drawn: gnuplot is missing" "$TMP/rep2/report.md" && ok "report says the plots are missing" || not_ok "no note on plots"

# Errors.
expect_fail "unknown plot kind" "unknown plot kind 'pie'" $OOCSIM plot pie --in "$TMP/thr/results.csv" -o "$TMP/x.png"
expect_fail "bandwidth plot needs a --hw-set sweep" "--hw-set link.h2d_GBps" $OOCSIM plot bandwidth --in "$TMP/thr/results.csv" -o "$TMP/x.png"
expect_fail "maxbatch plot needs a maxbatch sweep" "max_batch" $OOCSIM plot maxbatch --in "$TMP/thr/results.csv" -o "$TMP/x.png"
expect_fail "plot output extension" ".png or .svg" $OOCSIM plot throughput --in "$TMP/thr/results.csv" -o "$TMP/x.jpg"
expect_fail "plot missing input" "nosuch.csv" $OOCSIM plot throughput --in "$TMP/nosuch.csv" -o "$TMP/x.png"
expect_fail "report missing -b" "missing -b" $OOCSIM report -m alexnet --hw v100-pcie3 -o "$TMP/r3"
expect_fail "report unknown planner" "nosuch" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -p nosuch -o "$TMP/r3"
touch "$TMP/afile"
expect_fail "report unwritable directory" "afile/r" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -o "$TMP/afile/r"
expect_ok "plot --help" $OOCSIM plot --help
expect_ok "report --help" $OOCSIM report --help
finish
