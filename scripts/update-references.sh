#!/usr/bin/env bash
# Regenerates the pinned reference outputs (tests/reference/NAME.json) from
# tests/reference/manifest.txt with the built binary. Run on purpose only (`make
# update-references`), and read the diff: every changed number is a changed answer.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-build/orrery}
version=$("$binary" --version)
while IFS=$'\t' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  # shellcheck disable=SC2086  # the manifest's arguments are split as a shell would
  output=$("$binary" $args)
  {
    printf '{\n  "provenance": {"orrery": "%s", "command": "orrery %s"},\n  "result": ' \
      "$version" "$args"
    printf '%s\n}\n' "$output"
  } > "tests/reference/$name.json"
  echo "updated tests/reference/$name.json"
done < tests/reference/manifest.txt
