#!/bin/sh
# tests/cli_report.sh — `oocsim plot` and `oocsim report`: every plot kind
# gives a valid PNG and SVG when gnuplot is present; the report names every
# planner and the winner (checked against its own data); without gnuplot
# both still write their data and exit 1 saying gnuplot is missing.
. "${top_srcdir:-.}/tests/lib.sh"

# A whole PNG: the signature, an IHDR chunk first and the IEND chunk last
# (a file cut short by a failing gnuplot has no IEND). A whole SVG: opens
# an <svg> element and closes it.
is_png() {
  [ -s "$1" ] && [ "$(head -c 16 "$1" | od -An -c | tr -d ' \n')" = "211PNG\r\n032\n\0\0\0\rIHDR" ] \
    && [ "$(tail -c 8 "$1" | head -c 4)" = "IEND" ]
}
is_svg() { [ -s "$1" ] && grep -q '<svg' "$1" && tail -n 3 "$1" | grep -q '</svg>'; }

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
H='NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }'
want=$(awk -F, "$H"' $c["batch"]==128 && $c["feasible"]==1 { if (best=="" || $c["iteration_s"] < bt) { best=$c["planner"]; bt=$c["iteration_s"] } } END { print best }' "$R/data/throughput/results.csv")
grep -q "^Winner: $want," "$R/report.md" && grep -q "Winner: $want," "$R/report.html" \
  && ok "report names the winner ($want)" || not_ok "winner: want $want, got $(grep Winner "$R/report.md")"
grep -q "What if: other host links" "$R/report.md" && grep -q "gh200-c2c" "$R/report.md" \
  && ok "what-if section" || not_ok "what-if section"
grep -q "Where the time goes" "$R/report.html" && grep -q "<style>" "$R/report.html" \
  && ok "html has the breakdown and inline CSS" || not_ok "html content"
head -n 1 "$R/data/timeline.csv" | grep -q '^lane,start_s,end_s,phase,layer,cause$' \
  && grep -q '^compute,.*,fwd,' "$R/data/timeline.csv" && grep -q '^compute,.*,bwd,' "$R/data/timeline.csv" \
  && ok "timeline CSV" || not_ok "timeline CSV"
head -n 1 "$R/data/memory.csv" | grep -q '^time_s,allocated_bytes,reserved_bytes$' && ok "memory CSV" || not_ok "memory CSV"
# The winner's "why": how it places tensors and where its time goes; every
# other feasible planner gets its distance to the bound and its overheads.
set -- $(awk -F, -v p="$want" "$H"' $c["planner"]==p && $c["batch"]==128 {print $c["keep"], $c["swap"], $c["recompute"]}' "$R/data/throughput/results.csv")
if [ "$2$3" = "00" ]; then how="How: this batch fits the budget as it is; it keeps all $1 tensors resident"
else how="How: it keeps $1 tensors resident, swaps $2 "; fi
grep -qF "$how" "$R/report.md" \
  && grep -q "^Where its time goes: " "$R/report.md" && ok "report explains the winner" || not_ok "winner explanation"
for p in incore vdnn window; do
  [ "$p" = "$want" ] && continue
  grep -q "^- $p: [0-9.]* ms, [0-9.]*x the lower bound, .* slower than the winner" "$R/report.md" \
    || grep -q "^- $p does not fit: " "$R/report.md" || not_ok "no line for $p under the winner"
