#!/bin/sh
# FP8 GEMMs as Transformer Engine runs each pass, on one NVIDIA GPU with CUDA's compiler: builds
# scripts/device/wgrad_accumulate_lt.cu and times every GEMM of tests/data/h100_gemm_under_load.csv
# with a BF16 output: e4m3 x e4m3 with the split accumulator and with fast accumulation (TE's
# forward), e4m3 x e5m2 (TE's input gradient), and BF16.
# Usage: scripts/device/measure-fp8-operands.sh OUT_DIR  (about a minute on an H100)
set -eu
out=${1:-.}
here=$(dirname "$0")
mkdir -p "$out"
nvcc -O2 -std=c++17 -arch=sm_90a "$here/wgrad_accumulate_lt.cu" -lcublasLt -o "$out/gemm_lt"
grep -v '^#' "$here/../../tests/data/h100_gemm_under_load.csv" | tail -n +2 |
  awk -F, '{ gsub(/ /, "_", $1); print $1, $2, $3, $4 }' |
  "$out/gemm_lt" operands > "$out/fp8_operands.csv"
