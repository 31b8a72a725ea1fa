#!/bin/sh
# tests/check_gitignore.sh — what a build, `make check`, `make plots`,
# `make bench` and the README's examples write is ignored by git, so
# `git status` after them shows only the developer's own changes. Skipped
# (77) outside a git checkout (a tarball, distcheck).
. "$top_srcdir/tests/lib.sh"
cd "$top_srcdir" || exit 1
if ! command -v git >/dev/null 2>&1 || ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "# not a git checkout: skipped"; exit 77
fi
for p in oocsim oocsim-calib-link config.h config.status Makefile Makefile.in \
         configure base/paths.h base/paths.h-t libooc_base.a cli/args.o \
         cli/.deps/args.Po cli/.dirstamp tests/check_cli tests/cli_sim.sh.log \
         tests/cli_sim.sh.trs test-suite.log plots/out/throughput.png \
         bench/bench bench/out/bench.json out/report/report.md \
         sweep/results.csv oocsim-0.1.0.tar.gz oocsim-0.1.0/README.md; do
  git check-ignore -q --no-index "$p" && ok "$p ignored" || not_ok "$p not ignored"
done
for p in tests/check_cli.c tests/cli_sim.sh base/util.c docs/oocsim.1; do
  git check-ignore -q --no-index "$p" && not_ok "$p ignored" || ok "$p tracked"
done
finish
