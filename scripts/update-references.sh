#!/usr/bin/env bash
# Regenerates the pinned reference outputs (tests/reference/NAME.json) from
# tests/reference/manifest.txt, and the command output quoted in the docs, with the built binary.
# Run on purpose only (`make update-references`), and read the diff: every changed number is a
# changed answer.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-build/orrery}
# The release, not the build: a reference changes with its answer, not with every commit.
version=$("$binary" --version | cut -d" " -f1-2)
while IFS=$'\t' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  # shellcheck disable=SC2086  # the manifest's arguments are split as a shell would
  # The run's `provenance` object (first in the JSON, two-space indented) is left out: it names
  # the version and the inputs' checksums, not the answer (ReferenceOutputs drops it too).
  output=$("$binary" $args | awk '/^  "provenance": \{$/ { skip = 1 } !skip { print } skip && /^  \},$/ { skip = 0 }')
  {
    printf '{\n  "provenance": {"orrery": "%s", "command": "orrery %s"},\n  "result": ' \
      "$version" "$args"
    printf '%s\n}\n' "$output"
  } > "tests/reference/$name.json"
  echo "updated tests/reference/$name.json"
done < tests/reference/manifest.txt

# Command output quoted in README.md and docs/*.md (blocks marked `<!-- orrery-output -->`, see
# tests/e2e/quoted_output_test.cpp): rewritten from the same build's binary by the test that
# checks them (QuotedOutputs, in CTest).
quoted_test="$(dirname "$binary")/tests/quoted_output_test"
if [[ -x "$quoted_test" ]]; then
  ORRERY_UPDATE_QUOTED_OUTPUTS=1 "$quoted_test" \
    --gtest_filter=QuotedOutputs.EveryMarkedBlockMatchesTheBinary --gtest_brief=1
else
  echo "no $quoted_test (build the tests): quoted outputs in the docs left as they are" >&2
fi

# The README's picture of the report (docs/report.png; not compared byte for byte): the 1,024-GPU
# seed's report in headless Chromium, when one is installed (make deps).
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -n "$browser" ]]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  "$binary" simulate examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt --cluster dgx-a100 \
    --report "$scratch/report.html" > /dev/null
  "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$scratch/profile" \
    --window-size=1300,1000 --screenshot="$scratch/report.png" "file://$scratch/report.html" \
    2> /dev/null
  cp "$scratch/report.png" docs/report.png
  echo "updated docs/report.png"
else
  echo "no chromium: docs/report.png left as it is" >&2
fi
