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

# plan_drop K PLAN > OUT: PLAN.json without its program[K] (not the
# last), every wait renumbered: a hand edit that deletes one instruction.
plan_drop() {
  awk -v K="$1" '
    /^"program": \[/ { inprog = 1; n = 0; print; next }
    inprog && /^\]/ { inprog = 0 }
    inprog {
      if (n++ == K) next
      if (match($0, /\],\[[0-9,]*\]/)) {
        w = substr($0, RSTART + 3, RLENGTH - 4); out = ""
        k = split(w, ws, ",")
        for (j = 1; j <= k; j++) {
          if (ws[j] == "" || ws[j] + 0 == K) continue
          out = out (out == "" ? "" : ",") (ws[j] + 0 > K ? ws[j] - 1 : ws[j])
        }
        $0 = substr($0, 1, RSTART + 2) out substr($0, RSTART + RLENGTH - 1)
      }
    }
    { print }' "$2"
}

# plan_index LINE PLAN: the program index of line LINE of PLAN.json.
plan_index() {
  echo $(( $1 - 1 - $(grep -n '^"program": \[' "$2" | cut -d: -f1) ))
}

# mlp_named NAME > OUT: tests/data/cli_mlp.json with its model named NAME
# as given (markup, UTF-8, '/', '&' and '\' need no escaping; no '"').
mlp_named() {
  sed "0,/\"name\": *\"[^\"]*\"/s//\"name\": \"$(printf '%s' "$1" | sed 's/[\/&]/\\&/g')\"/" \
    "$top_srcdir/tests/data/cli_mlp.json"
}

finish() {
  echo "$passes passed, $fails failed"
  [ $fails -eq 0 ]
}
