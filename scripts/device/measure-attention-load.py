#!/usr/bin/env python3
"""Fused causal attention (cuDNN through scaled_dot_product_attention, BF16, head dim 128, 16k
tokens per batch) in a burst and under sustained load, with the SM clock NVML reports.

For each sequence length: after an idle pause, the first forward and backward calls timed on
their own (a burst); then forward and backward alternating for several seconds, as training runs
them, timed in windows. Writes attention_load.csv to OUT_DIR.
Usage: measure-attention-load.py OUT_DIR"""
import csv, os, sys, time
import torch
import torch.nn.functional as F
import pynvml
from torch.nn.attention import SDPBackend, sdpa_kernel

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
pynvml.nvmlInit()
H = pynvml.nvmlDeviceGetHandleByIndex(0)
DEV = torch.device("cuda")


def clock():
    return pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM), \
        round(pynvml.nvmlDeviceGetPowerUsage(H) / 1000.0)


def event_time(fn, n=1):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(n):
        fn()
    e1.record()
    return e0, e1


rows = []
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for s in (512, 1024, 2048, 4096, 8192, 16384):
        b, h, d = 16384 // s, 32, 128
        q, k, v = (torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out = fwd()
        g = torch.randn_like(out)
        bwd = lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True)
        fwd(); bwd(); torch.cuda.synchronize()
        time.sleep(12)  # idle: the clock recovers
        mhz0, w0 = clock()
        burst_f, burst_b = [], []
        for _ in range(5):
            a = event_time(fwd); c = event_time(bwd)
            c[1].synchronize()
            burst_f.append(a[0].elapsed_time(a[1])); burst_b.append(c[0].elapsed_time(c[1]))
        begin = time.perf_counter()
        sus_f, sus_b, mhz = [], [], []
        while time.perf_counter() - begin < 6:
            a = event_time(fwd, 20); c = event_time(bwd, 20)
            time.sleep(0.02)
            mhz.append(clock())
            c[1].synchronize()
            if time.perf_counter() - begin > 2:
                sus_f.append(a[0].elapsed_time(a[1]) / 20); sus_b.append(c[0].elapsed_time(c[1]) / 20)
        med = lambda x: sorted(x)[len(x) // 2]
        flop = 2.0 * b * h * s * s * d  # causal forward: half of 4 s^2 d per head
        row = {"seq": s, "batch": b, "heads": h, "idle_mhz": mhz0,
               "burst_fwd_us": round(med(burst_f[1:]) * 1e3, 1),
               "burst_bwd_us": round(med(burst_b[1:]) * 1e3, 1),
               "sustained_fwd_us": round(med(sus_f) * 1e3, 1),
               "sustained_bwd_us": round(med(sus_b) * 1e3, 1),
               "sustained_mhz": med([m for m, _ in mhz[len(mhz) // 3:]]),
               "sustained_w": med([w for _, w in mhz[len(mhz) // 3:]])}
        row["burst_fwd_tflops"] = round(flop / row["burst_fwd_us"] / 1e6, 1)
        row["sustained_fwd_tflops"] = round(flop / row["sustained_fwd_us"] / 1e6, 1)
        row["burst_bwd_tflops_2p5"] = round(2.5 * flop / row["burst_bwd_us"] / 1e6, 1)
        row["sustained_bwd_tflops_2p5"] = round(2.5 * flop / row["sustained_bwd_us"] / 1e6, 1)
        print(row, flush=True)
        rows.append(row)
        del q, k, v, out, g
        torch.cuda.empty_cache()
with open(os.path.join(OUT, "attention_load.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
