// A dataflow-mapping problem as DFModel states it: a graph of kernels joined by buffered edges
// (one transformer layer for LLMs), the system of chips it runs on, the cost tables, the run
// options and the solver limits. This is the IR that the DFModel reader fills and the dataflow
// model (src/dataflow/) evaluates and searches; it holds the file's values only, no timing.
//
// Units: bytes, GB/s (bytes per ns), GHz, dollars, watts, seconds. Values DFModel stores as 32-bit
// floats are widened to double here without rounding (e.g. freq 1.41 is 1.40999996662139892578).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace orrery {

enum class KernelVariant : uint8_t {
  GemmInputWeight,        // activation x weight
  GemmInputInput,         // activation x activation
  Elementwise,            // one input
  ElementwiseInputInput,  // two inputs
};

enum class KernelUnit : uint8_t { Systolic, Simd };

// Axis of a kernel's (batched) GEMM out[outer x M x N] = a[outer x M x K] * b[outer x K x N], used
// both for the tensor-parallel split (None = replicated) and for the tiled, streamed axis.
enum class TensorAxis : uint8_t { None, Outer, M, K, N };

enum class DataflowCollective : uint8_t {
  None,
  AllReduce,  // tensor-parallel all-reduce of the kernel's output
  AllToAll,
  AllGather,
  AllReducePeriodic,  // data-parallel gradient all-reduce, once per global batch
  PointToPoint,
  Broadcast,
};

struct DataflowKernel {
  std::string name;
  int64_t id = 0;
  int64_t line = 0;                // line of the kernel's block in its file (0 for binary files)
  int64_t topological_number = 0;  // as the file says (recomputed by the model)
  int64_t config = -1;             // -1: free; else pinned (KERNEL_BY_KERNEL ignores it)
  bool backward = false;
  KernelUnit unit = KernelUnit::Systolic;
  KernelVariant variant = KernelVariant::GemmInputWeight;

  int64_t outer = 1, m = 1, k = 1, n = 1;  // k is 1 for element-wise kernels
  double input1_bytes = 0;                 // full (unsharded) tensors, word size applied
  double input2_bytes = 0;
  double weight_bytes = 0;
  double output_bytes = 0;

  std::optional<TensorAxis> sharding;  // absent: to be chosen (tensor-parallel sharding search)
  TensorAxis tiling = TensorAxis::N;
  DataflowCollective collective = DataflowCollective::None;
  double collective_bytes = 0;
  DataflowCollective collective2 = DataflowCollective::None;  // second collective (HPL)
  double collective2_bytes = 0;

  int64_t shard_outer_m = 0, shard_k = 0, shard_n = 0;  // stage-2 output, 0 if absent
  double memory_bytes = 0;                              // extra explicit DRAM traffic per kernel
  int64_t num_input = 0;                                // multiplies the kernel's work when > 0
  bool skip_weight = false;
  bool use_effective_stage = false;
};

// The floating-point work of a DataflowKernel on a block of `rows` x `k` x `n` (the whole kernel:
// rows = outer * M; one chip's tile: its shard sizes), as DFModel counts it: 2 rows k n for a
// systolic (GEMM) kernel, rows n for an element-wise one, times num_input when it is set. The one
// definition of the formula, for the FLOP total, the time split and the tile's compute.
inline double dataflow_flop(const DataflowKernel& kernel, double rows, double k, double n) {
  const double work = kernel.num_input > 0 ? static_cast<double>(kernel.num_input) : 1.0;
  return kernel.unit == KernelUnit::Systolic ? 2.0 * rows * k * n * work : rows * n * work;
}
inline double dataflow_flop(const DataflowKernel& kernel) {
  return dataflow_flop(kernel, static_cast<double>(kernel.outer * kernel.m),
                       static_cast<double>(kernel.k), static_cast<double>(kernel.n));
}

struct DataflowEdge {
  int64_t id = 0;
  int64_t line = 0;
  int64_t from_id = 0, to_id = 0;                            // kernel ids (startIdx, endIdx)
  DataflowCollective collective = DataflowCollective::None;  // re-layout collective, if any
  double collective_bytes = 0;
  int64_t buffer_depth = 0;  // as the file says (recomputed by the model)
  double tensor_bytes = 0;   // as the file says (recomputed: the producer's output)
  double shard_tensor_bytes = 0;
  std::string from_name, to_name;  // as the file says
};

