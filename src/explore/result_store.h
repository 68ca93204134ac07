// A search's results as an SQLite database (sqlite3 C API), schema in docs/explore.md:
//   meta(key, value)     what every point shares: the model, batch, sequence, dtype, ranking mode,
//                        the build and the cluster choices; a database of another search, or of
//                        another build, is refused
//   runs(id, started_utc, command, version, clusters)   one row per invocation
//   points(key, run, cluster, device, gpus, tp, pp, vpp, cp, ep, dp, mbs, micro_batches,
//          recompute, sequence_parallel, distributed_optimizer, zero, mode, status, error,
//          iteration_s, tokens_per_s, mfu, memory_gib, usd_per_mtoken, joules_per_token,
//          event_iteration_s, event_tokens_per_s, event_mfu, event_usd_per_mtoken,
//          event_joules_per_token, overlap_param_gather, tp_comm_overlap)
// Rows are written as they come, committed every 1,000 and on close, so an interrupted search
// keeps what it evaluated and a restart with the same database skips it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "explore/plan_point.h"
#include "explore/point_evaluation.h"

struct sqlite3;
struct sqlite3_stmt;

namespace orrery::explore {

struct RunInfo {
  std::string command;   // the command line
  std::string version;   // of Orrery
  std::string identity;  // the meta rows, one "key=value" per line, that must match to resume
  std::string clusters;  // the cluster choices' labels, comma-separated
};

class ResultStore {
 public:
  // Opens or creates the database and records the run; throws InputError when it cannot be
  // opened or holds another search (naming what differs).
  ResultStore(const std::string& path, const RunInfo& run);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  // The points stored by earlier runs: their figures, or nullopt for a point that failed.
  std::unordered_map<std::string, std::optional<PointFigures>> stored_points();

  // These two do not throw (worker threads call them): a failed write is kept for
  // throw_if_failed, and the rows after it are not written.
  void add(const std::string& key, const PlanPoint& point, const ClusterChoice& choice,
           const std::string& mode, const Evaluation& evaluation);
  void add_event(const std::string& key, const PointFigures& event);
  // Throws InputError naming the first write that failed, if any.
  void throw_if_failed() const;

 private:
  void exec(const std::string& sql);
  void check_identity(const RunInfo& run);
  void add_missing_columns();
  void step(sqlite3_stmt* statement);  // runs and resets it; records a failure
  void commit_every(int64_t rows);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* event_ = nullptr;
  int64_t run_id_ = 0;
  int64_t pending_ = 0;
  std::string path_;
  std::string failure_;  // the first failed write
};

}  // namespace orrery::explore
