#include "network/link_graph.h"

#include <algorithm>
#include <stdexcept>

namespace orrery {

LinkGraph::LinkGraph(const Topology& topology, int64_t gpus) : topology_(topology), gpus_(gpus) {
  if (const auto cap = topology.capacity(); cap && gpus > *cap)
    throw std::invalid_argument(std::to_string(gpus) + " GPUs do not fit the network (" +
                                std::to_string(*cap) + ")");
  // Links exist for the positions the GPUs occupy: a slice of a torus closes into a torus of its
  // own extent (optical circuit switches do this for TPU slices), a switch has the ports in use.
  int64_t positions = 1;
  for (size_t d = 0; d < topology.size(); ++d) {
    const int64_t below = topology.positions_below(d);
    const int64_t used = (gpus + below - 1) / below;
    extent_.push_back(topology[d].size == 0 ? used : std::min(topology[d].size, used));
    positions *= extent_.back();
  }
  const int64_t all = positions;  // GPUs including the unused tail of the last block
  int64_t below = 1;              // positions of the dimensions inside d, as laid out here
  for (size_t d = 0; d < topology.size(); ++d) {
    const Dimension& dim = topology[d];
    Family f;
    f.base = static_cast<LinkId>(capacity_.size());
    const double cap = dim.effective().in_bytes_per_second();
    switch (dim.kind) {
      case DimensionKind::Switch:
      case DimensionKind::Ring:
        capacity_.insert(capacity_.end(), static_cast<size_t>(2 * all), cap);
        break;
      case DimensionKind::Mesh:
        capacity_.insert(capacity_.end(), static_cast<size_t>(all * (extent_[d] - 1)), cap);
        break;
      case DimensionKind::FatTree: {
        // One server per position of this dimension and of the ones outside it.
        f.servers = all / below;
        const int64_t per_leaf = dim.servers_per_leaf > 0 ? dim.servers_per_leaf : f.servers;
        f.pods = (f.servers + per_leaf - 1) / per_leaf;
        f.spines = per_leaf;
        const int64_t rails = topology.rail_groups(d);
        const double nic = topology.nic_bandwidth(d).in_bytes_per_second();
        capacity_.insert(capacity_.end(), static_cast<size_t>(2 * f.servers * rails), nic);
        capacity_.insert(capacity_.end(), static_cast<size_t>(2 * rails * f.pods * f.spines),
                         nic / dim.oversubscription);
        break;
      }
    }
    f.count = static_cast<LinkId>(capacity_.size()) - f.base;
    family_.push_back(f);
    below *= extent_[d];
  }
}

int64_t LinkGraph::rank_of(const std::vector<int64_t>& coords) const {
  int64_t rank = 0, stride = 1;
  for (size_t d = 0; d < coords.size(); ++d) {
    rank += coords[d] * stride;
    stride *= extent_[d];
  }
  return rank;
}

int64_t LinkGraph::server_of(size_t d, const std::vector<int64_t>& coords) const {
  int64_t server = 0, stride = 1;
  for (size_t j = d; j < coords.size(); ++j) {
    server += coords[j] * stride;
    stride *= extent_[j];
  }
  return server;
}

int64_t LinkGraph::rail_of(size_t d, const std::vector<int64_t>& coords) const {
  // The GPU's index inside its server (the dimensions inside d at their full sizes).
  int64_t local = 0, stride = 1;
  for (size_t j = 0; j < d; ++j) {
    local += coords[j] * stride;
    stride *= topology_[j].size;
  }
  return topology_.rail_of(d, local);
}

Time LinkGraph::route(int64_t src, int64_t dst, uint64_t hash, std::vector<LinkId>& path) const {
  std::vector<int64_t> at = topology_.coordinates(src);
  const std::vector<int64_t> to = topology_.coordinates(dst);
  Time latency;
  for (size_t d = 0; d < topology_.size(); ++d) {
    if (at[d] == to[d]) continue;
    const Dimension& dim = topology_[d];
    const Family& f = family_[d];
    const int64_t here = rank_of(at);
    switch (dim.kind) {
      case DimensionKind::Switch:
        path.push_back(f.base + static_cast<LinkId>(2 * here));
        at[d] = to[d];
        path.push_back(f.base + static_cast<LinkId>(2 * rank_of(at) + 1));
        latency = std::max(latency, dim.latency);
        break;
      case DimensionKind::Mesh: {
        const int64_t peer = to[d] < at[d] ? to[d] : to[d] - 1;  // index among the other positions
        path.push_back(f.base + static_cast<LinkId>(here * (extent_[d] - 1) + peer));
        at[d] = to[d];
        latency = std::max(latency, dim.latency);
        break;
      }
      case DimensionKind::Ring: {
        const int64_t k = extent_[d];
        const int64_t ahead = ((to[d] - at[d]) % k + k) % k;
        // Equally short both ways: even positions go forward, odd ones back, which splits
        // symmetric traffic evenly over the two directions.
        const bool forward = ahead < k - ahead || (ahead == k - ahead && at[d] % 2 == 0);
        const int64_t hops = forward ? ahead : k - ahead;
        for (int64_t h = 0; h < hops; ++h) {
          path.push_back(f.base + static_cast<LinkId>(2 * rank_of(at) + (forward ? 0 : 1)));
          at[d] = ((at[d] + (forward ? 1 : -1)) % k + k) % k;
        }
        latency = std::max(latency, dim.latency * hops);
        break;
      }
      case DimensionKind::FatTree: {
        const int64_t rails = topology_.rail_groups(d);
        const int64_t rail = rail_of(d, at);
        const int64_t from_server = server_of(d, at);
        at[d] = to[d];
        const int64_t to_server = server_of(d, at);
        const int64_t per_leaf = dim.servers_per_leaf > 0 ? dim.servers_per_leaf : f.servers;
        const LinkId nics = f.base, uplinks = f.base + static_cast<LinkId>(2 * f.servers * rails);
        path.push_back(nics + static_cast<LinkId>(2 * (from_server * rails + rail)));
        const int64_t from_leaf = rail * f.pods + from_server / per_leaf;
        const int64_t to_leaf = rail * f.pods + to_server / per_leaf;
        if (from_leaf != to_leaf) {
          const auto spine = static_cast<int64_t>(hash % static_cast<uint64_t>(f.spines));
          path.push_back(uplinks + static_cast<LinkId>(2 * (from_leaf * f.spines + spine)));
          path.push_back(uplinks + static_cast<LinkId>(2 * (to_leaf * f.spines + spine) + 1));
        }
        path.push_back(nics + static_cast<LinkId>(2 * (to_server * rails + rail) + 1));
        latency = std::max(latency, dim.latency);
        break;
      }
    }
  }
  return latency;
}

LinkId LinkGraph::switch_port(size_t d, int64_t gpu, bool up) const {
  return family_.at(d).base + static_cast<LinkId>(2 * gpu + (up ? 0 : 1));
}

std::string LinkGraph::link_name(LinkId link) const {
  for (size_t d = 0; d < family_.size(); ++d) {
    const Family& f = family_[d];
    if (link < f.base || link >= f.base + f.count) continue;
    const Dimension& dim = topology_[d];
    const int64_t i = link - f.base;
    switch (dim.kind) {
      case DimensionKind::Switch:
        return dim.name + (i % 2 ? " down to gpu " : " up from gpu ") + std::to_string(i / 2);
      case DimensionKind::Ring:
        return dim.name + " gpu " + std::to_string(i / 2) + (i % 2 ? " to previous" : " to next");
      case DimensionKind::Mesh:
        return dim.name + " gpu " + std::to_string(i / (extent_[d] - 1)) + " link " +
               std::to_string(i % (extent_[d] - 1));
      case DimensionKind::FatTree: {
        const int64_t rails = topology_.rail_groups(d);
        const int64_t nic_links = 2 * f.servers * rails;
        if (i < nic_links) {
          const int64_t nic = i / 2;
          return dim.name + " server " + std::to_string(nic / rails) + " rail " +
                 std::to_string(nic % rails) + (i % 2 ? " NIC down" : " NIC up");
        }
        const int64_t j = (i - nic_links) / 2;
        const int64_t leaf = j / f.spines;
        return dim.name + " leaf " + std::to_string(leaf) +
               (i % 2 ? " from spine " : " to spine ") + std::to_string(j % f.spines);
      }
    }
  }
  return "link " + std::to_string(link);
}

}  // namespace orrery
