#!/usr/bin/env python3
"""The memory-bound kernels of a transformer layer, fused, on one NVIDIA GPU, in Orrery's bytes.

Each kernel Orrery's generator charges for a layer (src/models/training_workload.cpp: norm,
bias-dropout-residual, activation) is run forward and backward as one fused kernel: PyTorch's own
(eager) and the one torch.compile (Inductor, Triton) makes of the same expression; BF16, on the card
as found, after a second of load. The efficiency is the bytes Orrery charges for that kernel, over
the time, over the HBM bandwidth the vendor states: directly comparable with a preset's
`efficiency.memory`. Orrery's bytes, with A = rows x hidden x 2:
  norm              forward 2A (read, write)          backward 3A (1.5x)
  bias-dropout-add  forward 3A + rows x hidden (mask) backward 1.5x
  GeLU (f = 4h)     forward 2F (F = rows x f x 2)     backward 3F
  SwiGLU (f = 4h)   forward 3F                        backward 5F
Backward is timed as forward + backward minus forward; the shapes are 4 layers' worth of tokens so
that each call's kernels outlast the host's launch work. Writes fused_kernels.csv to OUT_DIR.
Usage: measure-fused-kernels.py OUT_DIR"""
import csv
import os
import sys
import time

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEV, DT = torch.device("cuda"), torch.bfloat16
NAME = torch.cuda.get_device_name()
PEAK = 4.8e12 if "H200" in NAME else 3.35e12 if "H100" in NAME else 2.039e12  # B/s, vendor specs
torch.manual_seed(0)


def timed(fn, seconds=0.4):
    """Median seconds per call over CUDA-event windows after a warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    one = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    reps = max(1, int(0.02 / max(time.perf_counter() - one, 1e-6)))
    samples, begin = [], time.perf_counter()
    while time.perf_counter() - begin < seconds:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(reps):
            fn()
        e1.record()
        e1.synchronize()
        samples.append(e0.elapsed_time(e1) * 1e-3 / reps)
    samples.sort()
    return samples[len(samples) // 2]


def layer_norm(x, w, b):
    return F.layer_norm(x, x.shape[-1:], w, b)


def rms_norm(x, w, b):
    return F.rms_norm(x, x.shape[-1:], w)


def bias_dropout_add(x, r, b):
    return r + F.dropout(x + b, 0.1, True)


def bias_add(x, r, b):  # the same kernel with dropout off (Llama-style models)
    return r + x + b


def gelu(x):
    return F.gelu(x, approximate="tanh")


def swiglu(x):
    a, g = x.chunk(2, -1)
    return F.silu(a) * g


def measure(kind, fn, inputs, fwd_bytes, bwd_bytes, rows, width):
    out = []
    for how, f in (("eager", fn), ("compiled", torch.compile(fn, dynamic=False))):
        grad = torch.randn_like(f(*inputs))
        fwd = timed(lambda: f(*inputs))

        leaves = [t for t in inputs if t.requires_grad]

        def both():  # gradients returned, not accumulated into .grad (no extra add kernels)
            torch.autograd.grad(f(*inputs), leaves, grad, allow_unused=True)

        both_s = timed(both)
        bwd = max(both_s - fwd, 1e-9)
        for pass_, s, nbytes in (("forward", fwd, fwd_bytes), ("backward", bwd, bwd_bytes)):
            row = {"kernel": kind, "implementation": how, "pass": pass_, "rows": rows,
                   "width": width, "us": round(s * 1e6, 2), "orrery_bytes": int(nbytes),
                   "GBps": round(nbytes / s / 1e9), "of_peak": round(nbytes / s / PEAK, 3)}
            out.append(row)
            print(row, flush=True)
    return out


def tensor(*shape, grad=True):
    return torch.randn(*shape, device=DEV, dtype=DT, requires_grad=grad)


rows_out = []
begin = time.perf_counter()
a = torch.randn(8192, 8192, device=DEV, dtype=DT)
while time.perf_counter() - begin < 1.0:  # a second of load before the first point
    a = a @ a
    a /= a.norm()
for rows, h in ((32768, 4096), (16384, 8192)):  # large enough that the host keeps ahead
    A = rows * h * 2
    # The residual kernels' bias gradient is not theirs (Megatron sums it beside the GEMM).
    x, r, w, b = tensor(rows, h), tensor(rows, h), tensor(h), tensor(h)
    fixed_bias = tensor(h, grad=False)
    rows_out += measure("layer-norm", layer_norm, (x, w, b), 2 * A, 3 * A, rows, h)
    rows_out += measure("rms-norm", rms_norm, (x, w, b), 2 * A, 3 * A, rows, h)
    bda = 3 * A + rows * h
    rows_out += measure("bias-dropout-residual", bias_dropout_add, (x, r, fixed_bias), bda, 1.5 * bda, rows, h)
    rows_out += measure("bias-residual", bias_add, (x, r, fixed_bias), bda, 1.5 * bda, rows, h)
    Fb = rows * 4 * h * 2
    rows_out += measure("gelu", gelu, (tensor(rows, 4 * h),), 2 * Fb, 3 * Fb, rows, 4 * h)
    rows_out += measure("swiglu", swiglu, (tensor(rows, 8 * h),), 3 * Fb, 5 * Fb, rows, 4 * h)
    del x, r, w, b
    torch.cuda.empty_cache()
with open(os.path.join(OUT, "fused_kernels.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows_out[0].keys()))
    w.writeheader()
    w.writerows(rows_out)
print(NAME, "peak", PEAK / 1e12, "TB/s", "took", round(time.perf_counter() - begin), "s")
