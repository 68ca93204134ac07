// `orrery explore` and `orrery results` as a user runs them: the answer in text and JSON, the
// database and its restart, the CSV export, and one-line errors before any work.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include "cli_run.h"

namespace orrery::e2e {
namespace {

// GPT-3 1.3B on 16 H100s (hgx-h100 has a price per GPU-hour): tp {1, 2} x pp {1, 2}, sequence
// parallelism both ways with tp 2: 6 plans, all fitting (1.3e9 x 18 bytes = 24 GB at most).
const std::string kSmall =
    "explore --model gpt3-1.3b --cluster hgx-h100 --gpus 16 --gbs 64 --vary tp=1,2 --vary pp=1,2 "
    "--vary vpp=1 "
    "--vary mbs=1 --vary recompute=none --vary zero=1 --threads 2 --top 3 --recheck 2";

TEST(ExploreCli, TextAnswerShowsCountsBestAndPareto) {
  const CliRun r = orrery(kSmall + " --objective cost");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Space: 6 plans; pruned: divisibility 0, tp-nvlink 0, memory 0, "
                       "dominated 0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Evaluated 6 in analytical mode (0 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Best 3 by cost"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Pareto front"), std::string::npos) << r.out;
}

TEST(ExploreCli, JsonAnswer) {
  const CliRun r = orrery(kSmall + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["space"], 6);
  EXPECT_EQ(j["evaluated"], 6);
  EXPECT_EQ(j["rechecked"], 2);
  ASSERT_EQ(j["best"].size(), 3u);
  // The two re-checked lead, ordered by their event time.
  EXPECT_LE(j["best"][0]["event"]["iteration_time_s"].get<double>(),
            j["best"][1]["event"]["iteration_time_s"].get<double>());
  EXPECT_FALSE(j["best"][2].contains("event"));
  const auto& best = j["best"][0]["analytical"];
  // tokens/s = gbs x seq / iteration time = 64 x 2048 / t.
  EXPECT_NEAR(best["tokens_per_s"].get<double>() * best["iteration_time_s"].get<double>(),
              64.0 * 2048, 1e-6 * 64 * 2048);
}

TEST(ExploreCli, DatabaseRestartAndResults) {
  TempDir dir;
  const std::string db = (dir.path() / "sweep.sqlite").string();
  const CliRun first = orrery(kSmall + " --json --db " + db);
  ASSERT_EQ(first.status, 0) << first.err;
  const CliRun second = orrery(kSmall + " --json --db " + db);
  ASSERT_EQ(second.status, 0) << second.err;
  const auto j = nlohmann::json::parse(second.out);
  EXPECT_EQ(j["evaluated"], 0);
  EXPECT_EQ(j["reused"], 6);
  EXPECT_EQ(nlohmann::json::parse(first.out)["best"][0], j["best"][0]);

  const CliRun table = orrery("results " + db + " --top 2 --where \"tp = 2\"");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 3) << table.out;  // header + 2

  const std::string csv = (dir.path() / "points.csv").string();
  const CliRun exported = orrery("results " + db + " --top 0 --csv " + csv);
  ASSERT_EQ(exported.status, 0) << exported.err;
  const auto rows = csv_cells(read_file(csv));
  ASSERT_EQ(rows.size(), 7u);  // header + 6 points
  EXPECT_EQ(rows[0][0], "key");

  const CliRun other = orrery(
      "explore --model gpt3-2.7b --cluster hgx-h100 --gpus 16 --gbs 64 --vary tp=1 --db " + db);
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("holds a search with model 'gpt3-1.3b'"), std::string::npos)
      << other.err;
}

