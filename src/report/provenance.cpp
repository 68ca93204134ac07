#include "report/provenance.h"

namespace orrery {

nlohmann::ordered_json provenance_json(const Provenance& p) {
  using Json = nlohmann::ordered_json;
  Json dims = Json::array();
  for (const ProvenanceDimension& d : p.dimensions) {
    Json j = {{"name", d.name}, {"kind", d.kind}, {"size", d.size}};
    if (d.kind == "fat-tree") j["rails"] = d.rails;
    j["bandwidth_GBps"] = d.bandwidth_GBps;
    j["efficiency"] = d.efficiency;
    j["effective_GBps"] = d.bandwidth_GBps * d.efficiency;
    j["latency_us"] = d.latency_us;
    dims.push_back(std::move(j));
  }
  Json compute = Json::array();
  for (const std::string& device : p.devices)
    compute.push_back(device.empty() ? Json("times from the workload file") : Json(device));
  Json inputs = Json::array();
  for (const auto& [path, sha] : p.inputs)
    inputs.push_back({{"path", path}, {"sha256", sha}});
  return Json{{"orrery", p.orrery},
              {"command", p.command},
              {"cluster",
               {{"name", p.cluster},
                {"from", p.cluster_source},
                {"overrides", p.overrides},
                {"gpu", p.gpu},
                {"dimensions", std::move(dims)}}},
              {"compute", std::move(compute)},
              {"inputs", std::move(inputs)}};
}

}  // namespace orrery
