#!/usr/bin/env bash
# Installs the Debian packages Orrery builds with, and any named as arguments, when any is
# missing. Idempotent, and silent when everything is already installed. Uses sudo when not run as
# root.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libfmt-dev libgraphviz-dev
  libprotobuf-dev protobuf-compiler coinor-libcbc-dev libsqlite3-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libbenchmark-dev
  chromium  # renders the HTML report in the end-to-end browser test (tests/e2e)
)
# Extra packages a target needs beyond these (make fuzz: clang and its libFuzzer runtime).
packages+=("$@")

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: not a Debian system; install these yourself: ${packages[*]}" >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
