#!/usr/bin/env python3
"""One GPT-style transformer layer, forward and backward, in BF16 on one NVIDIA GPU, as found.

The layer as Megatron-LM runs it at TP 1 (pre-LayerNorm; QKV, cuDNN fused causal attention,
output projection, bias-dropout-residual; LayerNorm; FC1, GeLU, FC2, bias-dropout-residual),
in eager PyTorch and captured in a CUDA graph (the same kernels without the host's launch gaps),
timed under sustained load (several seconds, the median of windows), with the SM clock; then the
kernels of eager steps profiled under that load (per kernel, and the GPU's idle time between
them). Prints and writes layer.csv and layer_kernels.csv to OUT_DIR. Usage: measure-layer.py OUT_DIR [hidden heads seq batch]

With LAYER_COMPILE=1 the layer's parts around the attention kernel go through torch.compile (its
own fused kernels for the norms, the Q/K/V split, bias-GeLU and bias-dropout-residual: a stand-in
for Megatron's fused kernels, which eager PyTorch does not have); the files are then named
layer_compiled.csv and layer_compiled_kernels.csv."""
import csv, os, sys, time
import torch
import torch.nn.functional as F
import pynvml
from torch.nn.attention import SDPBackend, sdpa_kernel

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
h, heads, seq, batch = (int(x) for x in (sys.argv[2:6] if len(sys.argv) >= 6 else (4096, 32, 2048, 4)))
pynvml.nvmlInit()
H = pynvml.nvmlDeviceGetHandleByIndex(0)
dev, dt = torch.device("cuda"), torch.bfloat16
COMPILED = os.environ.get("LAYER_COMPILE") == "1"
SUFFIX = "_compiled" if COMPILED else ""
torch.manual_seed(0)


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(h, dtype=dt, device=dev)
        self.qkv = torch.nn.Linear(h, 3 * h, dtype=dt, device=dev)
        self.proj = torch.nn.Linear(h, h, dtype=dt, device=dev)
        self.ln2 = torch.nn.LayerNorm(h, dtype=dt, device=dev)
        self.fc1 = torch.nn.Linear(h, 4 * h, dtype=dt, device=dev)
        self.fc2 = torch.nn.Linear(4 * h, h, dtype=dt, device=dev)

        self.before, self.after = self.before_attention, self.after_attention
        if COMPILED:
            self.before, self.after = torch.compile(self.before), torch.compile(self.after)

    def before_attention(self, x):  # x: [seq, batch, h] -> q, k, v: [batch, heads, seq, h / heads]
        s, b, _ = x.shape
        return self.qkv(self.ln1(x)).view(s, b, heads, 3 * h // heads).permute(1, 2, 0, 3).chunk(3, -1)

    def after_attention(self, x, a):
        s, b, _ = x.shape
        a = a.permute(2, 0, 1, 3).reshape(s, b, h)
        x = x + F.dropout(self.proj(a), 0.1, True)
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh")), 0.1, True)

    def forward(self, x):
        q, k, v = self.before(x)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.after(x, a)


layer = Layer()
x = torch.randn(seq, batch, h, device=dev, dtype=dt, requires_grad=True)
g = torch.randn(seq, batch, h, device=dev, dtype=dt)


def kind_of(kernel):
    """gemm, attention or other, from a kernel's name (cuDNN's attention kernels name sm90 too)."""
    name = kernel.lower()
    if any(k in name for k in ("flash", "fmha", "cudnn", "sdpa", "attn")):
        return "attention"
    return "gemm" if any(k in name for k in ("gemm", "sm90", "cutlass", "nvjet", "ampere")) else "other"


def step():
    y = layer(x)
    y.backward(g)


def timed(fn, seconds=8.0):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    one = time.perf_counter(); fn(); torch.cuda.synchronize(); one = time.perf_counter() - one
    reps = max(1, int(0.25 / one))
    samples, clocks, begin = [], [], time.perf_counter()
    while time.perf_counter() - begin < seconds:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(reps):
            fn()
        e1.record()
        e1.synchronize()
        clocks.append(pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM))
        if time.perf_counter() - begin > seconds / 3:
            samples.append(e0.elapsed_time(e1) / reps)
    samples.sort()
    return samples[len(samples) // 2], sorted(clocks)[len(clocks) // 2]


rows = []
eager_ms, eager_mhz = timed(step)
rows.append({"how": "eager", "ms_per_layer_fwd_bwd": round(eager_ms, 4), "sm_mhz": eager_mhz})
# The same step captured in a CUDA graph: the kernels alone, no host launch gaps.
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        step()
torch.cuda.current_stream().wait_stream(s)
try:
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    graph_ms, graph_mhz = timed(graph.replay)
    rows.append({"how": "cuda graph", "ms_per_layer_fwd_bwd": round(graph_ms, 4), "sm_mhz": graph_mhz})
except Exception as error:  # a compiled step's random numbers may refuse capture
    print("no CUDA graph:", str(error).splitlines()[0])
# Kernel time by kind, from the profiler over a few eager steps.
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for _ in range(5):
        step()
    torch.cuda.synchronize()
total = 0.0
kinds = {}
for e in prof.key_averages():
    t = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    if t <= 0:
        continue
    name = e.key.lower()
    kind = kind_of(name)
    kinds[kind] = kinds.get(kind, 0.0) + t / 5 / 1000.0
    total += t / 5 / 1000.0
for k, v in sorted(kinds.items()):
    rows.append({"how": "profiler kernels: " + k, "ms_per_layer_fwd_bwd": round(v, 4), "sm_mhz": ""})
rows.append({"how": "profiler kernels: all", "ms_per_layer_fwd_bwd": round(total, 4), "sm_mhz": ""})
# The same kernels under sustained load: eager steps for several seconds, the profiler over the
# last of them (no pause between), per kernel and as the GPU's busy and idle time in that window.
import json, tempfile
begin = time.perf_counter()
while time.perf_counter() - begin < 6:
    step()
steps = 40
with profile(activities=[ProfilerActivity.CUDA]) as loaded:
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
loaded_mhz = pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM)
trace = os.path.join(tempfile.mkdtemp(), "trace.json")
loaded.export_chrome_trace(trace)
kernels = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in json.load(open(trace))["traceEvents"]
                 if e.get("cat") == "kernel" and e.get("ph") == "X")
