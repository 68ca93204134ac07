#include "cluster/calculon_system.h"

#include <algorithm>
#include <map>

#include "core/json_fields.h"

namespace orrery {
namespace {

using nlohmann::json;

// Calculon's data type names and Orrery's.
const std::map<std::string, DType>& datatypes() {
  static const std::map<std::string, DType> types = {{"float8", DType::FP8},
                                                     {"float16", DType::FP16},
                                                     {"bfloat16", DType::BF16},
                                                     {"float32", DType::FP32}};
  return types;
}

// The efficiency of the largest operations in a Calculon table of [size, efficiency] rows (the
// row with the largest size): what the large GEMMs and streams of training reach.
double top_efficiency(const JsonFields& f, const json& table, const std::string& key) {
  if (!table.is_array() || table.empty())
    f.fail(key, "expected a list of [size, efficiency] rows, found " + table.dump());
  double size = -1, efficiency = 0;
  for (const json& row : table) {
    if (!row.is_array() || row.size() != 2 || !row[0].is_number() || !row[1].is_number() ||
        !(row[1].get<double>() > 0 && row[1].get<double>() <= 1))
      f.fail(key,
             "expected rows [size, efficiency] with efficiency in (0, 1], found " + row.dump());
    if (row[0].get<double>() > size) {
      size = row[0].get<double>();
      efficiency = row[1].get<double>();
    }
  }
  return efficiency;
}

// One engine ("matrix" or "vector"): its peak for every floating type, and its efficiency
// (per data type where the table is keyed by Calculon's type names).
void read_engine(const JsonFields& f, const json& root, const std::string& key,
                 std::map<DType, FlopRate>& peaks, double& efficiency,
                 std::map<DType, double>* by_type) {
  const json& engine = f.required(root, key);
  if (!engine.is_object()) f.fail(key, "expected an object with tflops and gflops_efficiency");
  const FlopRate peak = FlopRate::flop_per_second(f.number(engine, "tflops", 0, true, 1e9) * 1e12);
  for (const DType t : {DType::FP8, DType::FP16, DType::BF16, DType::TF32, DType::FP32})
    peaks[t] = peak;
  const json& table = f.required(engine, "gflops_efficiency");
  if (table.is_array()) {
    efficiency = top_efficiency(f, table, "gflops_efficiency");
    return;
  }
  if (!table.is_object() || table.empty())
    f.fail("gflops_efficiency", "expected a table or one table per data type");
  // A type the tables leave out takes the smallest of the listed types' efficiencies.
  efficiency = 1;
  for (const auto& [name, rows] : table.items()) {
    const auto type = datatypes().find(name);
    if (type == datatypes().end())
      f.fail(name, "expected a data type float8, float16, bfloat16 or float32");
    const double e = top_efficiency(f, rows, name);
    efficiency = std::min(efficiency, e);
    if (by_type) (*by_type)[type->second] = e;
  }
}

Device read_device(const JsonFields& f, const json& root, const std::string& name) {
  Device d;
  d.name = name;
  d.source = f.source();
  d.description = "the processor of Calculon's system " + f.source();
  read_engine(f, root, "matrix", d.matrix, d.matrix_efficiency, &d.matrix_efficiency_by_type);
  read_engine(f, root, "vector", d.vector, d.vector_efficiency, nullptr);
  const json& mem = f.required(root, "mem1");
  if (!mem.is_object()) f.fail("mem1", "expected an object with GiB, GBps and MB_efficiency");
  d.memory_capacity = static_cast<Bytes>(f.number(mem, "GiB", 0, true, 1e6) * 1073741824.0);
  d.memory_bandwidth = Bandwidth::bytes_per_second(f.number(mem, "GBps", 0, true, 1e6) * 1e9);
  d.memory_efficiency = top_efficiency(f, f.required(mem, "MB_efficiency"), "MB_efficiency");
  // Fused attention's matrix products run on the matrix engine as Calculon prices them.
  d.attention_efficiency = d.matrix_efficiency;
  d.attention_backward_efficiency = d.matrix_efficiency;
  return d;
}

// Network i: the first a switch, a second a fat-tree with one NIC per GPU.
Dimension read_network(const JsonFields& f, const json& net, size_t i, int64_t inner,
                       bool outermost, std::vector<std::string>& warnings) {
  if (!net.is_object()) f.fail("networks", "expected each network as an object");
  Dimension d;
  d.name = "network " + std::to_string(i);
  d.kind = i == 0 ? DimensionKind::Switch : DimensionKind::FatTree;
  const int64_t size = f.integer(net, "size", 1, Topology::kMaxCapacity);
  if (i > 0 && size % inner != 0)
    f.fail("size", "expected network " + std::to_string(i) + "'s size to be a multiple of " +
                       std::to_string(inner) + " (the GPUs of network " + std::to_string(i - 1) +
                       "), found " + std::to_string(size));
  d.size = outermost && i > 0 ? 0 : size / inner;
  if (d.kind == DimensionKind::FatTree) d.rails = inner;
  d.link_bandwidth =
      Bandwidth::bytes_per_second(f.number(net, "bandwidth", 1e-3, false, 1e6) * 1e9);
  d.efficiency = f.number(net, "efficiency", 0, true, 1);
  d.base_latency = Time::from_seconds(f.number(net, "latency", 0, false, 1));
  static const std::map<std::string, std::string> kIgnored = {
      {"ops", "Orrery times each collective by its algorithm over the links"},
      {"collective_minus1_scalar", "Orrery times each collective by its algorithm over the links"},
      {"must_be_filled", "Orrery places ranks by the cluster's placement order"},
      {"processor_usage", "compute beside collectives keeps its full rate on this device"}};
  for (const auto& item : net.items()) {
    if (item.key() == "size" || item.key() == "bandwidth" || item.key() == "efficiency" ||
        item.key() == "latency")
      continue;
    const auto why = kIgnored.find(item.key());
    warnings.push_back(
        f.source() + ": Calculon network " + std::to_string(i) + " key '" + item.key() +
        "' ignored: " + (why == kIgnored.end() ? "it has no counterpart in Orrery" : why->second));
  }
  return d;
}

}  // namespace

Cluster parse_calculon_system(const std::string& text, const std::string& source) {
  const JsonFields f(text, source, "Calculon's system JSON");
  const json root = f.load();
  Cluster c;
  c.source = source;
  c.name = "Calculon system " + source;
  c.description = "Calculon system read from " + source;
  c.gpu = c.name;
  c.device = read_device(f, root, c.name);
  const json& nets = f.required(root, "networks");
  if (!nets.is_array() || nets.empty() || nets.size() > 2)
    f.fail("networks", "expected a list of one or two networks, innermost first");
  std::vector<Dimension> dims;
  int64_t inner = 1;
  for (size_t i = 0; i < nets.size(); ++i) {
    dims.push_back(read_network(f, nets[i], i, inner, i + 1 == nets.size(), c.warnings));
    inner *= dims.back().size;
  }
  try {
    c.network = Topology(std::move(dims));
  } catch (const std::invalid_argument& e) {
    f.fail("networks", std::string("expected a consistent network: ") + e.what());
  }
  c.network.set_ideal_links(true);
  for (const auto& item : root.items()) {
    const std::string& key = item.key();
    if (key == "mem2")
      c.warnings.push_back(source +
                           ": Calculon system key 'mem2' ignored: offloading to a second "
                           "memory is not modelled");
    else if (key == "processing_mode" && item.value() != "roofline")
      c.warnings.push_back(source + ": Calculon system key 'processing_mode' " +
                           item.value().dump() +
                           " ignored: Orrery prices a kernel as the slower of its compute and "
                           "memory time (roofline)");
    else if (key != "matrix" && key != "vector" && key != "mem1" && key != "networks" &&
             key != "processing_mode")
      c.warnings.push_back(source + ": Calculon system key '" + key +
                           "' has no counterpart in Orrery; ignored");
  }
  return c;
}

}  // namespace orrery
