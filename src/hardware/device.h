// An accelerator as the compute cost model sees it (units in the types):
// - peak arithmetic rates per data type on its matrix units (tensor cores, systolic arrays) and on
//   its vector units (CUDA cores, SIMD lanes), dense, in FLOP/s;
// - device memory bandwidth (B/s) and capacity, on-chip cache, compute units (SMs);
// - calibrated efficiencies that turn peaks into achieved rates, the fixed cost of a kernel, and
//   the GEMM tile shapes whose waves over the compute units quantize GEMM time.
// Read from YAML (schema in docs/compute-model.md) or taken from a preset
// (data/presets/devices/).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/bandwidth.h"
#include "core/dtype.h"
#include "core/flop_rate.h"
#include "core/time.h"

namespace orrery {

// Output tile of one GEMM thread block: m rows by n columns.
struct GemmTile {
  int64_t m = 128;
  int64_t n = 128;
};

struct Device {
  // The matrix efficiency of GEMMs on `type` operands.
  double matrix_efficiency_for(DType type) const {
    const auto it = matrix_efficiency_by_type.find(type);
    return it == matrix_efficiency_by_type.end() ? matrix_efficiency : it->second;
  }

  std::string name;
  std::vector<std::string> aliases;  // other names it answers to, e.g. "H100-SXM"
  std::string description;
  std::string source;  // "preset" or the file it was read from

  int64_t compute_units = 1;         // streaming multiprocessors / cores
  std::map<DType, FlopRate> matrix;  // dense peak on the matrix units, per operand type
  std::map<DType, FlopRate> vector;  // peak on the vector units, per data type
  Bandwidth memory_bandwidth;        // device memory (HBM/DRAM)
  Bytes memory_capacity = 0;         // device memory size
  Bytes cache = 0;                   // last-level on-chip cache or SRAM

  // Calibrated (see the preset files for the measurements each comes from).
  double matrix_efficiency = 1;  // fraction of matrix peak the best GEMM tile reaches in a burst
  // Per operand type where it differs (FP8 GEMMs sustain a smaller share of their peak).
  std::map<DType, double> matrix_efficiency_by_type;
  double vector_efficiency = 1;  // fraction of vector peak element-wise kernels sustain
  double memory_efficiency = 1;  // fraction of memory bandwidth streaming kernels sustain
  Time kernel_overhead;          // fixed cost of every kernel (launch, ramp-up, tail)
  // Under sustained load (training) a GPU runs at its board power limit, at a lower clock than in
  // the short benchmarks the matrix efficiencies come from: GEMMs keep this fraction of their
  // burst rate.
  double sustained_matrix = 1;
  // GPUs of this kind held at their power limit differ in clock: the coefficient of variation
  // (standard deviation over mean) of their sustained matrix rate (hardware/slowest_gpu.h).
  double rate_spread = 0;
  // The share of the matrix rate (GEMMs, fused attention) this job's GPUs keep: a job prices its
  // compute on a copy whose pace is that of its slowest GPU (slowest_gpu_pace); 1 for one GPU.
  double pace = 1;
  // Fused attention sustains attention_efficiency of the matrix peak on long sequences, and half
  // of that at a key length of attention_half_sequence tokens (op_cost.h).
  double attention_efficiency = 1;
  int64_t attention_half_sequence = 0;
  // The backward pass, the same way (its FLOPs count 2.5 times the forward's).
  double attention_backward_efficiency = 1;
  int64_t attention_backward_half_sequence = 0;
  // Beside a collective that holds c of the U compute units, compute runs (1 + this) U / (U - c)
  // times slower (training/sm_contention.h): what GEMM kernels sized for every unit lose on top
  // of the units held. 0: only the held units count.
  double contention_overhead = 0;
  // Per operand type: the share of a GEMM's output traffic beyond a 16-bit write (an fp32 output,
  // the read of the fp32 buffer it accumulates into) that runs after its main loop instead of
  // under it. The matrix efficiencies come from GEMMs with a 16-bit output. Absent: 0 (hidden).
  std::map<DType, double> exposed_epilogue_by_type;

  // Board power (W): the rated maximum (TDP; 0 when not known) and idle (negative when not known).
  double tdp_watts = 0;
  double idle_watts = -1;

  // GEMM tiling; no tiles: an ideal roofline without wave quantization.
  std::vector<GemmTile> gemm_tiles;
  double tile_reuse = 16;       // c: tile efficiency grows as intensity / (intensity + c)
  int64_t tile_k_overhead = 0;  // k0: a tile's prologue and epilogue, in equivalent k steps
  int64_t max_split_k = 1;      // most thread blocks one output tile's k may be split among
};

}  // namespace orrery
