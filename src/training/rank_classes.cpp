#include "training/rank_classes.h"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "network/rank_placement.h"

namespace orrery {
namespace {

using Tokens = std::vector<int64_t>;

void put_shape(Tokens& out, const GroupShape& s) {
  out.push_back(s.ranks);
  for (const std::vector<int64_t>* v : {&s.span, &s.blocks, &s.fewest}) {
    out.push_back(static_cast<int64_t>(v->size()));
    out.insert(out.end(), v->begin(), v->end());
  }
  out.push_back(s.crosses_leaves);
}

// Per group (and the group of every rank, last): its members relative to its lowest, and shape.
std::vector<Tokens> group_tokens(const GraphProgram& program, const Topology& topology) {
  std::vector<Tokens> out;
  std::vector<int64_t> all(program.ranks.size());
  std::iota(all.begin(), all.end(), 0);
  for (size_t g = 0; g <= program.groups.size(); ++g) {
    const std::vector<int64_t>& members = g < program.groups.size() ? program.groups[g] : all;
    Tokens& t = out.emplace_back();
    for (const int64_t m : members)
      t.push_back(m - members.front());
    put_shape(t, shape_of(topology, members));
  }
  return out;
}

// The rank's task list with ranks renamed relative to it.
Tokens rank_tokens(const GraphProgram& program, const std::vector<Tokens>& groups,
                   const Topology& topology, int64_t rank) {
  const RankGraph& g = program.ranks[static_cast<size_t>(rank)];
  const auto n = static_cast<int64_t>(program.ranks.size());
  Tokens out;
  out.reserve(g.tasks.size() * 8 + g.deps.size());
  for (const GraphTask& t : g.tasks) {
    out.push_back(static_cast<int64_t>(t.kind));
    out.push_back(t.duration ? t.duration->ps() : -1);
    out.push_back(static_cast<int64_t>(t.bytes));
    if (t.has_demand) out.push_back(std::bit_cast<int64_t>(t.flop));
    if (t.kind == GraphTaskKind::Collective) {
      out.push_back(static_cast<int64_t>(t.collective));
      const Tokens& group = groups[t.group < 0 ? groups.size() - 1 : static_cast<size_t>(t.group)];
      out.push_back(static_cast<int64_t>(group.size()));
      out.insert(out.end(), group.begin(), group.end());
    } else if (t.kind == GraphTaskKind::Send || t.kind == GraphTaskKind::Recv) {
      out.push_back(((t.peer - rank) % n + n) % n);
      out.push_back(t.tag);
      const std::vector<int64_t> pair = {rank, t.peer};
      put_shape(out, shape_of(topology, pair));
    }
    out.push_back(t.deps_end - t.deps_begin);
    out.insert(out.end(), g.deps.begin() + t.deps_begin, g.deps.begin() + t.deps_end);
  }
  return out;
}

uint64_t hash_of(const Tokens& t) {
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(t.data()), t.size() * sizeof(int64_t)));
}

// Whether every class is closed (see the header).
bool closed(const GraphProgram& program, const std::vector<int32_t>& class_of) {
  const auto same = [&](int64_t a, int64_t b) {
    return class_of[static_cast<size_t>(a)] == class_of[static_cast<size_t>(b)];
  };
  std::vector<std::map<int64_t, int64_t>> uses(program.groups.size() + 1);  // rank -> collectives
  for (size_t r = 0; r < program.ranks.size(); ++r)
    for (const GraphTask& t : program.ranks[r].tasks) {
      if (t.kind == GraphTaskKind::Send || t.kind == GraphTaskKind::Recv) {
        if (!same(static_cast<int64_t>(r), t.peer)) return false;
      } else if (t.kind == GraphTaskKind::Collective) {
        ++uses[t.group < 0 ? program.groups.size() : static_cast<size_t>(t.group)]
              [static_cast<int64_t>(r)];
      }
    }
  for (size_t g = 0; g < uses.size(); ++g) {
    if (uses[g].empty()) continue;
    const auto members = g < program.groups.size() ? static_cast<int64_t>(program.groups[g].size())
                                                   : static_cast<int64_t>(program.ranks.size());
    if (static_cast<int64_t>(uses[g].size()) != members) return false;
    const auto [first_rank, count] = *uses[g].begin();
    for (const auto& [rank, n] : uses[g])
      if (n != count || !same(rank, first_rank)) return false;
  }
  return true;
}

