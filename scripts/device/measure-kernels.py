#!/usr/bin/env python3
"""Kernel measurements on one NVIDIA GPU for Orrery's device presets.

Measures, with PyTorch on the card as found (clocks and power limit untouched):
  gemm.csv       BF16 (cuBLAS through F.linear) and FP8 e4m3 (cuBLASLt through torch._scaled_mm,
                 bf16 output, per-tensor scales, with and without fast accumulation) GEMMs: the
                 linear-layer shapes of the runs docs/validation.md checks (forward, input
                 gradient and weight gradient) and the square and M sweeps of the calibration
                 tables; median of timed groups after warm-up, one buffer set per shape.
  sustained.csv  one transformer layer's GEMMs (GPT3-5B, TP 1, 8192 tokens) looped for many
                 seconds in FP8 and BF16: throughput per window with the SM clock, power and
                 throttle reasons NVML reports, to see what sustained load costs against a burst.
  attention.csv  fused causal attention (scaled_dot_product_attention, BF16, head dim 128),
                 forward and backward, per backend (flash, cuDNN).
  memory.csv     memory-bound kernels (copy, norms, activations, casts, softmax, fused Adam):
                 bytes counted as each input read once and each output written once.
Usage: measure-kernels.py OUT_DIR
"""
import csv
import json
import os
import subprocess
import sys
import threading
import time

import torch
import torch.nn.functional as F

import gpu_timing
from gpu_timing import log

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEV = torch.device("cuda")
torch.manual_seed(0)


def timed(fn, groups=7):
    """gpu_timing.timed with the 7 groups this script's recorded data were taken with."""
    return gpu_timing.timed(fn, groups=groups)


