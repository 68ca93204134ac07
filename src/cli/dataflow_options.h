// Wiring for DFModel dataflow problems, shared by `orrery simulate` and `orrery convert`: the
// options that select DFModel's version-dependent semantics and bound the search, and reading and
// solving a file.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/diagnostics.h"
#include "dataflow/dataflow_graph.h"
#include "dataflow/mapping_search.h"
#include "workload/dataflow_problem.h"

namespace orrery {

struct DataflowArgs {
  std::string execution;  // empty: the file's; "kbk", "dataflow" or "both"
  int allreduce_factor = 2;
  int staging_buffers = 1;
  size_t top = 5;
  std::optional<int64_t> threads;
  std::optional<double> time_limit_s;
};

void add_dataflow_options(CLI::App& command, DataflowArgs& args);

struct SolvedDataflow {
  DataflowProblem problem;
  DataflowGraph graph;
  SearchOutcome outcome;
  ModelOptions model;  // the search's, to evaluate its other candidates the same way
};

// Reads, validates and evaluates or searches the file (content already read); `progress`, when
// given, hears how far the search is (SearchOptions::progress).
SolvedDataflow solve_dataflow_file(const std::string& path, const std::string& content,
                                   const DataflowArgs& args, Diagnostics& diagnostics,
                                   const std::function<void(double)>& progress = nullptr);

}  // namespace orrery
