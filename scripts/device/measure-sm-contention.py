#!/usr/bin/env python3
"""What a communication kernel's SMs cost the compute beside it, on one NVIDIA GPU, as found.

NCCL runs a collective as one thread block per channel, each holding an SM for the collective's
whole duration. Here a stand-in kernel holds k SMs (one block of 512 threads per SM, with enough
shared memory that no GEMM block fits beside it) for a fixed wall time while BF16 GEMMs of
transformer-layer shapes run on another stream; each GEMM loop is timed with and without the
stand-in, alternately, under sustained load. Two stand-ins: `spin` only holds the SMs; `copy`
also streams memory from its SMs (a bound on the HBM traffic a collective adds). Writes
sm_contention.csv to OUT_DIR, and gemm_kernels.csv: the kernel each GEMM runs alone, with its
grid, block, registers and shared memory as the profiler reports them.
Usage: measure-sm-contention.py OUT_DIR [HELD_SMS,...]"""
import csv, json, os, sys, tempfile, time
import cupy as cp
import torch
import torch.nn.functional as F
import pynvml

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
pynvml.nvmlInit()
H = pynvml.nvmlDeviceGetHandleByIndex(0)
DEV = torch.device("cuda")
SMS = torch.cuda.get_device_properties(0).multi_processor_count

SOURCE = r"""
extern "C" __global__ void hold(unsigned long long ns, float* buf, unsigned long long per_block,
                                int copy, const volatile int* stop) {
  extern __shared__ float pad[];
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  float* src = buf + blockIdx.x * per_block;
  float* dst = src + per_block / 2;
  float acc = threadIdx.x;
  pad[threadIdx.x] = acc;
  do {
    if (copy) {
      for (unsigned long long i = threadIdx.x; i < per_block / 2; i += blockDim.x) dst[i] = src[i] + 1.0f;
    } else {
      for (int i = 0; i < 256; ++i) acc = acc * 0.999f + 1.0f;
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns && !*stop);
  if (acc == -1.0f) buf[0] = pad[threadIdx.x];
}
"""
hold = cp.RawKernel(SOURCE, "hold")
SHARED = 128 * 1024  # more than half an SM's shared memory: one block per SM, no GEMM block beside it
hold.max_dynamic_shared_size_bytes = SHARED
PER_BLOCK = 4 * 1024 * 1024  # floats per block for the copy stand-in: 16 MiB (8 read, 8 written)
HELD = tuple(int(x) for x in sys.argv[2].split(",")) if len(sys.argv) > 2 else (8, 16, 24, 32, 48, 66)
buf = torch.zeros(max(HELD) * PER_BLOCK, device=DEV, dtype=torch.float32)
stop = torch.zeros(1, device=DEV, dtype=torch.int32)
side = torch.cuda.Stream()
main = torch.cuda.current_stream()


def gemm(m, n, k):
    a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
    return lambda: F.linear(a, w)


def loop_ms(fn, calls, held_sms=0, mode="spin", hold_ms=0.0):
    """Time `calls` calls of fn on the main stream, optionally beside the stand-in."""
    stop.zero_()
    torch.cuda.synchronize()
    if held_sms:
        with cp.cuda.ExternalStream(side.cuda_stream):
            hold((held_sms,), (512,), (cp.uint64(int(hold_ms * 1e6)), cp.asarray(buf),
                                       cp.uint64(PER_BLOCK), cp.int32(mode == "copy"),
                                       cp.asarray(stop)), shared_mem=SHARED)
        torch.cuda._sleep(20000)  # let the stand-in's blocks take their SMs first
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(calls):
        fn()
    e1.record()
    stop.fill_(1)  # ends the stand-in as soon as the GEMMs are done
    torch.cuda.synchronize()
    return e0.elapsed_time(e1)


# Shapes, forward (tokens x out x in): one GPT-3 5B layer at TP 1 over 8,192 tokens (QKV,
# projection, FC1, FC2) and GPT-3 175B's FC1 at TP 8 over 2,048 tokens (fewer tiles).
SHAPES = [("qkv", 8192, 12288, 4096), ("proj", 8192, 4096, 4096), ("fc1", 8192, 16384, 4096),
          ("fc2", 8192, 4096, 16384), ("fc1_175b_tp8", 2048, 6144, 12288)]

# The kernel each GEMM runs, and its launch shape (a persistent kernel's grid is sized to the SMs).
from torch.profiler import profile, ProfilerActivity
kernels = []
for name, m, n, k in SHAPES:
    fn = gemm(m, n, k)
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    trace = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(trace)
    for e in json.load(open(trace))["traceEvents"]:
        if e.get("cat") == "kernel":
            a = e.get("args", {})
            kernels.append({"shape": name, "m": m, "n": n, "k": k, "kernel": e["name"][:100],
                            "grid": "x".join(map(str, a.get("grid", []))),
                            "block": "x".join(map(str, a.get("block", []))),
                            "registers": a.get("registers per thread", ""),
                            "shared_bytes": a.get("shared memory", ""), "us": e["dur"]})
            print(kernels[-1], flush=True)
with open(os.path.join(OUT, "gemm_kernels.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(kernels[0].keys()))
    w.writeheader()
    w.writerows(kernels)

# Sustained load first, so every comparison runs at the held clock.
warm = gemm(8192, 8192, 8192)
t = time.perf_counter()
while time.perf_counter() - t < 6:
    warm()
torch.cuda.synchronize()
rows = []
for name, m, n, k in SHAPES:
    fn = gemm(m, n, k)
    one = loop_ms(fn, 10) / 10
    calls = max(10, int(60.0 / one))  # about 60 ms of GEMMs per timing
    for mode in ("spin", "copy"):
        for held in HELD:
            alone = loop_ms(fn, calls) / calls
            beside = loop_ms(fn, calls, held, mode, hold_ms=3.0 * calls * one + 5) / calls
            alone2 = loop_ms(fn, calls) / calls
            base = 0.5 * (alone + alone2)
            rows.append({"shape": name, "m": m, "n": n, "k": k, "mode": mode, "held_sms": held,
                         "sms": SMS, "alone_us": round(base * 1e3, 2),
                         "beside_us": round(beside * 1e3, 2),
                         "slowdown": round(beside / base, 4),
                         "proportional_model": round(1 + held / SMS, 4),
                         "fewer_sms_model": round(SMS / (SMS - held), 4),
                         "sm_mhz": pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM)})
            print(rows[-1], flush=True)
with open(os.path.join(OUT, "sm_contention.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