// Splits classes until every rank of a class sees its peers, message by message, in the same
// classes, and the members of each group it uses in the same classes (colour refinement: a
// pipeline's middle stages are alike but their neighbours are not).
std::vector<int32_t> refine(const GraphProgram& program, std::vector<int32_t> class_of) {
  size_t classes = 0;
  while (true) {
    std::map<std::vector<int32_t>, int32_t> group_index;  // members' sorted classes -> id
    std::vector<int32_t> group_id(program.groups.size() + 1);
    for (size_t g = 0; g <= program.groups.size(); ++g) {
      std::vector<int32_t> members;
      if (g < program.groups.size())
        for (const int64_t m : program.groups[g])
          members.push_back(class_of[static_cast<size_t>(m)]);
      else
        members = class_of;
      std::sort(members.begin(), members.end());
      group_id[g] =
          group_index.try_emplace(members, static_cast<int32_t>(group_index.size())).first->second;
    }
    std::map<std::vector<int32_t>, int32_t> index;
    std::vector<int32_t> next(class_of.size());
    for (size_t r = 0; r < program.ranks.size(); ++r) {
      std::vector<int32_t> signature = {class_of[r]};
      for (const GraphTask& t : program.ranks[r].tasks)
        if (t.kind == GraphTaskKind::Send || t.kind == GraphTaskKind::Recv)
          signature.push_back(class_of[static_cast<size_t>(t.peer)]);
        else if (t.kind == GraphTaskKind::Collective)
          signature.push_back(
              -1 - group_id[t.group < 0 ? program.groups.size() : static_cast<size_t>(t.group)]);
      next[r] =
          index.try_emplace(std::move(signature), static_cast<int32_t>(index.size())).first->second;
    }
    class_of = std::move(next);
    if (index.size() == classes) return class_of;
    classes = index.size();
  }
}

// Whether every message's peer, at the same offset from every rank of a class, lies in one class.
bool consistent_peers(const GraphProgram& program, const RankClasses& c) {
  const auto n = static_cast<int64_t>(program.ranks.size());
  for (size_t r = 0; r < program.ranks.size(); ++r) {
    const int64_t rep = c.representatives[static_cast<size_t>(c.class_of[r])];
    for (const GraphTask& t : program.ranks[r].tasks) {
      if (t.kind != GraphTaskKind::Send && t.kind != GraphTaskKind::Recv) continue;
      const int64_t d = t.peer - static_cast<int64_t>(r);
      if (c.class_of[static_cast<size_t>(t.peer)] !=
          c.class_of[static_cast<size_t>(((rep + d) % n + n) % n)])
        return false;
    }
  }
  return true;
}

}  // namespace

RankClasses every_rank(size_t ranks) {
  RankClasses out;
  out.representatives.resize(ranks);
  std::iota(out.representatives.begin(), out.representatives.end(), 0);
  out.class_of.resize(ranks);
  std::iota(out.class_of.begin(), out.class_of.end(), 0);
  return out;
}

RankClasses rank_classes(const GraphProgram& program, const Topology& topology) {
  const auto n = static_cast<int64_t>(program.ranks.size());
  const std::vector<Tokens> groups = group_tokens(program, topology);
  RankClasses out;
  out.class_of.assign(static_cast<size_t>(n), -1);
  std::unordered_multimap<uint64_t, int32_t> by_hash;
  std::vector<Tokens> reps;
  for (int64_t r = 0; r < n; ++r) {
    Tokens t = rank_tokens(program, groups, topology, r);
    const uint64_t h = hash_of(t);
    int32_t found = -1;
    for (auto [it, end] = by_hash.equal_range(h); it != end && found < 0; ++it)
      if (reps[static_cast<size_t>(it->second)] == t) found = it->second;
    if (found < 0) {
      found = static_cast<int32_t>(reps.size());
      reps.push_back(std::move(t));
      by_hash.emplace(h, found);
      out.representatives.push_back(r);
    }
    out.class_of[static_cast<size_t>(r)] = found;
  }
  if (static_cast<int64_t>(out.representatives.size()) == n) return out;
  out.class_of = refine(program, std::move(out.class_of));
  std::vector<int32_t> renumber(static_cast<size_t>(n), -1);
  out.representatives.clear();
  for (int64_t r = 0; r < n; ++r) {  // classes numbered by their lowest rank, its representative
    int32_t& c = renumber[static_cast<size_t>(out.class_of[static_cast<size_t>(r)])];
    if (c < 0) {
      c = static_cast<int32_t>(out.representatives.size());
      out.representatives.push_back(r);
    }
    out.class_of[static_cast<size_t>(r)] = c;
  }
  if (static_cast<int64_t>(out.representatives.size()) == n) return out;
  out.closed = closed(program, out.class_of);
  out.collapsed = out.closed || consistent_peers(program, out);
  return out.collapsed ? out : every_rank(static_cast<size_t>(n));
}

}  // namespace orrery