// A database written by another build, or by an Orrery that recorded none / refused, naming the
// build, because a model change between builds can move every answer while the inputs stay the
// same.
TEST(ExploreCli, DatabaseOfAnotherBuildIsRefused) {
  TempDir dir;
  const std::string db = (dir.path() / "sweep.sqlite").string();
  ASSERT_EQ(orrery(kSmall + " --db " + db).status, 0);
  // Edits the database's meta rows as another Orrery would have left them; the rows it changed.
  const auto edit_meta = [&](const char* sql) {
    sqlite3* handle = nullptr;
    int changed = -1;
    if (sqlite3_open(db.c_str(), &handle) == SQLITE_OK &&
        sqlite3_exec(handle, sql, nullptr, nullptr, nullptr) == SQLITE_OK)
      changed = sqlite3_changes(handle);
    sqlite3_close(handle);
    return changed;
  };
  ASSERT_EQ(edit_meta("UPDATE meta SET value = '0123456789ab' WHERE key = 'build'"), 1);
  const CliRun again = orrery(kSmall + " --db " + db);
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.err.find("holds a search with build '0123456789ab', this one has '"),
            std::string::npos)
      << again.err;
  // A database of an Orrery that recorded no build at all: refused the same way.
  ASSERT_EQ(edit_meta("DELETE FROM meta WHERE key = 'build'"), 1);
  const CliRun older = orrery(kSmall + " --db " + db);
  EXPECT_EQ(older.status, 2);
  EXPECT_NE(older.err.find("holds a search of an older Orrery, which recorded no build"),
            std::string::npos)
      << older.err;
}

TEST(ExploreCli, BadRequestsAreOneLineErrors) {
  const std::string base = "explore --model gpt3-175b --cluster dgx-a100 --gpus 64 --gbs 64 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--vary tensor=1,2", "--vary tensor: unknown key"},
      {"--vary tp=", "--vary tp: expected at least one value"},
      {"--vary tp=two", "--vary tp: expected positive integers, got 'two'"},
      {"--vary gpus=64,1048577", "--vary gpus: expected integers up to 1048576, got '1048577'"},
      {"--vary tp=7", "the divisibility rule"},
      {"--vary cluster=nowhere", "nowhere"},
      {"--objective cost", "cluster 'dgx-a100' has no price per GPU-hour"},
  };
  for (const auto& [args, expected] : cases) {
    const CliRun r = orrery(base + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  const CliRun results = orrery("results /nonexistent.sqlite");
  EXPECT_EQ(results.status, 2);
  EXPECT_NE(results.err.find("expected an SQLite database"), std::string::npos) << results.err;
}

#ifdef ORRERY_MPI_BINARY
// mpirun -np K orrery-mpi explore gives the single-process answer, each rank evaluating its share
// (--allow-run-as-root for CI containers, --oversubscribe for more ranks than cores).
TEST(ExploreCli, MpiRanksGiveTheSingleProcessAnswer) {
  const std::string args =
      "explore --model gpt3-1.3b --cluster hgx-h100 --gpus 16 --gbs 64 --vary recompute=none "
      "--threads 1 --top 5 --recheck 2 --json";
  const CliRun single = orrery(args);
  ASSERT_EQ(single.status, 0) << single.err;
  const auto expected = nlohmann::json::parse(single.out);
  for (const int ranks : {2, 4}) {
    TempDir dir;
    const std::string db = (dir.path() / "mpi.sqlite").string();
    const std::string command =
        std::string(ORRERY_MPIEXEC) + " --allow-run-as-root --oversubscribe -np " +
        std::to_string(ranks) + " " + ORRERY_MPI_BINARY + " " + args + " --db " + db;
    FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
    std::string out;
    std::array<char, 4096> buffer{};
    size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
      out.append(buffer.data(), n);
    ASSERT_EQ(::pclose(pipe), 0) << command;
    const auto j = nlohmann::json::parse(out);
    for (const char* key : {"space", "pruned", "evaluated", "failed", "best", "pareto_time_cost"})
      EXPECT_EQ(j[key], expected[key]) << key << " with " << ranks << " ranks";
    ASSERT_EQ(j["evaluated_per_rank"].size(), static_cast<size_t>(ranks));
    int64_t sum = 0;
    for (const auto& count : j["evaluated_per_rank"])
      sum += count.get<int64_t>();
    EXPECT_EQ(sum, expected["evaluated"].get<int64_t>());
    const CliRun rows =
        orrery("results " + db + " --top 0 --csv " + (dir.path() / "p.csv").string());
    ASSERT_EQ(rows.status, 0) << rows.err;
    EXPECT_EQ(csv_cells(read_file(dir.path() / "p.csv")).size(),
              1 + expected["evaluated"].get<size_t>());
  }
}
#endif

}  // namespace
}  // namespace orrery::e2e
