#!/usr/bin/env bash
# Kit test: `tools/mgpu dist student` leaves out everything a grade could be copied from and keeps
# what a student needs; `dist grader` keeps everything. Building the student edition's own suite
# here would cost a whole kit build, so only its configuration is not checked here (see README).
set -uo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { printf 'FAIL: %s\n' "$*"; failures=$((failures + 1)); }

"$root/tools/mgpu" dist student "$work/student" || { echo "FAIL: dist student did not run"; exit 1; }
"$root/tools/mgpu" dist grader "$work/grader" || { echo "FAIL: dist grader did not run"; exit 1; }

for absent in solutions checker/tests/adversarial; do
  [ -e "$work/student/$absent" ] && fail "the student edition holds $absent"
done
for lesson in "$root"/checker/lessons/[0-9]*/; do
  name=$(basename "$lesson")
  for part in master mutants; do
    [ -e "$work/student/checker/lessons/$name/$part" ] && fail "the student edition holds checker/lessons/$name/$part"
  done
done
# No file of the student edition may contain a reference solution's text.
for solution in "$root"/solutions/*/*; do
  [ -f "$solution" ] || continue
  # Headers and main files are the same in both folders on purpose: only the answers count.
  cmp -s "$solution" "$root/exercises/$(basename "$(dirname "$solution")")/$(basename "$solution")" && continue
  hash=$(sha256sum <"$solution" | cut -d' ' -f1)
  while IFS= read -r -d '' file; do
    [ "$(sha256sum <"$file" | cut -d' ' -f1)" = "$hash" ] && fail "the student edition holds a copy of $solution at $file"
  done < <(find "$work/student" -type f -size "$(stat -c %s "$solution")c" -print0)
done
for present in README.md meson.build tools/mgpu tools/sim lessons exercises checker/judge checker/lessons \
               exercises/03-peer-to-peer/peer_access.cu exercises/03-peer-to-peer/peer_access.h \
               lessons/03-peer-to-peer/skeleton/peer_access.cu lessons/03-peer-to-peer/hints.json \
               lessons/03-peer-to-peer/quiz.json po/ja.po po/meson.build tools/i18n/translate.h; do
  [ -e "$work/student/$present" ] || fail "the student edition lacks $present"
done
[ "$(cat "$work/student/EDITION" 2>/dev/null)" = student ] || fail "EDITION does not say student"
for present in solutions checker/tests/adversarial checker/lessons/03-peer-to-peer/master; do
  [ -e "$work/grader/$present" ] || fail "the grader edition lacks $present"
done
# An edition is written into a new folder only.
"$root/tools/mgpu" dist student "$work/student" 2>/dev/null && fail "dist wrote into a folder that was not empty"

[ "$failures" -eq 0 ] && echo "the student edition holds no solution; the grader edition is whole"
exit $(( failures > 0 ))
