#!/bin/sh
# Weight-gradient GEMMs accumulating into fp32, on one NVIDIA GPU with CUDA's compiler:
# builds scripts/device/wgrad_accumulate_lt.cu and times the weight-gradient shapes of
# tests/data/h100_gemm_under_load.csv in each output variant (the .cu file says which).
# Usage: scripts/device/measure-wgrad-accumulate.sh OUT_DIR  (about 30 s on an H100)
set -eu
out=${1:-.}
here=$(dirname "$0")
mkdir -p "$out"
nvcc -O2 -std=c++17 -arch=sm_90a "$here/wgrad_accumulate_lt.cu" -lcublasLt -o "$out/wgrad_lt"
grep wgrad "$here/../../tests/data/h100_gemm_under_load.csv" |
  awk -F, '{ gsub(/ /, "_", $1); print $1, $2, $3, $4 }' |
  "$out/wgrad_lt" > "$out/wgrad_accumulate.csv"