kernels = kernels[len(kernels) // 4:]  # the first quarter may still carry the profiler's start
span = kernels[-1][1] - kernels[0][0]
busy, end = 0.0, kernels[0][0]
for start, stop_, _ in kernels:
    busy += max(0.0, stop_ - max(start, end))
    end = max(end, stop_)
kernel_sum = sum(b - a for a, b, _ in kernels)
steps_seen = steps * 3 / 4
per_kernel = {}
for a, b, name in kernels:
    kind = kind_of(name)
    c = per_kernel.setdefault((kind, name[:120]), [0, 0.0])
    c[0] += 1
    c[1] += b - a
for label, value in (("under load: step (kernels' span)", span), ("under load: GPU busy", busy),
                     ("under load: kernels' sum", kernel_sum), ("under load: GPU idle", span - busy)):
    rows.append({"how": label, "ms_per_layer_fwd_bwd": round(value / steps_seen / 1000, 4),
                 "sm_mhz": loaded_mhz})
for kind in ("gemm", "attention", "other"):
    rows.append({"how": "under load: kernels: " + kind, "sm_mhz": loaded_mhz,
                 "ms_per_layer_fwd_bwd": round(sum(v[1] for k, v in per_kernel.items() if k[0] == kind)
                                               / steps_seen / 1000, 4)})
with open(os.path.join(OUT, "layer%s_kernels.csv" % SUFFIX), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["kind", "kernel", "calls_per_step", "us_per_step"])
    for (kind, name), (calls, us) in sorted(per_kernel.items(), key=lambda kv: -kv[1][1]):
        w.writerow([kind, name, round(calls / steps_seen, 2), round(us / steps_seen, 2)])
top = sorted(prof.key_averages(), key=lambda e: -(e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total))[:25]
print("layer h=%d heads=%d seq=%d batch=%d bf16%s" % (h, heads, seq, batch, " compiled" if COMPILED else ""))
for r in rows:
    print(r)
for e in top:
    t = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    print("%9.1f us/step  %5d calls/step  %s" % (t / 5, e.count // 5, e.key[:90]))
with open(os.path.join(OUT, "layer%s.csv" % SUFFIX), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["how", "ms_per_layer_fwd_bwd", "sm_mhz"])
    w.writeheader()
    w.writerows(rows)
