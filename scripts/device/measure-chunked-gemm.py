#!/usr/bin/env python3
"""A GEMM split into row chunks against the whole GEMM, on one NVIDIA GPU.

Transformer Engine's tensor-parallel overlap (Orrery's --tp-comm-overlap) runs an overlapped GEMM
as chunks along its rows: t chunks of m/t rows for the ring exchange over t tensor ranks, 4 for the
attention projection's pipelined reduce-scatter. This measures, for the overlapped GEMMs of the
NeMo rows whose recipes set the overlap (docs/validation.md), the whole GEMM and the same GEMM as
its chunks back to back (one call per chunk, each on its own rows, its own output), in BF16
(F.linear) and FP8 (torch._scaled_mm, e4m3, bf16 output; fast accumulation for the forward GEMMs
as TE runs them, not for the input gradients), with the card kept under load so that its clock is
the sustained one. Where PyTorch offers cuBLAS's SM carveout, the chunked GEMMs are measured again
launched for the SMs the communication leaves (TE's set_sm_margin).

Writes chunked_gemm.csv: case, m, n, k, chunks, dtype, carveout_sms, whole_us, chunked_us (the
chunks' sum), sm_mhz, power_w. Usage: measure-chunked-gemm.py OUT_DIR
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

from gpu_timing import clocks, log, timed, write_rows

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEV = torch.device("cuda")
torch.manual_seed(0)


def gemm(m, n, k, dtype, fast, chunks):
    """A callable running the (m x k)(k x n) GEMM as `chunks` row chunks back to back."""
    rows = m // chunks
    if dtype == "bf16":
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
        parts = [a[i * rows:(i + 1) * rows] for i in range(chunks)]
        return lambda: [F.linear(p, w) for p in parts]
    a = torch.randn(m, k, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=DEV).to(torch.float8_e4m3fn).t()  # column-major k x n
    one = torch.ones((), device=DEV, dtype=torch.float32)
    parts = [a[i * rows:(i + 1) * rows] for i in range(chunks)]
    return lambda: [torch._scaled_mm(p, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                     use_fast_accum=fast) for p in parts]


def cases():
    """(case, m, n, k, chunks, forward, carveout): the overlapped GEMMs of the NeMo rows.

    Orrery's generator: a linear of `in` -> `out` on m tokens is a forward GEMM (m, out, in) and
    an input-gradient GEMM (m, in, out). Ring exchange: t chunks (QKV, FC1 and FC2 forward, the
    projection's and FC2's input gradient; FC2's forward with TE's SM margin of 1 SM); the
    projection's forward: 4 chunks on the SMs its 24-SM reduce-scatter leaves.
    """
    out = []
    models = [
        # name, tokens per rank before SP, hidden, qkv width, ffn (fc1 width), tp
        ("gpt3-175b mbs1", 2048, 12288, 3 * 12288, 4 * 12288, 4),
        ("gpt3-175b mbs2", 4096, 12288, 3 * 12288, 4 * 12288, 4),
        ("llama3-70b", 4096, 8192, (64 + 16) * 128, 2 * 28672, 4),  # CP 2: 8192 / 2 tokens
        ("nemotron4-340b", 4096, 18432, (96 + 16) * 192, 73728, 8),
    ]
    for name, m, h, qkv, fc1, t in models:
        fc2_in = fc1 // 2 if name == "llama3-70b" else fc1  # SwiGLU halves FC2's input
        out += [
            (f"{name} qkv fwd", m, qkv // t, h, t, True, 0),
            (f"{name} proj fwd", m, h, h // t, 4, True, 24),
            (f"{name} fc1 fwd", m, fc1 // t, h, t, True, 0),
            (f"{name} fc2 fwd", m, h, fc2_in // t, t, True, 1),
            (f"{name} proj dgrad", m, h // t, h, t, False, 0),
            (f"{name} fc2 dgrad", m, fc2_in // t, h, t, False, 0),
        ]
    return out


def set_carveout(sms):
    fn = getattr(torch._C, "_set_sm_carveout_experimental", None)
    if fn is None:
        return False
    fn(sms if sms else None)
    return True


def main():
    os.makedirs(OUT, exist_ok=True)
    log(torch.__version__, torch.cuda.get_device_name(0), "carveout:",
        hasattr(torch._C, "_set_sm_carveout_experimental"))
    warm = gemm(8192, 8192, 8192, "bf16", False, 1)
    end = time.perf_counter() + 10.0  # reach the sustained clock before the first timing
    while time.perf_counter() < end:
        warm()
        torch.cuda.synchronize()
    log("warm:", clocks())
    rows = []
    for repeat in range(3):
        order = cases() if repeat % 2 == 0 else list(reversed(cases()))
        for case, m, n, k, chunks, forward, carveout in order:
            for dtype in ("fp8", "bf16"):
                fast = forward and dtype == "fp8"
                whole = timed(gemm(m, n, k, dtype, fast, 1))
                split_fn = gemm(m, n, k, dtype, fast, chunks)
                split = timed(split_fn)
                row = {"case": case, "m": m, "n": n, "k": k, "chunks": chunks, "dtype": dtype,
                       "repeat": repeat, "carveout_sms": 0, "whole_us": round(whole * 1e6, 2),
                       "chunked_us": round(split * 1e6, 2)}
                row.update(clocks())
                rows.append(row)
                log(row)
                if carveout and set_carveout(carveout):
                    try:
                        whole_c = timed(gemm(m, n, k, dtype, fast, 1))
                        split_c = timed(split_fn)
                        row = dict(row, carveout_sms=carveout, whole_us=round(whole_c * 1e6, 2),
                                   chunked_us=round(split_c * 1e6, 2))
                        row.update(clocks())
                        rows.append(row)
                        log(row)
                    except Exception as exc:
                        log("carveout failed:", exc)
                    finally:
                        set_carveout(0)
    write_rows(os.path.join(OUT, "chunked_gemm.csv"), rows)


if __name__ == "__main__":
    main()
