#!/usr/bin/env bash
# Grades one lesson's reference solution, skeleton and every generated mutant with the real-GPU
# backend on this machine, and prints one table row per submission (for bench/results/).
# MGPU_GRADE_BACKEND=sim MGPU_GRADE_TOPOLOGY=h200 grades the same on the simulated one-GPU machine,
# for the comparison.
# Usage: bench/h200/grade-lesson.sh LESSON_NUMBER OUT_DIR [SEED]
set -u
lesson=$1 out=$2 seed=${3:-4242}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${MGPU_BUILD_DIR:-$root/build}
mkdir -p "$out"
folder=$(basename "$(ls -d "$root"/solutions/0"$lesson"-*)")
mutants="$build/checker/lessons/$folder/mutants"
grade() {   # name, folder holding the lesson folder
    local name=$1 submission=$2
    "$root/tools/mgpu" grade "$submission" --lesson "$lesson" --backend "${MGPU_GRADE_BACKEND:-cuda}" --seed "$seed" \
        ${MGPU_GRADE_TOPOLOGY:+--topology "$MGPU_GRADE_TOPOLOGY"} \
        --json "$out/$name.json" > "$out/$name.txt" 2>&1
    local code=$?
    python3 - "$out/$name.json" "$name" "$code" <<'PY'
import json, sys
path, name, code = sys.argv[1:]
try:
    tests = json.load(open(path)).get("tests", [])
except Exception:
    print(f"| {name} | exit {code} | no report |"); sys.exit()
lost = {}
for t in tests:
    crit = t.get("name", "").split(":")[0]
    lost.setdefault(crit, [0.0, 0.0])
    lost[crit][0] += t.get("score", 0); lost[crit][1] += t.get("max_score", 0)
cells = ", ".join(f"{c} {s:g}/{m:g}" for c, (s, m) in sorted(lost.items()))
print(f"| {name} | exit {code} | {cells} |")
PY
}
work=$(mktemp -d)
mkdir -p "$work/solution" "$work/skeleton"
cp -r "$root/solutions/$folder" "$work/solution/"
cp -r "$root/exercises/$folder" "$work/skeleton/"
grade solution "$work/solution"
grade skeleton "$work/skeleton"
student_file=$(ls "$root/solutions/$folder" | grep -v main.cu | grep '\.cu$')
for mutant in "$mutants"/*.cu; do
    name=$(basename "$mutant" .cu)
    mkdir -p "$work/$name/$folder"
    cp "$mutant" "$work/$name/$folder/$student_file"
    grade "$name" "$work/$name"
done
