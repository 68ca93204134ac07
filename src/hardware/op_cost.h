// Time of one kernel on a device, from its compute demand (docs/compute-model.md):
//
//   t = t0 + max(t_compute, t_memory)          t0: the device's fixed cost per kernel
//   t_memory  = bytes / (B_mem * e_mem)
//   GEMM:  t_compute = min over the device's tiles (tm x tn) of
//            waves * 2 tm tn (k + k0) / (F_matrix[dtype] / units * e_matrix[dtype] * s * u(tm, tn))
//          waves = ceil(batch * ceil(m / tm) * ceil(n / tn) / units)       (wave quantization)
//          u = [I / (I + c)] / [I_max / (I_max + c)],  I = tm tn / (tm + tn)  (operand reuse of
//          the tile relative to the device's largest tile; k0 a tile's prologue and epilogue)
//          With no tiles: t_compute = flop / (F_matrix[dtype] * e_matrix * s).
//          s = sustained_matrix x pace: the share of the burst rate kept at the board power
//          limit, times the share the job's slowest GPU keeps of the typical one's (slowest_gpu.h)
//          With the exposed epilogue (o > 2 bytes an output value moves: 4 an fp32 write, 8 an
//          fp32 accumulation; e_out[dtype] given): W = batch m n (o - 2) / (B_mem * e_mem), the
//          output traffic beyond the 16-bit write the efficiencies were measured with, and
//            t_gemm = max(t_gemm(t_memory - W) + e_out[dtype] * W, t_memory)
//          (the main loop under the rest of the traffic, then what it does not hide of W; never
//          less than streaming every byte)
//   fused attention: t_compute = flop / (F_matrix[dtype] * e_attention * pace * n / (n + n_half))
//          n the key length: short sequences leave the kernel's pipeline part empty (flop counts
//          the work done: causal masking halves it, the backward pass does 2.5x the forward's);
//          the backward pass with its own e_attention and n_half (measured under sustained load)
//   other kernels: t_compute = flop / (F_vector[dtype] * e_vector)
//
// Small GEMMs fall short of peak through t0, the waves that leave units idle, the smaller tiles
// that fill more units but reuse operands less, and k0; large ones approach e_matrix.
#pragma once

#include "core/compute_demand.h"
#include "core/time.h"
#include "hardware/device.h"

namespace orrery {

// Throws InputError when the device has no rate for the demand's data type on the unit it needs.
Time kernel_time(const Device& device, const ComputeDemand& demand);

}  // namespace orrery
