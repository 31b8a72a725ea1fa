# tests/lib.sh — helpers for the shell tests (sourced).
# $OOCSIM, $top_srcdir and $top_builddir come from AM_TESTS_ENVIRONMENT.
: "${OOCSIM:=$top_builddir/oocsim}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/oocsim-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
passes=0

ok() { passes=$((passes + 1)); echo "ok - $1"; }
not_ok() { fails=$((fails + 1)); echo "not ok - $1"; }

# expect_fail NAME EXPECTED_STDERR_SUBSTRING CMD...: exit 1, one line on stderr
# containing the substring, nothing that looks like a crash.
expect_fail() {
  name=$1; want=$2; shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
  lines=$(wc -l <"$TMP/err")
  if [ $rc -eq 1 ] && grep -qF -- "$want" "$TMP/err" && [ "$lines" -eq 1 ]; then
    ok "$name"
  else
    not_ok "$name (rc=$rc, stderr: $(cat "$TMP/err"))"
  fi
}

# expect_ok NAME CMD...: exit 0.
expect_ok() {
  name=$1; shift
  if "$@" >"$TMP/out" 2>"$TMP/err"; then ok "$name"; else
    not_ok "$name (rc=$?, stderr: $(head -c 400 "$TMP/err"))"; fi
}

finish() {
  echo "$passes passed, $fails failed"
  [ $fails -eq 0 ]
}
