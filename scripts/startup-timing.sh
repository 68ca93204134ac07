#!/usr/bin/env bash
# Whole-process CPU time (perf stat task-clock, mean of N runs) of `orrery` start-up and of the
# bundled seeds, beside /bin/true and a dynamically linked C++ hello world timed in the same
# session (README, "Performance"). Usage: scripts/startup-timing.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-30}
orrery="$build/orrery"
[ -x "$orrery" ] || { echo "startup-timing: no $orrery; run make build first" >&2; exit 1; }
command -v perf >/dev/null || { echo "startup-timing: needs perf (Debian linux-perf)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#include <iostream>\nint main() { std::cout << "hello\\n"; }\n' > "$work/hello.cpp"
${CXX:-c++} -O2 "$work/hello.cpp" -o "$work/hello"

task_clock() {  # mean task-clock in ms of the command "$@"
  perf stat -r "$runs" -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { printf "%.2f", $1 }'
}

echo "host $(uname -n), $(date -u +%F), $runs runs each, CPU ms (task-clock)"
echo "| command | CPU ms |"
echo "|---|---:|"
echo "| /bin/true | $(task_clock /bin/true) |"
echo "| C++ hello world (dynamic libstdc++) | $(task_clock "$work/hello") |"
echo "| orrery --version | $(task_clock "$orrery" --version) |"
for seed in examples/simai/*.txt; do
  echo "| orrery simulate $seed --cluster dgx-a100 (event) | $(task_clock "$orrery" simulate "$seed" --cluster dgx-a100) |"
done
