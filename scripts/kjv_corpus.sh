#!/usr/bin/env bash
# Writes the King James Bible (Debian package bible-kjv) as plain text, one verse per line, verse references
# stripped: scripts/kjv_corpus.sh OUT.txt. Does nothing if OUT.txt already exists.
set -euo pipefail
out=${1:?usage: kjv_corpus.sh OUT.txt}
[ -s "$out" ] && exit 0
mkdir -p "$(dirname "$out")"
bible -f 'Gen1:1-Rev22:21' | sed -E 's/^[1-3]?[A-Za-z]+[0-9]+:[0-9]+ //' > "$out.tmp"
mv "$out.tmp" "$out"