// The three basic interconnect dimensions of DFModel's topologies.
enum class LinkKind : uint8_t { Ring, Switch, FullMesh };

enum class ParallelRole : uint8_t { Unassigned, Tensor, Pipeline, Data };

struct TopologyDimension {
  LinkKind kind = LinkKind::Ring;
  int64_t size = 0;                              // chips along the dimension; 0: free
  double link_gbps = 0;                          // GB/s per link
  ParallelRole role = ParallelRole::Unassigned;  // Unassigned: free
};

struct DataflowSystem {
  int64_t chips = 0;
  int64_t cores = 0;
  int64_t systolic_width = 0, systolic_height = 0;
  double sram_bytes = 0;
  double freq_ghz = 0;
  int64_t pmu = 0;  // place-and-route mode units (not modelled)
  double link_latency = 0;
  double dram_gbps = 0;
  double dram_bytes = 0;
  double second_dram_gbps = 0, second_dram_bytes = 0;  // two-tier memory (not modelled)
  std::string topology;  // DFModel's message name: "r", "sw", "fc", "r_r", ..., "sw_sw_sw"
  std::vector<TopologyDimension> dimensions;  // x, y, z
  int64_t hbd = 0;                            // high-bandwidth-domain size (not modelled)
  int64_t line = 0;                           // of the system block
  int64_t topology_line = 0;                  // of the topology block (r_r, sw, ...)
};

struct DataflowCostTable {
  double link_price = 0;      // $ per GB/s of link
  double switch_price = 0;    // $ per GB/s per switch port
  double dram_price = 0;      // $ per GB/s of DRAM bandwidth
  double chip_price = 0;      // $ per chip
  double link_power[3] = {};  // W per GB/s of link, per dimension
  double switch_power = 0;    // W per GB/s per switch port
  double dram_power = 0;      // W per GB/s of DRAM bandwidth
  double chip_power = 0;      // W per chip
};

struct LlmShape {
  int64_t hidden = 0, head_dim = 0, heads = 0;
  int64_t seq_len = 0;
  int64_t layers = 0;
  int64_t global_batch = 0;
  int64_t micro_batch = 0;  // 0: free
  int64_t tile_size = 0;    // 0: free
  int64_t layers_in_graph = 0;
};

enum class ExecutionStyle : uint8_t { KernelByKernel, Dataflow };

enum class OverlapStyle : uint8_t {
  None,           // a configuration costs compute + memory + network
  Perfect,        // max(compute, memory, network)
  ComputeMemory,  // max(compute, memory) + network
};

struct DataflowRun {
  std::string workload_kind;  // "llm", "dlrm", "hpl", "fft", ... (only llm is modelled)
  std::optional<LlmShape> llm;
  ExecutionStyle style = ExecutionStyle::KernelByKernel;
  int64_t num_config = 0;  // DATAFLOW: at most this many configurations (0: one per kernel)
  OverlapStyle overlap = OverlapStyle::None;
  bool separate_rs_ag_for_ar = false;
  double compute_util = 0;  // > 0: util mode; 0: cycle model
  int64_t word_bytes = 2;
  int64_t line = 0;      // of the run block (execution or miscellany)
  int64_t llm_line = 0;  // of its llm block
};

struct SolverLimits {
  int64_t threads = 0;       // 0: all CPUs
  double gap = 0;            // relative optimality gap accepted
  int64_t time_limit_s = 0;  // 0: none
  int64_t line = 0;          // of the gurobi block (0: none in the file)
};

struct DataflowProblem {
  std::string name;                     // short name for reports (the file's stem)
  std::string source;                   // path it was read from
  std::vector<DataflowKernel> kernels;  // in file order
  std::vector<DataflowEdge> edges;      // in file order
  int64_t graph_line = 0;               // of the dataflow_graph block
  DataflowSystem system;
  DataflowCostTable cost;
  DataflowRun run;
  SolverLimits limits;
};

}  // namespace orrery
