#!/usr/bin/env bash
# Grades lesson N of this checkout with `tools/mgpu check N` and writes the points in the form
# GitHub Classroom's grading reporter reads (base64 JSON: max_score and one test per checker case
# with its score) to the step's output `result`. Used by tools/classroom/classroom.yml.
# Outside GitHub Actions (no GITHUB_OUTPUT) it prints the decoded JSON instead.
set -uo pipefail
lesson=${1:?usage: tools/classroom/report-points.sh LESSON}
kit=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
results=$(mktemp)
trap 'rm -f "$results"' EXIT
"$kit/tools/mgpu" check "$lesson" --seed "${MGPU_SEED:-1}" --json "$results"
status=$?
encoded=$(python3 - "$results" "$status" <<'PY'
import base64, json, sys
path, status = sys.argv[1], sys.argv[2]
try:
    with open(path) as file:
        report = json.load(file)
except (OSError, ValueError):
    report = {"score": 0, "max_score": 100, "tests": [],
              "output": "tools/mgpu check exited with %s before writing its results" % status}
tests = []
for case in report.get("tests", []):
    score = float(case.get("score", 0))
    full = score >= float(case.get("max_score", 0))
    tests.append({"name": case.get("name", ""), "status": "pass" if full else "fail", "score": score,
                  "message": case.get("output", ""), "line_no": 0, "test_code": "", "filename": "", "duration": 0})
if not tests:
    tests.append({"name": "lesson build", "status": "fail", "score": 0, "message": report.get("output", ""),
                  "line_no": 0, "test_code": "", "filename": "", "duration": 0})
score, max_score = float(report.get("score", 0)), float(report.get("max_score", 100))
result = {"version": 1, "status": "pass" if score >= max_score else "fail", "max_score": max_score, "tests": tests}
print(base64.b64encode(json.dumps(result).encode()).decode())
PY
)
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "result=$encoded" >>"$GITHUB_OUTPUT"
else
  printf '%s' "$encoded" | base64 -d
  echo
fi
# The points are the grade: a lesson with failed checks does not fail the workflow.
[ "$status" -le 1 ] && exit 0
exit "$status"
