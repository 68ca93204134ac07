// Prices a workload's compute demands on one device, in one place, before any simulator runs:
// every phase that lists kernels (operator-level formats without times) gets
//   compute = sum over its kernels of kernel_time(device, kernel)      (hardware/op_cost.h)
// so the simulators see times only (a phase's GEMM overlapped with a collective, Phase::overlapped,
// also gets its own time); likewise every task of a task graph (Chakra) that gives a
// compute demand instead of a duration. The device is --device if given, else the cluster's `gpu:`,
// else (with a warning) the H100-SXM5-80GB preset.
#pragma once

#include <string>

#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "hardware/device.h"
#include "workload/workload.h"

namespace orrery {

// True when some phase of the workload lists kernels to price.
bool has_compute_demands(const Workload& workload);

// The device that prices the workload: `override` (a preset or file) when not empty, else the
// cluster's gpu. Throws InputError for an unknown override.
Device compute_device(const Cluster& cluster, const std::string& override,
                      Diagnostics& diagnostics);

// Sets the compute time of every phase that lists kernels. Throws InputError when the device
// lacks a rate a kernel needs.
void price_compute(Workload& workload, const Device& device);

}  // namespace orrery