class Nvml:
    def __init__(self):
        self.ok = False
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.ok = True
        except Exception as exc:  # NVML is optional: the timings stand without it
            log("nvml unavailable:", exc)

    def read(self):
        if not self.ok:
            return {}
        nv, h = self.nv, self.h
        out = {}
        for key, fn in (("sm_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
                        ("mem_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
                        ("power_w", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0),
                        ("temp_c", lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
                        ("throttle", lambda: nv.nvmlDeviceGetCurrentClocksThrottleReasons(h))):
            try:
                out[key] = fn()
            except Exception:
                pass
        return out


NVML = Nvml()


def write_csv(name, rows):
    if not rows:
        return
    keys = list(rows[0].keys())
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


# ---------------------------------------------------------------------------------------------
# GEMMs
def bf16_gemm(m, n, k):
    a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
    return lambda: F.linear(a, b)


def fp8_gemm(m, n, k, fast):
    a = torch.randn(m, k, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=DEV).to(torch.float8_e4m3fn).t()  # column-major k x n
    one = torch.ones((), device=DEV, dtype=torch.float32)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                    use_fast_accum=fast)


def layer_linears(name, hidden, ffn, heads, kv_heads, swiglu, tp, tokens):
    """(label, n, k) of the four linear layers of one transformer layer on one TP rank."""
    head = hidden // heads
    qkv = (hidden + 2 * kv_heads * head) // tp
    up = (2 if swiglu else 1) * ffn // tp
    return [(f"{name} qkv", qkv, hidden), (f"{name} proj", hidden, hidden // tp),
            (f"{name} fc1", up, hidden), (f"{name} fc2", hidden, ffn // tp)], tokens


# The NeMo H100 FP8 rows (docs/validation.md): tokens = mbs x seq / cp (sequence parallelism
# gathers the full sequence before the column-parallel GEMMs).
LAYERS = [
    layer_linears("gpt3-5b tp1", 4096, 16384, 32, 32, False, 1, 4 * 2048),
    layer_linears("gpt3-20b tp2", 6144, 24576, 48, 48, False, 2, 2 * 2048),
    layer_linears("gpt3-175b tp4", 12288, 49152, 96, 96, False, 4, 1 * 2048),
    layer_linears("llama2-7b tp1", 4096, 11008, 32, 32, True, 1, 4096),
    layer_linears("llama2-13b tp1", 5120, 13824, 40, 40, True, 1, 4096),
    layer_linears("llama2-70b tp4", 8192, 28672, 64, 8, True, 4, 4096),
    layer_linears("llama3-8b tp1 cp2", 4096, 14336, 32, 8, True, 1, 4096),
    layer_linears("nemotron-8b tp2", 4096, 16384, 32, 32, False, 2, 4 * 4096),
    layer_linears("nemotron-340b tp8", 18432, 73728, 96, 8, False, 8, 4096),
]


def gemm_shapes():
    shapes = []
    for linears, m in LAYERS:
        for label, n, k in linears:
            shapes.append((label + " fwd", m, n, k))
            shapes.append((label + " dgrad", m, k, n))
            shapes.append((label + " wgrad", n, k, m))
    for s in (1024, 2048, 4096, 8192, 16384):
        shapes.append(("square", s, s, s))
    for m in (256, 512, 1024, 2048, 4096, 8192, 16384):
        shapes.append(("m sweep n=k=4096", m, 4096, 4096))
    for m in (512, 2048, 8192):
        shapes.append(("m sweep n=k=8192", m, 8192, 8192))
    return shapes


def measure_gemms():
    rows = []
    for label, m, n, k in gemm_shapes():
        flop = 2.0 * m * n * k
        row = {"shape": label, "m": m, "n": n, "k": k}
        for dtype, make in (("bf16", lambda: bf16_gemm(m, n, k)),
                            ("fp8_fast", lambda: fp8_gemm(m, n, k, True)),
                            ("fp8", lambda: fp8_gemm(m, n, k, False))):
            try:
                t = timed(make())
                row[dtype + "_us"] = round(t * 1e6, 2)
                row[dtype + "_tflops"] = round(flop / t / 1e12, 1)
            except Exception as exc:
                row[dtype + "_us"] = ""
                row[dtype + "_tflops"] = ""
                log("gemm", dtype, label, m, n, k, "failed:", str(exc).splitlines()[0])
        rows.append(row)
        torch.cuda.empty_cache()
    write_csv("gemm.csv", rows)
    return rows


# ---------------------------------------------------------------------------------------------
# Sustained load
def sustained(dtype, seconds, window_s=0.5):
    linears, m = LAYERS[0]
    calls, flop = [], 0.0
    for _, n, k in linears:
        for (mm, nn, kk) in ((m, n, k), (m, k, n), (n, k, m)):
            calls.append(bf16_gemm(mm, nn, kk) if dtype == "bf16" else fp8_gemm(mm, nn, kk, False))
            flop += 2.0 * mm * nn * kk

    def layer():
        for c in calls:
            c()

    t_layer = timed(layer, groups=3)
    reps = max(1, int(window_s / t_layer))
    rows, begin = [], time.perf_counter()
    while time.perf_counter() - begin < seconds:
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            layer()
        e.record()
        time.sleep(window_s * 0.6)
        state = NVML.read()  # read while the window's work still runs
        e.synchronize()
        t = s.elapsed_time(e) * 1e-3
        rows.append({"dtype": dtype, "elapsed_s": round(time.perf_counter() - begin, 2),
                     "tflops": round(flop * reps / t / 1e12, 1), **state})
    return rows, round(flop / t_layer / 1e12, 1)


# ---------------------------------------------------------------------------------------------
# Attention
def measure_attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    configs = [(16384 // s, 32, s) for s in (512, 1024, 2048, 4096, 8192, 16384)]
    configs += [(4, 32, 2048), (2, 24, 2048), (1, 24, 2048), (1, 32, 4096), (1, 16, 4096),
                (1, 32, 8192)]
    rows = []
    for backend_name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                                  ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        for b, h, s in configs:
            d = 128
            row = {"backend": backend_name, "batch": b, "heads": h, "seq": s, "head_dim": d}
            try:
                q, k, v = (torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16,
                                       requires_grad=True) for _ in range(3))
                with sdpa_kernel(backend):
                    fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    g = torch.randn_like(out)
                    bwd = timed(lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True))
                causal_flop = 2.0 * b * h * s * s * d  # half of QK^T and PV: 4 s^2 d / 2
                row.update({"fwd_us": round(fwd * 1e6, 1), "bwd_us": round(bwd * 1e6, 1),
                            "fwd_tflops": round(causal_flop / fwd / 1e12, 1),
                            "bwd_tflops": round(2.5 * causal_flop / bwd / 1e12, 1),
                            "bwd_over_fwd": round(bwd / fwd, 3)})
                del q, k, v, out, g
            except Exception as exc:
                log("attention", backend_name, b, h, s, "failed:", str(exc).splitlines()[0])
            rows.append(row)
            torch.cuda.empty_cache()
    write_csv("attention.csv", rows)
    return rows


# ---------------------------------------------------------------------------------------------
# Memory-bound kernels
def measure_memory():
    rows = []

    def add(name, fn, nbytes, elements):
        try:
            t = timed(fn)
            rows.append({"kernel": name, "elements": elements, "bytes": nbytes,
                         "us": round(t * 1e6, 2), "gbps": round(nbytes / t / 1e9, 1)})
        except Exception as exc:
            log("memory", name, "failed:", str(exc).splitlines()[0])

    big = torch.randn(256 * 1024 * 1024, device=DEV, dtype=torch.bfloat16)  # 512 MiB
    add("copy bf16 512MiB", lambda: big.clone(), 2 * big.numel() * 2, big.numel())
    del big
    for rows_, h in ((8192, 4096), (4096, 8192), (2048, 12288), (1024, 4096), (512, 4096)):
        x = torch.randn(rows_, h, device=DEV, dtype=torch.bfloat16)
        y = torch.randn_like(x)
        w = torch.ones(h, device=DEV, dtype=torch.bfloat16)
        n = x.numel()
        add(f"layernorm {rows_}x{h}", lambda: F.layer_norm(x, (h,), w, w), 4 * n, n)
        add(f"rmsnorm {rows_}x{h}", lambda: F.rms_norm(x, (h,), w), 4 * n, n)
        add(f"add {rows_}x{h}", lambda: x + y, 6 * n, n)
        add(f"cast fp8 {rows_}x{h}", lambda: x.to(torch.float8_e4m3fn), 3 * n, n)
        add(f"dropout {rows_}x{h}", lambda: F.dropout(x, 0.1, True), 4 * n, n)
    for rows_, h in ((8192, 16384), (4096, 22016), (1024, 16384)):
        x = torch.randn(rows_, h, device=DEV, dtype=torch.bfloat16)
        n = x.numel()
        add(f"gelu {rows_}x{h}", lambda: F.gelu(x, approximate="tanh"), 4 * n, n)
        add(f"silu {rows_}x{h}", lambda: F.silu(x), 4 * n, n)
    s = torch.randn(4 * 32 * 2048, 2048, device=DEV, dtype=torch.bfloat16)
    add("softmax 262144x2048", lambda: torch.softmax(s, -1), 4 * s.numel(), s.numel())
    del s
    logits = torch.randn(8192, 51200, device=DEV, dtype=torch.bfloat16)
    target = torch.randint(0, 51200, (8192,), device=DEV)
    add("cross entropy 8192x51200", lambda: F.cross_entropy(logits.float(), target),
        (2 + 4 + 4) * logits.numel(), logits.numel())
    del logits
    n = 128 * 1024 * 1024
    p = torch.zeros(n, device=DEV, dtype=torch.float32, requires_grad=True)
    p.grad = torch.randn_like(p)
    opt = torch.optim.Adam([p], lr=1e-4, fused=True)
    opt.step()
    add("fused adam fp32 128M params", opt.step, 28 * n, n)
    write_csv("memory.csv", rows)
    return rows


def main():
    os.makedirs(OUT, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    env = {"device": props.name, "sms": props.multi_processor_count,
           "memory_gib": round(props.total_memory / 2**30, 1), "torch": torch.__version__,
           "cuda": torch.version.cuda, "idle": NVML.read()}
    try:
        env["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,power.limit,clocks.max.sm,"
             "clocks.max.mem,clocks.applications.graphics", "--format=csv"],
            capture_output=True, text=True, timeout=20).stdout
    except Exception as exc:
        env["nvidia_smi"] = str(exc)
    log(json.dumps(env))
    t0 = time.perf_counter()
    gemms = measure_gemms()
    log(f"gemms done in {time.perf_counter() - t0:.0f} s")
    sus = []
    burst = {}
    for dtype, secs in (("fp8", 30), ("bf16", 20)):
        rows, burst[dtype] = sustained(dtype, secs)
        sus += rows
    write_csv("sustained.csv", sus)
    log(f"sustained done at {time.perf_counter() - t0:.0f} s")
    attn = measure_attention()
    log(f"attention done at {time.perf_counter() - t0:.0f} s")
    mem = measure_memory()
    log(f"memory done at {time.perf_counter() - t0:.0f} s")
    env["burst_layer_tflops"] = burst
    with open(os.path.join(OUT, "env.json"), "w") as f:
        json.dump(env, f, indent=1)

    log("\nshape                           m     n     k   bf16  fp8f   fp8 (TFLOP/s)")
    for r in gemms:
        log(f"{r['shape'][:28]:28s} {r['m']:6d}{r['n']:6d}{r['k']:6d} {r.get('bf16_tflops')!s:>6}"
            f"{r.get('fp8_fast_tflops')!s:>6}{r.get('fp8_tflops')!s:>6}")
    log("\nsustained (burst layer TFLOP/s %s)" % burst)
    for r in sus[::4]:
        log(r)
    log("\nattention")
    for r in attn:
        log(r)
    log("\nmemory")
    for r in mem:
        log(r)


if __name__ == "__main__":
    main()
