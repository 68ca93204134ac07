#!/usr/bin/env bash
# Lists the #include lines include-what-you-use (Debian package iwyu) finds unused in src/*/*.cpp,
# for the standard library's and Orrery's own headers. Its suggestions are leads, not verdicts: with
# GCC 12's library it misses some uses (it once flagged <chrono> in a file using std::chrono), so
# remove a line only after checking that nothing of the header is named in the file, then build.
# Needs a configured build (build/compile_commands.json). Usage: scripts/include-sweep.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
command -v iwyu_tool > /dev/null || { echo "include-sweep: iwyu_tool not found (apt-get install iwyu)" >&2; exit 1; }
iwyu_tool -p "$build" -j "$(nproc)" src/*/*.cpp -- -Xiwyu --no_fwd_decls 2> /dev/null |
  awk '/ should remove these lines:$/ { file = $1; next }
       /^- #include/ && file ~ /\.cpp$/ && $3 !~ /^<(fmt|CLI|nlohmann|yaml-cpp|google)\// { print file ": " $2 " " $3 }'
