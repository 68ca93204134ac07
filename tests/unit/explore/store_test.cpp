// The SQLite store: a restart skips the points done, a database of another search is refused, and
// the points read back are the ones written.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <filesystem>

#include "core/diagnostics.h"
#include "explore/result_query.h"
#include "explore/search.h"
#include "models/model_file.h"

namespace orrery::explore {
namespace {

namespace fs = std::filesystem;

SearchRequest small_request(const std::string& model) {
  SearchRequest r;
  r.spec = load_model(model);
  r.gbs = 64;
  r.base.seq = r.spec.seq;
  ClusterAxes clusters;
  clusters.clusters = {"dgx-a100"};
  clusters.gpus = {16};
  clusters.devices = {""};
  clusters.gpus_per_server = {std::nullopt};
  clusters.nic_busbw = clusters.nvlink_busbw = {std::nullopt};
  apply_varies({parse_vary("tp=1,2,4"), parse_vary("pp=1,2"), parse_vary("vpp=1"),
                parse_vary("mbs=1"), parse_vary("recompute=none"), parse_vary("zero=1")},
               r.axes, clusters);
  r.clusters = cluster_choices(clusters);
  r.top = 2;
  r.recheck = 1;
  r.threads = 2;
  return r;
}

RunInfo info(const SearchRequest& r) {
  return {"orrery explore (test)", "test", "model=" + r.spec.name + "\ngbs=64", "dgx-a100 gpus=16"};
}

struct TempDb {
  fs::path path =
      fs::temp_directory_path() /
      ("orrery_explore_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       std::to_string(::getpid()) + ".sqlite");
  ~TempDb() { fs::remove(path); }
};

// tp {1, 2, 4} x pp {1, 2} on 16 GPUs, sp on with tp > 1 (the axis defaults to both): tp 1 has
// one sequence-parallel choice, tp 2 and 4 two, so 2 + 4 + 4 = 10 plans, all fitting.
TEST(Store, RestartSkipsWhatIsDone) {
  TempDb db;
  const SearchRequest r = small_request("gpt3-1.3b");
  SearchResult first;
  {
    ResultStore store(db.path.string(), info(r));
    first = run_search(r, &store);
  }
  EXPECT_EQ(first.counts.space, 10);
  EXPECT_EQ(first.counts.evaluated, 10);
  SearchResult second;
  {
    ResultStore store(db.path.string(), info(r));
    second = run_search(r, &store);
  }
  EXPECT_EQ(second.counts.evaluated, 0);
  EXPECT_EQ(second.counts.reused, 10);
  ASSERT_EQ(first.best.size(), second.best.size());
  EXPECT_EQ(point_key(first.best[0].point, r.clusters[0]),
            point_key(second.best[0].point, r.clusters[0]));

  const PointTable all = query_points(db.path.string(), "", "iteration_s", 0);
  EXPECT_EQ(all.rows.size(), 10u);
  const PointTable tp2 = query_points(db.path.string(), "tp = 2", "iteration_s", 0);
  EXPECT_EQ(tp2.rows.size(), 4u);
  // The event recheck of the best is stored beside its analytical figures.
  const PointTable rechecked =
      query_points(db.path.string(), "event_iteration_s IS NOT NULL", "iteration_s", 0);
  EXPECT_EQ(rechecked.rows.size(), 1u);
  EXPECT_THROW(query_points(db.path.string(), "", "no_such_column", 0), InputError);
  EXPECT_THROW(query_points(db.path.string(), "tp = = 2", "iteration_s", 0), InputError);
}

// A database written before the overlap-param-gather and tp-comm-overlap knobs (its points table
// without their columns) gets the columns when a search opens it: the old points read 0, the new
// ones their setting. The space above with overlap-param-gather {0, 1}: its 10 plans (ZeRO-1, dp
// 2 or more) twice, none with the tensor-parallel overlap (off unless varied).
TEST(Store, ADatabaseFromBeforeTheOverlapKnobGetsItsColumn) {
  TempDb db;
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.path.string().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "CREATE TABLE points(key TEXT PRIMARY KEY, run INTEGER, cluster TEXT, "
                         "device TEXT, gpus INTEGER, tp INTEGER, pp INTEGER, vpp INTEGER, "
                         "cp INTEGER, ep INTEGER, dp INTEGER, mbs INTEGER, micro_batches INTEGER, "
                         "recompute TEXT, sequence_parallel INTEGER, distributed_optimizer "
                         "INTEGER, zero INTEGER, mode TEXT, status TEXT, error TEXT, iteration_s "
                         "REAL, tokens_per_s REAL, mfu REAL, memory_gib REAL, usd_per_mtoken REAL, "
                         "joules_per_token REAL, event_iteration_s REAL, event_tokens_per_s REAL, "
                         "event_mfu REAL, event_usd_per_mtoken REAL, event_joules_per_token REAL);"
                         "INSERT INTO points(key, status, tp) VALUES('old', 'failed', 1);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  SearchRequest r = small_request("gpt3-1.3b");
  ClusterAxes unchanged;
  apply_varies({parse_vary("overlap-param-gather=0,1")}, r.axes, unchanged);
  SearchResult s;
  {
    ResultStore store(db.path.string(), info(r));
    s = run_search(r, &store);
  }
  EXPECT_EQ(s.counts.space, 20);
  EXPECT_EQ(
      query_points(db.path.string(), "overlap_param_gather = 1", "iteration_s", 0).rows.size(),
      10u);
  EXPECT_EQ(
      query_points(db.path.string(), "overlap_param_gather = 0", "iteration_s", 0).rows.size(),
      10u);
  EXPECT_EQ(query_points(db.path.string(), "tp_comm_overlap = 0", "iteration_s", 0).rows.size(),
            20u);
  ASSERT_EQ(sqlite3_open(db.path.string().c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* old = nullptr;
  sqlite3_prepare_v2(raw,
                     "SELECT overlap_param_gather, tp_comm_overlap FROM points WHERE key = 'old'",
                     -1, &old, nullptr);
  ASSERT_EQ(sqlite3_step(old), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(old, 0), 0);
  EXPECT_EQ(sqlite3_column_int(old, 1), 0);
  sqlite3_finalize(old);
  sqlite3_close(raw);
}

TEST(Store, AnotherModelIsRefused) {
  TempDb db;
  const SearchRequest r = small_request("gpt3-1.3b");
  { ResultStore store(db.path.string(), info(r)); }
  const SearchRequest other = small_request("gpt3-2.7b");
  try {
    ResultStore store(db.path.string(), info(other));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model 'gpt3-1.3b'"), std::string::npos) << e.what();
  }
}

TEST(Store, NotADatabaseIsRefused) {
  EXPECT_THROW(query_points("/nonexistent/file.sqlite", "", "iteration_s", 0), InputError);
}

}  // namespace
}  // namespace orrery::explore
