#!/bin/sh
# tests/cli_docs.sh — every document that the man page, README, --help and
# the hardware profiles' _source strings cite is shipped: each cited
# docs/*.md, models/README.md or hwprofiles/README.md exists in the source
# tree (and, being in dist_doc_DATA or EXTRA_DIST, in the tarball; the
# install test checks the installed copies). Names of documents the project
# does not ship (ARCHITECTURE.md, HARDWARE.md) and make variables left
# unexpanded ($(pkgdatadir)) must not appear.
. "$top_srcdir/tests/lib.sh"

: >"$TMP/help"
for c in list info plan simulate compare maxbatch sweep plot report; do
  "$OOCSIM" $c --help >>"$TMP/help" 2>&1
done
"$OOCSIM" --help >>"$TMP/help" 2>&1
for f in "$top_srcdir/docs/oocsim.1" "$top_srcdir/README.md" \
         "$top_srcdir"/hwprofiles/*.json "$top_srcdir/hwprofiles/README.md" \
         "$TMP/help"; do
  name=${f#"$top_srcdir/"}
  [ "$f" = "$TMP/help" ] && name="--help"
  for bad in ARCHITECTURE.md HARDWARE.md '$(pkgdatadir)'; do
    if grep -qF "$bad" "$f"; then not_ok "$name cites $bad"; else ok "$name: no $bad"; fi
  done
  # Every cited document, with the man page's escaped dashes undone.
  for d in $(sed 's/\\-/-/g' "$f" | grep -oE '(docs|models|hwprofiles)/[A-Za-z0-9_.-]+\.md' | sort -u); do
    if [ -f "$top_srcdir/$d" ]; then ok "$name: $d ships"; else not_ok "$name cites $d, not shipped"; fi
  done
done
# The man page: every line that starts with a control character is a
# request or macro it means (a sentence that starts with "..." was taken
# for the undefined macro '..' and its line dropped from the page), and
# groff, where installed, renders it without a warning.
man="$top_srcdir/docs/oocsim.1"
bad=$(grep -nE "^[.']" "$man" | grep -vE '^[0-9]+:\.(TH|SH|SS|TP|PP|IP|B|I|BI|BR|IB|IR|RB|RI|br|nf|fi|RS|RE|\\")( |$)' | head -1)
[ -z "$bad" ] && ok "oocsim.1: every control line is a macro" || not_ok "oocsim.1: line taken for a macro: $bad"
if command -v groff >/dev/null 2>&1; then
  groff -man -ww -z "$man" >"$TMP/groff" 2>&1
  [ ! -s "$TMP/groff" ] && ok "oocsim.1: groff renders it without a warning" ||
    not_ok "oocsim.1: groff: $(head -3 "$TMP/groff")"
fi
# Every model and profile of the source tree is installed and shipped:
# listed in Makefile.am's dist_models_DATA / dist_hwprofiles_DATA (a file
# left out is missing from the tarball and from `make install`).
for f in "$top_srcdir"/models/*.json "$top_srcdir"/hwprofiles/*.json; do
  rel=${f#"$top_srcdir/"}
  if grep -qF "$rel" "$top_srcdir/Makefile.am"; then ok "$rel is listed in Makefile.am"
  else not_ok "$rel is not in Makefile.am's dist_*_DATA"; fi
done
finish
