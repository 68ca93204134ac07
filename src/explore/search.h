// A design-space search from start to answer: enumerate the space, prune it (pruning.h), evaluate
// what survives through scenario/ on worker threads in the ranking mode, keep the best and the
// Pareto front as points stream by (and store every point when given a database), then re-check
// the best in event mode and order them by the event figure.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "explore/plan_point.h"
#include "explore/pruning.h"
#include "explore/ranking.h"
#include "explore/result_store.h"
#include "explore/search_space.h"
#include "models/model_spec.h"
#include "training/simulation_mode.h"

namespace orrery::explore {

struct SearchRequest {
  ModelSpec spec;
  int64_t gbs = 0;
  ParallelPlan base;  // seq, dtype, attention, p2p: the knobs no axis varies
  PlanAxes axes;
  std::vector<ClusterChoice> clusters;
  Objective objective = Objective::Time;
  size_t top = 10;
  size_t recheck = 10;                                  // of the best, re-checked in event mode
  SimulationMode rank_by = SimulationMode::Analytical;  // or Event
  int threads = 1;
  // Called with the fraction of this process's evaluations done, from whichever thread finished
  // one (under a lock); empty: no progress reported.
  std::function<void(double)> progress;
};

struct SearchCounts {
  int64_t space = 0;  // plans enumerated, on every cluster choice
  std::array<int64_t, kPruneRules.size()> pruned{};
  int64_t evaluated = 0;  // this run, in the ranking mode (failed ones included)
  int64_t failed = 0;     // refused by scenario/ (InputError)
  int64_t reused = 0;     // taken from the database instead of evaluated
  int64_t rechecked = 0;  // in event mode
};

struct SearchResult {
  SearchCounts counts;
  std::vector<RankedPoint> best;    // the re-checked first, by their event score; then the rest
  std::vector<RankedPoint> pareto;  // time vs cost, in the ranking mode
  std::string first_error;          // of a failed point, for the report
  double seconds = 0;               // wall time of the ranking pass
  std::vector<int64_t> per_rank;    // points each rank evaluated (a distributed search)
};

// One evaluation of a survivor, by its index in the enumeration, as processes exchange them.
struct IndexedEvaluation {
  size_t index = 0;
  Evaluation evaluation;
};

// How a search is split over processes (the orrery-mpi executable implements it with MPI, so
// explore/ does not link MPI). Every process enumerates and prunes the same space; process `rank`
// evaluates the survivors i with i % ranks == rank; rank 0 gathers them, stores and ranks them,
// re-checks the best and answers.
class Distribution {
 public:
  virtual ~Distribution() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Rank 0's answer to "may the search go on?" (its database opened), sent to every rank.
  virtual bool share_go(bool go) = 0;
  // Rank 0's flags (1: stored by an earlier run, not to evaluate), sent to every rank.
  virtual void share_done(std::vector<char>& done) = 0;
  // Every rank's evaluations, on rank 0 (its own included); empty elsewhere.
  virtual std::vector<IndexedEvaluation> gather(const std::vector<IndexedEvaluation>& mine) = 0;
};

// The plans of the request's space that survive pruning, in enumeration order, with the space
// and each rule's removals counted in `counts`; throws InputError naming the last rule that
// removed anything when none survive.
std::vector<PlanPoint> survivors_of(const SearchRequest& request, SearchCounts& counts);

// Throws InputError before any evaluation for a request that cannot be answered: an objective
// whose figure some cluster choice lacks, or a space that pruning empties (naming the rule that
// removed the last plan). With a distribution, only rank 0's answer is filled (and only rank 0
// may be given a store).
SearchResult run_search(const SearchRequest& request, ResultStore* store,
                        Distribution* distribution = nullptr);

}  // namespace orrery::explore
