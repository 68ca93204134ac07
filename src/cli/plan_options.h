// The --model option and the parallel-plan flags of a prediction from a model description
// (`orrery simulate --model`, `orrery convert --model`), and the ModelScenario they describe.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace orrery {

// The parallel plan of a --model run (flags as Megatron-LM spells them).
struct PlanArgs {
  int64_t tp = 1, pp = 1, cp = 1, vpp = 1, mbs = 1;
  std::optional<int64_t> gbs, seq, first_stage_layers, last_stage_layers;
  std::string recompute = "none", attention = "flash", dtype = "bf16", p2p = "auto";
  bool sequence_parallel = false, distributed_optimizer = false, fp8_param_gather = false,
       overlap_param_gather = false, no_align_param_gather = false, tp_comm_overlap = false;
  int zero = 0;
  std::optional<double> train_tokens;
  std::vector<std::string> without;      // terms left out (validation ablations)
  std::string plan_file;                 // Calculon's execution JSON (--plan)
  bool given = false;                    // some plan flag was given
  std::string given_flag;                // the first one, for the error without --model
  std::vector<std::string> given_flags;  // all of them: they override the --plan file
};

// What reading a Calculon model or --plan file adds beside the ModelScenario.
struct PlanNotes {
  std::vector<std::string> warnings;  // defaults taken, keys with no counterpart, overrides
  std::optional<bool> overlap;        // --plan's data_par_overlap
};

// The cluster of a --model run without --cluster.
constexpr const char* kModelCluster = "hgx-h100";

// Registers --model and the plan flags; returns the plan flags (given without --model, an error).
std::vector<CLI::Option*> add_plan_options(CLI::App& cmd, std::string& model, PlanArgs& plan);

// Records in `plan` which plan flags the user gave, after parsing.
void note_given_plan_flags(const std::vector<CLI::Option*>& flags, PlanArgs& plan);

// The model scenario the flags describe; nullopt without --model (then a plan flag is an error).
// --ep and --gpus are the subcommand's own options. What a Calculon file adds goes to `notes`.
std::optional<ModelScenario> model_scenario(const std::string& model, const PlanArgs& plan,
                                            std::optional<int64_t> ep, std::optional<int64_t> gpus,
                                            PlanNotes& notes);

}  // namespace orrery
