#include "formats/workload_reader.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/chakra_et_reader.h"
#include "formats/dfmodel_reader.h"
#include "formats/neusight_table.h"
#include "formats/simai_text.h"
#include "formats/torchviz_dot.h"

namespace orrery {

std::vector<std::string_view> workload_format_names() {
  return {"simai", "dfmodel", "neusight", "torchviz", "chakra"};
}

std::optional<WorkloadFormat> parse_workload_format(std::string_view name) {
  if (name == "simai") return WorkloadFormat::SimaiText;
  if (name == "dfmodel") return WorkloadFormat::Dfmodel;
  if (name == "neusight") return WorkloadFormat::NeusightTable;
  if (name == "torchviz") return WorkloadFormat::TorchvizDot;
  if (name == "chakra") return WorkloadFormat::Chakra;
  return std::nullopt;
}

std::string_view to_string(WorkloadFormat format) {
  switch (format) {
    case WorkloadFormat::SimaiText:
      return "simai";
    case WorkloadFormat::Dfmodel:
      return "dfmodel";
    case WorkloadFormat::NeusightTable:
      return "neusight";
    case WorkloadFormat::TorchvizDot:
      return "torchviz";
    case WorkloadFormat::Chakra:
      return "chakra";
  }
  return "?";
}

std::optional<WorkloadFormat> detect_workload_format(std::string_view content) {
  if (looks_like_simai_text(content)) return WorkloadFormat::SimaiText;
  if (looks_like_dfmodel_text(content) || looks_like_dfmodel_binary(content))
    return WorkloadFormat::Dfmodel;
  if (looks_like_neusight_table(content)) return WorkloadFormat::NeusightTable;
  if (looks_like_torchviz_dot(content)) return WorkloadFormat::TorchvizDot;
  return std::nullopt;
}

std::string read_workload_content(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError({path, 0}, "expected a workload file, found a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError({path, 0}, std::string("cannot open workload: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string content = buffer.str();
  if (content.empty()) throw InputError({path, 0}, "expected a workload, found an empty file");
  return content;
}

Workload read_workload_file(const std::string& path, std::optional<WorkloadFormat> forced,
                            Diagnostics& diagnostics) {
  return read_workload_file(path, forced, ReaderOptions{}, diagnostics);
}

Workload read_workload_file(const std::string& path, std::optional<WorkloadFormat> forced,
                            const ReaderOptions& options, Diagnostics& diagnostics) {
  if (forced == WorkloadFormat::Chakra || (!forced && is_chakra_trace_path(path)))
    return read_chakra_traces(path, options, diagnostics);
  const std::string content = read_workload_content(path);

  const auto format = forced ? forced : detect_workload_format(content);
  if (!format)
    throw InputError({path, 1},
                     "expected a workload in a known format (simai: SimAI/AICB layer-wise text; "
                     "dfmodel: DFModel DSE protobuf text or binary; neusight: NeuSight operator "
                     "table; torchviz: torchviz autograd graph in DOT); use --format to name it");
  switch (*format) {
    case WorkloadFormat::SimaiText:
      return read_simai_text(path, content, diagnostics, options.simai_compat);
    case WorkloadFormat::Dfmodel:
      throw InputError({path, 0},
                       "a DFModel file is a dataflow problem, not a layer-wise workload; "
                       "`orrery simulate` evaluates it and `orrery convert` turns it into one");
    case WorkloadFormat::NeusightTable:
      return read_neusight_table(path, content, options, diagnostics);
    case WorkloadFormat::TorchvizDot:
      return read_torchviz_dot(path, content, options, diagnostics);
    case WorkloadFormat::Chakra:
      break;
  }
  throw InputError({path, 0}, "unsupported format");
}

}  // namespace orrery
