"""What the measurement scripts of scripts/device/ share: unbuffered logging, the SM clock and
board power as NVML reads them, the median time of a CUDA call under load, and the CSV they
write."""
import csv
import time

import torch


def log(*args):
    print(*args, flush=True)


try:
    import pynvml

    pynvml.nvmlInit()
    _NV = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception as exc:  # the timings stand without NVML
    log("nvml unavailable:", exc)
    _NV = None


def clocks():
    """The SM clock (MHz) and board power (W) now, or {} without NVML."""
    if _NV is None:
        return {}
    try:
        return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(_NV, pynvml.NVML_CLOCK_SM),
                "power_w": round(pynvml.nvmlDeviceGetPowerUsage(_NV) / 1000.0, 1)}
    except Exception:
        return {}


def timed(fn, min_group_s=0.004, groups=9):
    """Median seconds per call of fn: groups of back-to-back calls between two CUDA events."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    one = max(time.perf_counter() - start, 1e-6)
    n = max(1, min(200, int(min_group_s / one)))
    samples = []
    for _ in range(groups):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            fn()
        e.record()
        e.synchronize()
        samples.append(s.elapsed_time(e) * 1e-3 / n)
    samples.sort()
    return samples[len(samples) // 2]


def write_rows(path, rows):
    """rows (dicts) as CSV at path: the first row's columns, then the clocks() ones where missing."""
    fields = list(dict.fromkeys(list(rows[0].keys()) + ["sm_mhz", "power_w"]))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
