#include "formats/workload_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "formats/dfmodel_reader.h"
#include "formats/simai_text.h"

namespace orrery {

std::vector<std::string_view> workload_format_names() {
  return {"simai", "dfmodel"};
}

std::optional<WorkloadFormat> parse_workload_format(std::string_view name) {
  if (name == "simai") return WorkloadFormat::SimaiText;
  if (name == "dfmodel") return WorkloadFormat::Dfmodel;
  return std::nullopt;
}

std::string_view to_string(WorkloadFormat format) {
  switch (format) {
    case WorkloadFormat::SimaiText:
      return "simai";
    case WorkloadFormat::Dfmodel:
      return "dfmodel";
  }
  return "?";
}

std::optional<WorkloadFormat> detect_workload_format(std::string_view content) {
  if (looks_like_simai_text(content)) return WorkloadFormat::SimaiText;
  if (looks_like_dfmodel_text(content) || looks_like_dfmodel_binary(content))
    return WorkloadFormat::Dfmodel;
  return std::nullopt;
}

std::string read_workload_content(const std::string& path) {
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
  const std::string content = read_workload_content(path);

  const auto format = forced ? forced : detect_workload_format(content);
  if (!format)
    throw InputError({path, 1},
                     "expected a workload in a known format (simai: SimAI/AICB layer-wise text; "
                     "dfmodel: DFModel DSE protobuf text or binary); use --format to name it");
  switch (*format) {
    case WorkloadFormat::SimaiText:
      return read_simai_text(path, content, diagnostics);
    case WorkloadFormat::Dfmodel:
      throw InputError({path, 0},
                       "a DFModel file is a dataflow problem, not a layer-wise workload; "
                       "`orrery simulate` evaluates it and `orrery convert` turns it into one");
  }
  throw InputError({path, 0}, "unsupported format");
}

}  // namespace orrery