done
# What-if rows go from the slowest link to the fastest, then one summary.
order=$(awk -F'|' '/^## What if/ {w=1} w && /^\| [a-z0-9]+-/ {gsub(/ /, "", $3); printf "%s ", $3}' "$R/report.md")
[ "$order" = "12.2 25.5 55.9 68 360 " ] && ok "what-if links slowest first" || not_ok "what-if order: $order"
ls "$R"/*.dat >/dev/null 2>&1 && not_ok "gnuplot data left beside the report" || ok "report directory holds the report and images only"

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
  # What a reader looks for on each plot (SVG text): the link marks on the
  # bandwidth plot, the in-core line and OOM key on the throughput plot, the
  # budget on the memory plot, every planner on the bars, the phases on the
  # timeline.
  for m in PCIe3 PCIe4 PCIe5 NVLink2 C2C; do
    grep -q ">$m " "$TMP/p-bandwidth.svg" || not_ok "bandwidth plot: no $m mark"
  done
  grep -q '>PCIe3 ' "$TMP/p-bandwidth.svg" && grep -q '>C2C ' "$TMP/p-bandwidth.svg" \
    && ok "bandwidth plot marks the link profiles" || not_ok "bandwidth marks"
  grep -q 'in-core (unlimited memory)' "$TMP/p-throughput.svg" \
    && ok "throughput plot keys the in-core line" || not_ok "throughput key"
  grep -q 'budget 15.50 GiB' "$TMP/p-memory.svg" && ok "memory plot shows the budget (15.50 GiB)" || not_ok "memory budget"
  # Reserved is flat in a steady-state iteration, and the plot says why;
  # a reserved curve that moves gets no such note.
  awk -F, 'NR > 1 { if (min == "" || $3 < min) min = $3; if ($3 > max) max = $3 } END { exit !(max - min <= 0.02 * max) }' "$R/data/memory.csv" \
    && grep -q 'reserved stays flat: this is a steady-state iteration; the allocator keeps the segments it reserved' "$TMP/p-memory.svg" \
    && ok "memory plot explains the flat reserved curve" || not_ok "no note on the flat reserved curve"
  printf 'time_s,allocated_bytes,reserved_bytes\n0,0,0\n0.001,1073741824,1073741824\n0.002,0,2147483648\n' >"$TMP/mem-grow.csv"
  $OOCSIM plot memory --in "$TMP/mem-grow.csv" -o "$TMP/mem-grow.svg" 2>"$TMP/perr"
  is_svg "$TMP/mem-grow.svg" && ! grep -q 'reserved stays flat' "$TMP/mem-grow.svg" \
    && ok "no flat-reserved note when reserved grows" || not_ok "memory note on a growing curve: $(cat "$TMP/perr")"
  grep -q '>vdnn<' "$TMP/p-maxbatch.svg" && grep -q '>window<' "$TMP/p-maxbatch.svg" \
    && ok "maxbatch bars name the planners" || not_ok "maxbatch key"
  grep -q '>forward<' "$TMP/p-gantt.svg" && grep -q '>backward<' "$TMP/p-gantt.svg" \
    && ok "timeline key names the phases" || not_ok "gantt key"
  # Recompute, copies and stalls get their own colours: a timeline with all.
  printf 'lane,start_s,end_s,phase,layer\ncompute,0,0.001,fwd,a\ncompute,0.001,0.002,stall,\ncompute,0.002,0.003,recompute,a\ncompute,0.003,0.004,bwd,a\nh2d,0.0005,0.002,swapin,a\nd2h,0,0.0005,swapout,a\n' >"$TMP/tl.csv"
  $OOCSIM plot gantt --in "$TMP/tl.csv" -o "$TMP/tl.svg" 2>"$TMP/perr"
  grep -q '>recompute<' "$TMP/tl.svg" && grep -q '>stall<' "$TMP/tl.svg" \
    && grep -q '>swap-in<' "$TMP/tl.svg" && grep -q '>swap-out<' "$TMP/tl.svg" \
    && ok "timeline shows recompute, copies and stalls" || not_ok "gantt recompute/stall: $(cat "$TMP/perr")"
  # Back-to-back boxes of a kind at one height on a lane are one box (no
  # seams that read as stalls): no two boxes of a block with the same
  # vertical extent touch.
  seams=$(awk '/^#/ {blk++; next} NF==4 { k = blk SUBSEP $3 SUBSEP $4; if ((k in last) && $1 <= last[k] + 1e-6) c++; last[k]=$2 } END {print c+0}' "$TMP/p-gantt.dat")
  [ "$seams" -eq 0 ] && ok "timeline boxes merged ($(grep -c '^[0-9]' "$TMP/p-gantt.dat") boxes)" || not_ok "timeline: $seams touching boxes"
  # A plan that stalls between short kernels (vdnn) reads at a glance:
  # stalls are spans on the compute lane, by cause; no stripes, i.e. no two
  # neighbouring boxes on a lane both narrower than half the visible width
  # (the data file's header says it); the update is at least 1/150 of the
  # iteration wide and labelled.
  $OOCSIM simulate -m resnet50 -b 256 --hw v100-pcie3 -p vdnn --timeline-csv "$TMP/vdnn-tl.csv" >/dev/null 2>&1
  $OOCSIM plot gantt --in "$TMP/vdnn-tl.csv" -o "$TMP/vdnn-gantt.svg" 2>"$TMP/perr"
  is_svg "$TMP/vdnn-gantt.svg" && grep -q '^# stall: swap-in$' "$TMP/vdnn-gantt.dat" && grep -q '^# stall: swap-out$' "$TMP/vdnn-gantt.dat" \
    && grep -q '>stall: swap-in<' "$TMP/vdnn-gantt.svg" && grep -q '>stall: swap-out<' "$TMP/vdnn-gantt.svg" \
    && awk '/^# stall/ {s=1; next} /^#/ {s=0} s && NF==4 && $3 >= 2.5 {n++} END {exit !(n > 0)}' "$TMP/vdnn-gantt.dat" \
    && ok "stalls drawn on the compute lane by cause" || not_ok "vdnn gantt stalls: $(cat "$TMP/perr")"
  # Waits for the host (lms: the host blocked in an allocation a swap-out's
  # free holds up) have a shade and key of their own, not plain red.
  $OOCSIM simulate -m resnet50 -b 256 --hw v100-pcie3 -p lms --timeline-csv "$TMP/lms-tl.csv" >/dev/null 2>&1
  $OOCSIM plot gantt --in "$TMP/lms-tl.csv" -o "$TMP/lms-gantt.svg" 2>"$TMP/perr"
  grep -q ',host$' "$TMP/lms-tl.csv" && is_svg "$TMP/lms-gantt.svg" &&
    grep -q '^# stall: host$' "$TMP/lms-gantt.dat" && ! grep -q '^# stall$' "$TMP/lms-gantt.dat" &&
    grep -q '>stall: host<' "$TMP/lms-gantt.svg" &&
    ok "host waits drawn as stall: host" || not_ok "lms gantt host stalls: $(grep '^#' "$TMP/lms-gantt.dat" | tr '\n' ' ') $(cat "$TMP/perr")"
  stripes=$(awk 'NR==1 {w=$NF+0; it=$5+0} /^#/ {next} NF==4 { print int($3 + 0.5), $1, $2 }' "$TMP/vdnn-gantt.dat" | sort -k1,1n -k2,2g -u |
    awk -v w="$(sed -n '1s/.*visible width \([0-9.e+-]*\) ms/\1/p' "$TMP/vdnn-gantt.dat")" '
      { if ($1 != lane) { lane = $1; prevn = 0; px = "" } if ($2 == px) next; px = $2
        n = ($3 - $2 < w / 2); if (n && prevn) c++; prevn = n }
      END { print c + 0 }')
  spans=$(grep -c '^compute,' "$TMP/vdnn-tl.csv")
  [ "$stripes" -eq 0 ] && [ "$spans" -gt 400 ] && ok "vdnn timeline without stripes ($spans compute-lane spans)" || not_ok "vdnn timeline: $stripes stripe pairs"
  upd=$(awk '/^# gantt:/ {it=$4} /^# update/ {u=1; next} u && NF==4 {print ($2 - $1) / it; exit}' "$TMP/vdnn-gantt.dat")
  awk -v r="$upd" 'BEGIN { exit !(r >= 1 / 150 - 1e-9) }' && [ "$(grep -c '>update<' "$TMP/vdnn-gantt.svg")" -ge 2 ] \
    && ok "update visible ($upd of the iteration) and labelled" || not_ok "update width $upd"
  # Throughput at a glance. Planners that coincide at every batch are one
  # line keyed "lms = capacity = window"; infeasible batches are crosses in
  # a strip of their own (rows 1, 2, ... in the data, keyed and labelled
  # "infeasible"), not points near zero samples/s; the x axis ends at the
  # first and last batch (gnuplot's own range, read back through a wrapper).
  $OOCSIM sweep -m alexnet -b 64,128 --hw v100-pcie3 -p lms,capacity,window -o "$TMP/same" >/dev/null 2>&1
  $OOCSIM plot throughput --in "$TMP/same/results.csv" -o "$TMP/same.svg" 2>"$TMP/perr"
  grep -q '>lms = capacity = window<' "$TMP/same.svg" && ! grep -q '>capacity<' "$TMP/same.svg" \
    && ok "coinciding planners keyed as one line" || not_ok "coinciding planners: $(cat "$TMP/perr")"
  gp=$($OOCSIM plot --help | tr '\n' ' ' | sed -n 's/.*gnuplot is \([^ ]*\) unless.*/\1/p')
  [ -n "$OOCSIM_GNUPLOT" ] && gp=$OOCSIM_GNUPLOT
  printf '#!/bin/sh\nexec "%s" "$@" -e "set print \\"%s\\"; print GPVAL_X_MIN, GPVAL_X_MAX"\n' "$gp" "$TMP/xr" >"$TMP/gpwrap"
  chmod +x "$TMP/gpwrap"
  $OOCSIM sweep -m alexnet -b 8:104:8 --hw v100-pcie3 -p incore,vdnn,window --budget 900MiB -o "$TMP/many" >/dev/null 2>&1
  $OOCSIM plot throughput --in "$TMP/many/results.csv" -o "$TMP/many.svg" 2>"$TMP/perr"
  oomy=$(awk '/^# .* oom$/ {o=1; next} /^#/ {o=0} o && NF==2 && $2 != "NaN" {print $2}' "$TMP/many.dat" | sort -u | tr '\n' ' ')
  [ "$oomy" = "1 2 3 " ] && [ "$(grep -c '>infeasible<' "$TMP/many.svg")" -ge 2 ] \
    && ok "OOM marks in a strip of their own (rows $oomy), keyed infeasible" || not_ok "OOM marks: rows '$oomy' $(cat "$TMP/perr")"
  OOCSIM_GNUPLOT="$TMP/gpwrap" $OOCSIM plot throughput --in "$TMP/many/results.csv" -o "$TMP/many.png" 2>"$TMP/perr"
  [ "$(cat "$TMP/xr" 2>/dev/null)" = "8.0 104.0" ] && is_png "$TMP/many.png" \
    && ok "throughput x axis spans the batches only" || not_ok "throughput x range: $(cat "$TMP/xr" "$TMP/perr")"
  # Bandwidth: the link labels stand above the plot (above its top border,
  # gnuplot's GPVAL_TERM_YMAX read back through the wrapper), each at its
  # dotted line (the baseline of the rotated text within 10 px right of
  # it) and apart from the others; the x label names the keys set.
  printf '#!/bin/sh\nexec "%s" "$@" -e "set print \\"%s\\"; print GPVAL_TERM_XMIN, GPVAL_TERM_XMAX, GPVAL_TERM_YMAX, GPVAL_TERM_YSIZE / GPVAL_TERM_SCALE, GPVAL_X_MIN, GPVAL_X_MAX"\n' "$gp" "$TMP/bwr" >"$TMP/gpwrap2"
  chmod +x "$TMP/gpwrap2"
  OOCSIM_GNUPLOT="$TMP/gpwrap2" $OOCSIM plot bandwidth --in "$TMP/bw/results.csv" -o "$TMP/bw2.svg" 2>"$TMP/perr"
  set -- $(cat "$TMP/bwr" 2>/dev/null)
  bad=$(awk -v x0="$1" -v x1="$2" -v ytop="$(awk -v a="$4" -v b="$3" 'BEGIN {print a - b}')" -v lo="$5" -v hi="$6" -v marks="12.2 25.5 55.9 68 360" '
    BEGIN { n = split(marks, m, " ") }
    /translate\(/ { t = $0; sub(/.*translate\(/, "", t); sub(/\).*/, "", t); split(t, xy, ","); next }
    /<text[^>]*>(PCIe|NVLink|C2C)/ {
      k++; lx = x0 + (log(m[k]) - log(lo)) / (log(hi) - log(lo)) * (x1 - x0)
      if (xy[2] >= ytop) print "label " k " below the top border (" xy[2] " >= " ytop ")"
      if (xy[1] - lx > 10 || xy[1] < lx) print "label " k " at x " xy[1] ", its line at " lx
      if (k > 1 && xy[1] - px < 9) print "labels " k - 1 " and " k " overlap"
      px = xy[1] }
    END { if (k != n) print k " labels of " n }' "$TMP/bw2.svg")
  [ -z "$bad" ] && ok "link labels above the plot, each at its line" || not_ok "link labels: $bad $(cat "$TMP/perr")"
  grep -q '>host link bandwidth, GB/s, log scale: H2D = D2H, all set to it<' "$TMP/bw2.svg" && ! grep -q 'more key' "$TMP/bw2.svg" \
    && ok "bandwidth axis names the keys set" || not_ok "bandwidth axis label: $(grep 'host link' "$TMP/bw2.svg")"
  # Maxbatch: equal bars say why, in a numbered note under the plot (the
  # bracket carries the number). On the MLP (ideal allocator, 64 MiB)
  # every planner stops where the working set of 'bwd relu1' exceeds the
  # budget; on AlexNet built as cuDNN runs max-pooling (no saved indices,
  # the model's framework block) vdnn and lms stop at the same batch, out
  # of memory at its largest step 'bwd pool1', and window (higher) gets no
  # bracket.
  $OOCSIM sweep --maxbatch -m "$top_srcdir/tests/data/cli_mlp.json" --hw v100-pcie3 -p vdnn,window,capacity --allocator ideal --budget 64MiB -o "$TMP/mbm" >/dev/null 2>&1
  $OOCSIM plot maxbatch --in "$TMP/mbm/results.csv" -o "$TMP/mbm.svg" 2>"$TMP/perr"
  grep -q '>1. v100-pcie3: limited by the working set of step bwd relu1<' "$TMP/mbm.svg" &&
    grep -q '>1<' "$TMP/mbm.svg" \
    && ok "equal bars limited by one step's working set are annotated" || not_ok "maxbatch annotation: $(cat "$TMP/perr")"
  sed 's/^  "dtype": "fp32",/  "dtype": "fp32", "framework": { "maxpool_indices": "none" },/' \
    "$top_srcdir/models/alexnet.json" >"$TMP/alexnet_cudnn.json"
  $OOCSIM sweep --maxbatch -m "$TMP/alexnet_cudnn.json" --hw v100-pcie3 -p vdnn,lms,window -o "$TMP/mbt" >/dev/null 2>&1
  $OOCSIM plot maxbatch --in "$TMP/mbt/results.csv" -o "$TMP/mbt.svg" 2>"$TMP/perr"
  [ "$(grep -c '>1. v100-pcie3: limited by the working set of step bwd pool1<' "$TMP/mbt.svg")" -eq 1 ] && is_svg "$TMP/mbt.svg" \
    && ok "equal vdnn and lms bars annotated once" || not_ok "alexnet maxbatch annotation: $(cat "$TMP/perr")"
  [ "$(grep -c 'limited by\|runs out of memory' "$TMP/p-maxbatch.svg")" -eq 0 ] \
    && ok "bars of different heights carry no bracket" || not_ok "unexpected maxbatch bracket"
  # A sweep over two profiles: one panel per profile, a planner keyed once.
  $OOCSIM sweep -m alexnet -b 64,128 --hw v100-pcie3,a100-pcie4 -p vdnn,window -o "$TMP/thr2" >/dev/null 2>&1
  $OOCSIM plot throughput --in "$TMP/thr2/results.csv" -o "$TMP/thr2.svg" 2>"$TMP/perr"
  is_svg "$TMP/thr2.svg" && grep -q '>v100-pcie3<' "$TMP/thr2.svg" && grep -q '>a100-pcie4<' "$TMP/thr2.svg" \
    && [ "$(grep -c '>vdnn<' "$TMP/thr2.svg")" -eq 1 ] \
    && ok "throughput over two profiles: a panel each, one key" || not_ok "throughput panels: $(cat "$TMP/perr")"
  # Any title draws as given: quotes (two together once broke gnuplot's
  # -e), double quotes, backslashes, UTF-8, and backquotes, which gnuplot
  # runs as a shell command in a double-quoted string.
  for t in "'" "a''b" 'say "hi" \ back' 'é漢😀' "T\`touch $TMP/PWNED\`"; do
    if $OOCSIM plot throughput --in "$TMP/thr2/results.csv" -o "$TMP/title.svg" \
         --title "$t" 2>"$TMP/perr" && is_svg "$TMP/title.svg" &&
       grep -qF ">$t<" "$TMP/title.svg"; then
      ok "title [$t] drawn as given"
    else
      not_ok "title [$t]: $(cat "$TMP/perr")"
    fi
  done
  [ ! -e "$TMP/PWNED" ] && ok "a backquoted title runs nothing" ||
    not_ok "a backquoted title ran a shell command"
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
# A report rewritten where gnuplot fails keeps no image of the one before
# (the document would show it as drawn), and each note gives its own
# plot's failure, naming the data where it lies (data/).
if [ $have_gnuplot -eq 1 ]; then
  rm -rf "$TMP/rep4"
  $OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p vdnn,window --no-maxbatch -o "$TMP/rep4" >/dev/null 2>&1
  expect_fail "report where gnuplot fails" "wrote $TMP/rep4/data/throughput.dat but not $TMP/rep4/throughput.png" \
    env OOCSIM_GNUPLOT=/bin/false $OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p vdnn --no-maxbatch -o "$TMP/rep4"
  [ -z "$(ls "$TMP/rep4"/*.png 2>/dev/null)" ] && ok "no image of the report before" || not_ok "old images kept: $(ls "$TMP/rep4")"
  grep -q "(memory over one iteration: not drawn: gnuplot failed on .*/memory.gp ($TMP/rep4/memory.png)" "$TMP/rep4/report.md" &&
    ok "each plot's note gives its own failure" || not_ok "notes: $(grep 'not drawn' "$TMP/rep4/report.md" | head -2)"
fi

# A report that fails in DIR leaves no document of the one before (it
# would show this report's data and images, or none): here report.md is
# a folder, so it cannot go; and then data/throughput is a file, so the
# new data cannot be written (the old document went before any was).
if [ $have_gnuplot -eq 1 ]; then
  rm -rf "$TMP/rep5"
  $OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p vdnn --no-maxbatch -o "$TMP/rep5" >/dev/null 2>&1
  rm -f "$TMP/rep5/report.md" && mkdir "$TMP/rep5/report.md"
  expect_fail "report that cannot replace its document" "cannot remove the old '$TMP/rep5/report.md'" \
    $OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p vdnn --no-maxbatch -o "$TMP/rep5"
  [ ! -e "$TMP/rep5/report.html" ] && ok "no document of the report before" ||
    not_ok "the old report.html is left: $(ls "$TMP/rep5")"
  rm -rf "$TMP/rep5"
  $OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p vdnn --no-maxbatch -o "$TMP/rep5" >/dev/null 2>&1
  rm -rf "$TMP/rep5/data/throughput" && : >"$TMP/rep5/data/throughput"
  expect_fail "report whose data cannot be written" "'$TMP/rep5/data/throughput': Not a directory" \
    $OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p vdnn --no-maxbatch -o "$TMP/rep5"
  [ ! -e "$TMP/rep5/report.html" ] && [ ! -e "$TMP/rep5/report.md" ] && [ -z "$(ls "$TMP/rep5"/*.png 2>/dev/null)" ] &&
    ok "no document or image of the report before its data" ||
    not_ok "the old report is left beside new data: $(ls "$TMP/rep5")"
fi

# The winner's per-class table is oocsim explain's for the same planner
# (the report explains the plan it traced, without planning it again).
win=$($OOCSIM report -m resnet50 -b 256 --hw v100-nvlink2 -p vdnn,window --no-maxbatch -j 2 -o "$TMP/rx" 2>&1 |
  sed -n 's/.*(winner: \([a-z-]*\);.*/\1/p')
got=$(grep '^| \*\*total\*\* |' "$TMP/rx/report.md" | awk -F'|' '{gsub(/ /, ""); print $3, $4, $5, $6, $7}')
want=$($OOCSIM explain -m resnet50 -b 256 --hw v100-nvlink2 -p "${win:-none}" | awk '$1 == "total" {print $2, $5, $6, $7, $8 $9}')
[ -n "$got" ] && [ "$got" = "$want" ] && ok "report's class table is explain's ($got)" ||
  not_ok "report's class table '$got', explain's '$want'"
# Its rows add up to the total: the classes it neither swaps nor
# recomputes are one row, "other classes, all kept".
sums=$(sed -n '/^| tensor class |/,/^| \*\*total\*\* |/p' "$TMP/rx/report.md" | grep -v '^| tensor class\|^|---' |
  awk -F'|' '{ gsub(/[ *]/, "", $2) } $2 != "total" { for (c = 3; c <= 6; c++) s[c] += $c } $2 == "total" { t = ($3 + 0) " " ($4 + 0) " " ($5 + 0) " " ($6 + 0) }
    END { print s[3] " " s[4] " " s[5] " " s[6] " = " t }')
[ -n "$got" ] && echo "$sums" | awk -F' = ' '$1 == $2 { exit 0 } { exit 1 }' &&
  ok "the class table's rows add up to its total ($sums)" || not_ok "class table sums: $sums"

# Errors.
expect_fail "unknown plot kind" "unknown plot kind 'pie'" $OOCSIM plot pie --in "$TMP/thr/results.csv" -o "$TMP/x.png"
# -o must name an image; x.dat is that, not "the same file as its data".
expect_fail "plot -o x.dat" "oocsim: plot: -o $TMP/x.dat: the output must end in .png or .svg" $OOCSIM plot throughput --in "$TMP/thr/results.csv" -o "$TMP/x.dat"
expect_fail "bandwidth plot needs a --hw-set sweep" "--hw-set link.h2d_GBps" $OOCSIM plot bandwidth --in "$TMP/thr/results.csv" -o "$TMP/x.png"
expect_fail "maxbatch plot needs a maxbatch sweep" "max_batch" $OOCSIM plot maxbatch --in "$TMP/thr/results.csv" -o "$TMP/x.png"
expect_fail "plot output extension" ".png or .svg" $OOCSIM plot throughput --in "$TMP/thr/results.csv" -o "$TMP/x.jpg"
expect_fail "plot missing input" "nosuch.csv" $OOCSIM plot throughput --in "$TMP/nosuch.csv" -o "$TMP/x.png"
expect_fail "throughput plot of a memory CSV" "no column 'batch'" $OOCSIM plot throughput --in "$R/data/memory.csv" -o "$TMP/x.png"
expect_fail "gantt plot of a sweep" "expected a timeline CSV" $OOCSIM plot gantt --in "$TMP/thr/results.csv" -o "$TMP/x.png"
expect_fail "plot into a missing directory" "$TMP/nodir/x.dat" $OOCSIM plot throughput --in "$TMP/thr/results.csv" -o "$TMP/nodir/x.png"
expect_fail "plot without KIND" "missing KIND" $OOCSIM plot --in "$TMP/thr/results.csv" -o "$TMP/x.png"
# --precision goes to every sweep of the report: its scenario line names
# it, its data carry the precision column.
expect_ok "report --precision" $OOCSIM report -m gpt2 --set seq=128 -b 16 --hw h100-pcie5 -p window --precision amp-bf16 --optimizer adam --no-maxbatch -j 2 -o "$TMP/rp"
grep -q "batch 16, bf16 (precision amp-bf16);" "$TMP/rp/report.md" && ok "report names the precision" || not_ok "report precision line: $(grep -m1 'Model:' "$TMP/rp/report.md")"
head -n 1 "$TMP/rp/data/throughput/results.csv" | grep -q ',batch,precision,dtype,optimizer,' && ok "report data carry the precision" || not_ok "report data precision column"
# A model name with markup is text in the HTML report, <title> included.
mlp_named '</title><script>x</script>' >"$TMP/xss.json"
expect_ok "report on a model named with markup" \
  $OOCSIM report -m "$TMP/xss.json" -b 4 --hw v100-pcie3 -p incore,vdnn --no-maxbatch -o "$TMP/rxss"
! grep -q '<script>' "$TMP/rxss/report.html" &&
  grep -q '<title>oocsim report: &lt;/title&gt;&lt;script&gt;' "$TMP/rxss/report.html" &&
  ok "report's HTML escapes the name in <title>" || not_ok "report HTML: $(grep -m2 'script' "$TMP/rxss/report.html")"
! grep -q '<script>' "$TMP/rxss/report.md" &&
  grep -q '^# oocsim report: &lt;/title>&lt;script>x&lt;/script>' "$TMP/rxss/report.md" &&
  ok "report.md writes '<' of a name as text" || not_ok "report.md: $(grep -m2 'script' "$TMP/rxss/report.md")"
# A long model name (3,000 two-byte characters) is not cut: the title
# keeps the batch and profile after it, the Model line its figures.
long=$(printf 'é%.0s' $(seq 1 3000))
mlp_named "$long" >"$TMP/long.json"
expect_ok "report on a model with a long name" \
  $OOCSIM report -m "$TMP/long.json" -b 4 --hw v100-pcie3 -p incore,vdnn --no-maxbatch -o "$TMP/rlong"
head -n 1 "$TMP/rlong/report.md" | grep -q "é, batch 4, v100-pcie3\$" &&
  grep -q "^- Model: .*activations kept for backward" "$TMP/rlong/report.md" &&
  ok "a long name is not cut" || not_ok "long name: $(head -n 1 "$TMP/rlong/report.md" | tail -c 80)"
expect_fail "report --batches past what sizes can hold" \
  "oocsim: --batches: batch 9223372036854775807: $top_srcdir/tests/data/cli_mlp.json: layer 'input': out: shape [16] x batch 9223372036854775807 overflows a 64-bit size" \
  $OOCSIM report -m "$top_srcdir/tests/data/cli_mlp.json" -b 4 --hw v100-pcie3 -p incore --no-maxbatch --batches 9223372036854775807 -o "$TMP/rbig"
[ ! -e "$TMP/rbig" ] && ok "a refused report makes no folder" || not_ok "$TMP/rbig left behind"
expect_fail "report --precision with --dtype" "give --precision or --dtype, not both" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 --dtype fp16 --precision amp-fp16 -o "$TMP/r3"
expect_fail "report unknown precision" "--precision: unknown precision 'fp4'" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 --precision fp4 -o "$TMP/r3"
printf 'time_s,allocated_bytes,reserved_bytes\n0,1,2\n0.5,abc,2\n' >"$TMP/mbad.csv"
expect_fail "plot a cell that is no number" "mbad.csv: line 3, column 'allocated_bytes': 'abc' is not a number >= 0" \
  $OOCSIM plot memory --in "$TMP/mbad.csv" -o "$TMP/mbad.png"
[ ! -e "$TMP/mbad.dat" ] && ok "no data file for a bad input" || not_ok "mbad.dat left behind"
printf 'lane,start_s,end_s,phase,layer,cause\ncompute,0,1,fwd,x,\nbogus,1,2,fwd,y,\n' >"$TMP/tlbad.csv"
expect_fail "gantt of an unknown lane" "tlbad.csv: line 3, column 'lane': 'bogus' is not compute, h2d, d2h or host" \
  $OOCSIM plot gantt --in "$TMP/tlbad.csv" -o "$TMP/tlbad.png"
printf 'lane,start_s,end_s,phase,layer,cause\ncompute,0,1,fwd,x,\nh2d,2,1,none,y,swapin\n' >"$TMP/tlbad.csv"
expect_fail "gantt of a span that ends before it starts" "tlbad.csv: line 3: end_s 1 is before start_s 2" \
  $OOCSIM plot gantt --in "$TMP/tlbad.csv" -o "$TMP/tlbad.png"
# An empty -o is named, for every command that writes one.
expect_fail "report -o ''" "oocsim: -o: empty output name" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -o ""
expect_fail "sweep -o ''" "oocsim: -o: empty output name" $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p vdnn -o ""
expect_fail "plot -o ''" "oocsim: -o: empty output name" $OOCSIM plot memory --in "$TMP/mbad.csv" -o ""
# A time gnuplot would get as "inf" once in milliseconds.
printf 'lane,start_s,end_s,phase,layer,cause\ncompute,0,1,fwd,x,\ncompute,1,1e308,fwd,y,\n' >"$TMP/tlbad.csv"
expect_fail "gantt of a time past 1e9 s" "tlbad.csv: line 3, column 'end_s': '1e308' is not a time from 0 to 1e9 s" \
  $OOCSIM plot gantt --in "$TMP/tlbad.csv" -o "$TMP/tlbad.png"
printf 'time_s,allocated_bytes,reserved_bytes\n0,1,2\n2e9,1,2\n' >"$TMP/mbad.csv"
expect_fail "plot memory of a time past 1e9 s" "mbad.csv: line 3, column 'time_s': '2e9' is not a time from 0 to 1e9 s" \
  $OOCSIM plot memory --in "$TMP/mbad.csv" -o "$TMP/mbad.png"
expect_fail "report unknown planner" "-p: unknown planner 'bogus'" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -p bogus -o "$TMP/r4"
[ ! -e "$TMP/r4" ] && ok "bad input leaves no report folder" || not_ok "bad input left $TMP/r4"
expect_fail "report budget below the working set" "--budget: budget 1 B is below the working set" \
  $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -p vdnn --budget 1B -o "$TMP/r5"
expect_fail "report missing -b" "missing -b" $OOCSIM report -m alexnet --hw v100-pcie3 -o "$TMP/r3"
expect_fail "report --set without =" "oocsim: --set 'depth': expected KEY=VALUE" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 --set depth -o "$TMP/r3"
expect_fail "report unknown planner" "nosuch" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -p nosuch -o "$TMP/r3"
printf '{"name":"v","input":[4],"layers":[{"op":"flatten"}]}\n' >"$TMP/v.json"
expect_fail "report on a model that computes nothing" \
  "oocsim: $TMP/v.json: model 'v' computes nothing (0 FLOP per iteration); a report has nothing to compare" \
  $OOCSIM report -m "$TMP/v.json" -b 1 --hw a100-pcie4 -o "$TMP/r6"
[ ! -e "$TMP/r6" ] && ok "no report folder for a model that computes nothing" ||
  not_ok "left $TMP/r6"
touch "$TMP/afile"
expect_fail "report unwritable directory" "afile/r" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -o "$TMP/afile/r"
expect_ok "plot --help" $OOCSIM plot --help
expect_ok "report --help" $OOCSIM report --help
# A tiny model reads in its own units, not "0.0 M parameters ... 0.00 GiB".
$OOCSIM report -m "$top_srcdir/tests/data/cli_mlp.json" -b 2 --hw v100-pcie3 -p incore --no-maxbatch -j 2 -o "$TMP/tiny" >/dev/null 2>&1
grep -q '; 172 parameters; weights + gradients + optimizer state 2.02 KiB; activations kept for backward 328 B$' "$TMP/tiny/report.md" &&
  ! grep -q '0\.00 GiB\|0\.0 M' "$TMP/tiny/report.md" && ok "tiny model in adaptive units" ||
  not_ok "tiny model units: $(grep 'Model:' "$TMP/tiny/report.md")"
# joint as the winner: the report says where its search started, against
# the runner-up, and what the search changed.
R2="$TMP/rep2"
$OOCSIM report -m resnet50 -b 384 --hw v100-pcie3 -p window,checkpoint-dp,joint --no-maxbatch -o "$R2" >/dev/null 2>&1
grep -q "^Winner: joint," "$R2/report.md" && ok "joint wins resnet50 b384 on v100-pcie3" || not_ok "joint wins ($(grep Winner "$R2/report.md"))"
grep -q "^Against the runner-up: checkpoint-dp takes [0-9.]* ms. joint searched keep / swap / recompute, swap-in timing and convolution algorithms with the simulator, starting from the best of the other planners' plans, and is [0-9.]* ms ([0-9.]*%) faster: from the pooch plan" "$R2/report.md" \
  && ok "joint against the runner-up" || not_ok "joint against the runner-up ($(grep runner-up "$R2/report.md"))"
# The winner's allocator, not settled after two iterations (window's
# plan of bert_large b18 on v100-pcie3 runs out of memory in its third),
# is said to be so, with the way out; with --steady the report's sweeps
# plan for the steady state: window's steady plan (2469.4 ms, 2474.2 ms
# by default), settled, and no such paragraph.
$OOCSIM report -m bert_large -b 18 --hw v100-pcie3 -p window --no-maxbatch -j 2 -o "$TMP/rbw" >/dev/null 2>&1
grep -q "^Winner: window, 2474.2 ms per iteration" "$TMP/rbw/report.md" &&
  grep -q "^Its allocator had not settled: the last of the 2 iterations simulated still took or gave back device memory, so a longer run may differ from this one or run out of memory (docs/fidelity.md); \`--steady\` plans and simulates until it settles.$" "$TMP/rbw/report.md" &&
  ok "the winner's allocator: not settled" || not_ok "not settled: $(grep -n 'Winner\|settled' "$TMP/rbw/report.md")"
$OOCSIM report -m bert_large -b 18 --hw v100-pcie3 -p window --no-maxbatch --steady -j 2 -o "$TMP/rbs" >/dev/null 2>&1
grep -q "^Winner: window, 2469.4 ms per iteration" "$TMP/rbs/report.md" && ! grep -q "had not settled" "$TMP/rbs/report.md" &&
  ok "report --steady: the steady plan, settled" || not_ok "report --steady: $(grep -n 'Winner\|settled' "$TMP/rbs/report.md")"
# A winner faster than in-core (superneurons takes faster convolution
# algorithms than in-core's defaults) is explained as such, here and in
# the what-if verdict, not as "within 1% of in-core speed".
expect_ok "report where the winner beats in-core" $OOCSIM report -m alexnet -b 128 --hw v100-pcie3 -p incore,superneurons --no-maxbatch -j 2 -o "$TMP/rfast"
grep -q "^It is faster than in-core: the in-core plan runs every convolution with its default kernel algorithm, and superneurons runs some with a faster one" "$TMP/rfast/report.md" &&
  ok "the winner's speed over in-core explained" || not_ok "no explanation: $(grep -n 'in-core' "$TMP/rfast/report.md" | head -3)"
grep -q "even on the slowest, v100-pcie3 (12.2 GB/s), the best plan runs faster than in-core (0.84x its time" "$TMP/rfast/report.md" &&
  ok "what-if verdict: faster than in-core" || not_ok "verdict: $(grep 'fast enough' "$TMP/rfast/report.md")"
# A "gnuplot" that exits 0 and draws nothing: exit 1 naming the image,
# and no empty image left (an older one stays as it was).
expect_fail "plot: gnuplot wrote no image" \
  "oocsim: gnuplot ('/bin/true') exited 0 but wrote no image for \
$TMP/none.png" \
  env OOCSIM_GNUPLOT=/bin/true $OOCSIM plot memory --in "$R/data/memory.csv" \
  -o "$TMP/none.png"
ls "$TMP" | grep -q '^none\.png' && not_ok "an image file was left" ||
  ok "no image file left, not even a temporary one"
echo old >"$TMP/old.png"
OOCSIM_GNUPLOT=/bin/true $OOCSIM plot memory --in "$R/data/memory.csv" \
  -o "$TMP/old.png" 2>/dev/null
[ "$(cat "$TMP/old.png")" = old ] && ok "an older image is kept" ||
  not_ok "the older image was replaced"

# The budget line: memory's only, from --budget or --hw, not both.
expect_fail "plot memory --budget --hw" \
  "oocsim: plot memory: --budget 1GiB and --hw v100-pcie3 both set the \
budget line; give one of them" \
  $OOCSIM plot memory --in "$R/data/memory.csv" --budget 1GiB --hw v100-pcie3 \
  -o "$TMP/bh.png"
expect_fail "plot throughput --hw" \
  "oocsim: plot throughput: --hw v100-pcie3: only plot memory draws a \
budget line" \
  $OOCSIM plot throughput --in "$TMP/thr/results.csv" --hw v100-pcie3 \
  -o "$TMP/bh.png"
expect_fail "plot gantt --budget" \
  "oocsim: plot gantt: --budget 1GiB: only plot memory draws a budget line" \
  $OOCSIM plot gantt --in "$R/data/memory.csv" --budget 1GiB -o "$TMP/bh.png"

# --batches is named as itself, not as -b.
expect_fail "report --batches 0" \
  "oocsim: --batches '0': batch sizes start at 1" \
  $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 --batches 0 -o "$TMP/rb"
expect_fail "report --batches 8:x" \
  "oocsim: --batches range end: 'x' is not an integer" \
  $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 --batches 8:x -o "$TMP/rb"

# --no-timing: two reports of one scenario are the same files, byte for
# byte (wall-clock columns 0, no lock file left), and the last line has no
# time.
for d in nt1 nt2; do
  $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -p vdnn,window --no-maxbatch \
    --no-timing -j 2 -o "$TMP/$d" >"$TMP/$d.out" 2>&1
done
diff -r "$TMP/nt1" "$TMP/nt2" >/dev/null &&
  grep -q '(winner: [a-z-]*; [0-9]* plots)$' "$TMP/nt1.out" &&
  ok "report --no-timing: identical folders" ||
  not_ok "report --no-timing: $(diff -r "$TMP/nt1" "$TMP/nt2" | head -n 3)"
# An earlier report's maxbatch data goes when the new one has none.
cp -r "$R" "$TMP/Rm"
expect_ok "report --no-maxbatch over a report with one" $OOCSIM report -m alexnet \
  -b 128 --hw v100-pcie3 -p vdnn --no-maxbatch -o "$TMP/Rm"
[ ! -e "$TMP/Rm/data/maxbatch" ] && [ ! -e "$TMP/Rm/data/maxbatch.dat" ] &&
  [ ! -e "$TMP/Rm/maxbatch.png" ] &&
  ok "the old maxbatch data is removed" || not_ok "old maxbatch data left: $(ls "$TMP/Rm/data")"

# A --dtype axis is a coordinate: fp32 and fp16 are two lines (and two
# panels, each with its in-core line), not one that zigzags between them.
expect_ok "sweep with a dtype axis" $OOCSIM sweep -m alexnet -b 32,64 --hw v100-pcie3 \
  -p vdnn --dtype fp32,fp16 -o "$TMP/dts"
if $OOCSIM plot throughput --in "$TMP/dts/results.csv" -o "$TMP/dts.png" 2>"$TMP/perr"; then
  heads=$(grep '^#' "$TMP/dts.dat" | tr '\n' '|')
  [ "$heads" = "# fp32 feasible|# fp32 oom|# fp16 feasible|# fp16 oom|# in-core fp32|# in-core fp16|" ] &&
    ok "plot throughput: one line and one panel per dtype" || not_ok "dtype blocks: $heads"
elif grep -q "gnuplot is missing" "$TMP/perr"; then
  echo "# gnuplot not found: dtype plot skipped"
else
  not_ok "plot throughput with a dtype axis: $(cat "$TMP/perr")"
fi

finish
