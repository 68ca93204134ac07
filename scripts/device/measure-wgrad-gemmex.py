#!/usr/bin/env python3
"""Megatron-LM's fused weight-gradient GEMM into fp32, as Megatron calls it, on one NVIDIA GPU.

Megatron-LM's gradient-accumulation fusion computes a linear layer's weight gradient straight into
the fp32 main_grad buffer with one cublasGemmEx: BF16 operands, input (N) times grad_output
(transposed), an fp32 C, beta 1. This times that call, cuBLAS reached through ctypes on PyTorch's
own handle and stream, for the weight-gradient shapes of tests/data/h100_gemm_under_load.csv
(m = out, n = in, k = tokens), with the card under load:
  bf16_bf16_us   BF16 C, beta 0 (a 16-bit output)
  bf16_fp32_us   fp32 C, beta 0 (fp32 written)
  bf16_accum_us  fp32 C, beta 1 (fp32 read and written: Megatron's fusion)
  fp8_bf16_us    torch._scaled_mm, e4m3 operands, BF16 out (no fast accumulation)
  fp8_fp32_us    the same with fp32 out
scripts/device/measure-wgrad-accumulate.sh measures the same shapes through cuBLASLt (TN, as FP8
requires, and the accumulation in FP8 too).
Usage: measure-wgrad-gemmex.py OUT_DIR  (writes wgrad_gemmex.csv)
"""
import ctypes
import os
import sys
import time

import torch

from gpu_timing import clocks, log, timed, write_rows

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEV = torch.device("cuda")
HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = os.path.join(HERE, "..", "..", "tests", "data", "h100_gemm_under_load.csv")
torch.manual_seed(0)


def cublas():
    """libcublas as PyTorch loaded it (found in this process's memory map)."""
    torch.randn(64, 64, device=DEV) @ torch.randn(64, 64, device=DEV)
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libcublas.so" in line}
    lib = ctypes.CDLL(sorted(paths)[0])
    lib.cublasGemmEx.restype = ctypes.c_int
    lib.cublasGemmEx.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                 ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                 ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                 ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return lib


CUDA_R_32F, CUDA_R_16BF, COMPUTE_32F, OP_N, OP_T, GEMM_DEFAULT = 0, 14, 68, 0, 1, -1


def wgrad_gemm_ex(lib, m, n, k, c_dtype, beta):
    """C (m x n, row-major) = grad_output^T (m x k) . input (k x n) + beta C, via cublasGemmEx."""
    go = torch.randn(k, m, device=DEV, dtype=torch.bfloat16)  # grad_output: tokens x out
    x = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)  # input: tokens x in
    c = torch.zeros(m, n, device=DEV, dtype=c_dtype)
    alpha_v, beta_v = ctypes.c_float(1.0), ctypes.c_float(beta)
    ctype = CUDA_R_32F if c_dtype == torch.float32 else CUDA_R_16BF

    # Column-major: C^T (n x m, ld n) = input^T (n x k: x as stored, ld n, N) . grad_output
    # (k x m: go as stored is m x k column-major, ld m, T), as Megatron's fused kernel calls it.
    def run():
        handle = ctypes.c_void_p(torch.cuda.current_blas_handle())
        status = lib.cublasGemmEx(handle, OP_N, OP_T, n, m, k, ctypes.addressof(alpha_v),
                                  x.data_ptr(), CUDA_R_16BF, n, go.data_ptr(), CUDA_R_16BF, m,
                                  ctypes.addressof(beta_v), c.data_ptr(), ctype, n, COMPUTE_32F,
                                  GEMM_DEFAULT)
        if status != 0:
            raise RuntimeError(f"cublasGemmEx status {status}")
    return run


def fp8_gemm(m, n, k, out_dtype):
    a = torch.randn(m, k, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=DEV).to(torch.float8_e4m3fn).t()  # column-major k x n
    one = torch.ones((), device=DEV, dtype=torch.float32)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=out_dtype,
                                    use_fast_accum=False)


def shapes():
    out = []
    with open(SHAPES) as f:
        for line in f:
            if line.startswith("#") or "wgrad" not in line:
                continue
            cells = line.strip().split(",")
            out.append((cells[0], int(cells[1]), int(cells[2]), int(cells[3])))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    log(torch.__version__, torch.cuda.get_device_name(0))
    lib = cublas()
    wgrad_gemm_ex(lib, 256, 128, 512, torch.float32, 0.0)()
    torch.cuda.synchronize()
    a = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    end = time.perf_counter() + 10.0  # reach the sustained clock before the first timing
    while time.perf_counter() < end:
        a @ a
        torch.cuda.synchronize()
    log("warm:", clocks())
    rows = []
    for repeat in range(2):
        order = shapes() if repeat == 0 else list(reversed(shapes()))
        for name, m, n, k in order:
            row = {"shape": name, "m": m, "n": n, "k": k, "repeat": repeat}
            for key, fn in (
                ("bf16_bf16_us", lambda: wgrad_gemm_ex(lib, m, n, k, torch.bfloat16, 0.0)),
                ("bf16_fp32_us", lambda: wgrad_gemm_ex(lib, m, n, k, torch.float32, 0.0)),
                ("bf16_accum_us", lambda: wgrad_gemm_ex(lib, m, n, k, torch.float32, 1.0)),
                ("fp8_bf16_us", lambda: fp8_gemm(m, n, k, torch.bfloat16)),
                ("fp8_fp32_us", lambda: fp8_gemm(m, n, k, torch.float32)),
            ):
                try:
                    row[key] = round(timed(fn()) * 1e6, 2)
                except Exception as exc:
                    log(name, key, "failed:", exc)
                    row[key] = ""
            row.update(clocks())
            rows.append(row)
            log(row)
    write_rows(os.path.join(OUT, "wgrad_gemmex.csv"), rows)


if __name__ == "__main__":
    main()
