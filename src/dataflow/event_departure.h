// How the event simulator's answer for a converted DFModel problem relates to DFModel's own
// formula, as warnings that quantify the departure and say where it comes from.
//
// The conversion (dataflow/workload_conversion.h) keeps every configuration's compute and memory
// time; what differs is how the pieces around it are priced:
//   * pipeline bubble: DFModel multiplies II by phi = 1 + (PP - 1) / (n_mb * c) with
//     c = L_s - 1 for L_s >= 2 layers per stage, so with L_s >= 3 its bubble is 1 / (L_s - 1) of
//     the (PP - 1) whole-stage slots a pipeline schedule idles;
//   * overlap: with perfect (or compute-memory) overlap DFModel hides collectives under compute,
//     II_c = max(C, M, N); the event simulator runs a phase's collective after its compute;
//   * the gradient all-reduce: DFModel prices it per sample inside II (so phi scales it), the
//     event simulator once per iteration, bucketed behind the last backward pass;
//   * stage-to-stage transfers: DFModel adds T_p2p = 2 h S w L / beta once per iteration, the
//     event simulator sends h S w b bytes each way per micro-batch and exposes what the schedule
//     waits for.
// Forward-only (inference) graphs are not converted at all (workload_conversion.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dataflow/evaluation.h"
#include "workload/dataflow_problem.h"
#include "workload/result.h"

namespace orrery {

// Above this relative difference of the iteration times the departure is reported.
inline constexpr double kMaterialDeparture = 0.05;

// The departures that can be told from DFModel's evaluation alone (before any simulation):
// the pipeline factor with L_s >= 3, and collectives that overlap hides. One sentence each, with
// DFModel's figure and the size of the departure; empty when neither applies.
std::vector<std::string> expected_event_departures(const DataflowProblem& problem,
                                                   const Evaluation& dfmodel);

// After an event (or flow) simulation of the converted problem: when its iteration time differs
// from DFModel's by more than kMaterialDeparture, one sentence with both figures and, for every
// part of the breakdown that differs by more than 1 % of DFModel's iteration, both values and why.
std::optional<std::string> event_departure(const DataflowProblem& problem,
                                           const Evaluation& dfmodel, const Result& event);

}  // namespace orrery
