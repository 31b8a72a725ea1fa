#!/bin/sh
# tests/check_gitignore.sh — what a build, `make check`, `make plots`,
# `make bench` and the README's examples write is ignored by git, so
# `git status` after them shows only the developer's own changes. Skipped
# (77) outside a git checkout (a tarball, distcheck).
. "$top_srcdir/tests/lib.sh"
cd "$top_srcdir" || exit 1
# The source tree must be the top of a git checkout: distcheck's copy
# sits inside one, under an ignored oocsim-VERSION/.
if ! command -v git >/dev/null 2>&1 ||
   [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
  echo "# not the top of a git checkout: skipped"; exit 77
fi
for p in oocsim config.h config.status Makefile Makefile.in \
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
