#!/usr/bin/env python3
"""Burst against sustained GEMM throughput on one NVIDIA GPU, as found (clocks untouched).

For BF16 and FP8 8192^3 GEMMs: let the card idle, then time each of the first calls on their own
(a burst, as short benchmarks measure) and keep the same GEMM running for many seconds (as
training does), reading the SM clock, power and throttle reasons from NVML once per window.
Writes burst_sustained.csv to OUT_DIR. Usage: measure-burst-vs-sustained.py OUT_DIR"""
import csv, os, sys, time
import torch
import torch.nn.functional as F
import pynvml

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
pynvml.nvmlInit()
H = pynvml.nvmlDeviceGetHandleByIndex(0)
DEV = torch.device("cuda")


def state():
    return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM),
            "power_w": pynvml.nvmlDeviceGetPowerUsage(H) / 1000.0,
            "temp_c": pynvml.nvmlDeviceGetTemperature(H, pynvml.NVML_TEMPERATURE_GPU)}


def gemm(dtype, s):
    if dtype == "bf16":
        a = torch.randn(s, s, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(s, s, device=DEV, dtype=torch.bfloat16)
        return lambda: F.linear(a, b)
    a = torch.randn(s, s, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(s, s, device=DEV).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=DEV)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


rows = []
for dtype in ("bf16", "fp8"):
    s = 8192
    fn = gemm(dtype, s)
    fn()
    torch.cuda.synchronize()
    time.sleep(20)  # idle: the clock and the power budget recover
    idle = state()
    flop = 2.0 * s ** 3
    begin = time.perf_counter()
    for i in range(30):  # the burst: each call timed on its own
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); fn(); e1.record(); e1.synchronize()
        rows.append({"dtype": dtype, "phase": "burst", "call": i,
                     "elapsed_s": round(time.perf_counter() - begin, 4),
                     "tflops": round(flop / (e0.elapsed_time(e1) * 1e-3) / 1e12, 1), **state()})
    while time.perf_counter() - begin < 20:  # sustained: windows of 100 calls
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(100):
            fn()
        e1.record()
        time.sleep(0.05)
        st = state()
        e1.synchronize()
        rows.append({"dtype": dtype, "phase": "sustained", "call": 100,
                     "elapsed_s": round(time.perf_counter() - begin, 2),
                     "tflops": round(100 * flop / (e0.elapsed_time(e1) * 1e-3) / 1e12, 1), **st})
    print(dtype, "idle", idle, flush=True)
    for r in rows:
        if r["dtype"] == dtype and (r["phase"] == "burst" and r["call"] % 5 == 0 or r["phase"] == "sustained"):
            print(r, flush=True)
with open(os.path.join(OUT, "burst_sustained.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
