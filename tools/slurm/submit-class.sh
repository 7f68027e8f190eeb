#!/usr/bin/env bash
# Grades a class on a Slurm cluster's GPU nodes: an array job of TASKS tasks (each a chunk of the
# students, tools/slurm/grade-class.sbatch), then a merge job that writes OUT_DIR/grades.csv once
# every task has ended. The merge is `tools/mgpu grade-class` over the whole class: the students
# the tasks graded come from the cache, and any a failed task left out are graded there.
#
#   tools/slurm/submit-class.sh CLASS_DIR LESSONS OUT_DIR [TASKS] [-- SBATCH_OPTIONS...]
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: tools/slurm/submit-class.sh CLASS_DIR LESSONS OUT_DIR [TASKS] [-- SBATCH_OPTIONS...]" >&2
  exit 2
fi
kit=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
class=$(realpath "$1") lessons=$2 out=$(realpath -m "$3")
shift 3
tasks=8
if [ $# -gt 0 ] && [ "$1" != -- ]; then tasks=$1; shift; fi
[ "${1:-}" = -- ] && shift
students=$(find "$class" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | wc -l)
[ "$students" -lt "$tasks" ] && tasks=$students
if [ "$tasks" -lt 1 ]; then echo "submit-class.sh: $class holds no student folder" >&2; exit 2; fi
mkdir -p "$out"
array=$(sbatch --parsable --array="1-$tasks" --export="ALL,MGPU_KIT=$kit" "$@" \
  "$kit/tools/slurm/grade-class.sbatch" "$class" "$lessons" "$out" cuda)
merge=$(sbatch --parsable --dependency="afterany:${array%%;*}" --gpus=1 --job-name=mgpu-grade-merge \
  --output="$out/merge-%j.out" "$@" \
  --wrap="MGPU_PREBUILT=1 '$kit/tools/mgpu' grade-class '$class' --lesson '$lessons' --out '$out' --backend cuda --jobs 1 --seed ${MGPU_SEED:-1}")
echo "Submitted $tasks grading tasks (job $array) and the merge (job $merge): the gradebook will be $out/grades.csv"
