#include "explore/result_store.h"

#include <sqlite3.h>

#include <ctime>
#include <sstream>

#include "core/diagnostics.h"

namespace orrery::explore {
namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, started_utc TEXT, command TEXT,
  version TEXT, clusters TEXT);
CREATE TABLE IF NOT EXISTS points(key TEXT PRIMARY KEY, run INTEGER REFERENCES runs(id),
  cluster TEXT, device TEXT, gpus INTEGER, tp INTEGER, pp INTEGER, vpp INTEGER, cp INTEGER,
  ep INTEGER, dp INTEGER, mbs INTEGER, micro_batches INTEGER, recompute TEXT,
  sequence_parallel INTEGER, distributed_optimizer INTEGER, zero INTEGER, mode TEXT,
  status TEXT, error TEXT, iteration_s REAL, tokens_per_s REAL, mfu REAL, memory_gib REAL,
  usd_per_mtoken REAL, joules_per_token REAL, event_iteration_s REAL, event_tokens_per_s REAL,
  event_mfu REAL, event_usd_per_mtoken REAL, event_joules_per_token REAL,
  overlap_param_gather INTEGER, tp_comm_overlap INTEGER);
)";

constexpr const char* kInsert =
    "INSERT OR REPLACE INTO points(key, run, cluster, device, gpus, tp, pp, vpp, cp, ep, dp, mbs, "
    "micro_batches, recompute, sequence_parallel, distributed_optimizer, zero, mode, status, "
    "error, iteration_s, tokens_per_s, mfu, memory_gib, usd_per_mtoken, joules_per_token, "
    "overlap_param_gather, tp_comm_overlap) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
    "?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)";

constexpr const char* kEvent =
    "UPDATE points SET event_iteration_s = ?2, event_tokens_per_s = ?3, event_mfu = ?4, "
    "event_usd_per_mtoken = ?5, event_joules_per_token = ?6 WHERE key = ?1";

void bind_optional(sqlite3_stmt* s, int column, const std::optional<double>& value) {
  if (value)
    sqlite3_bind_double(s, column, *value);
  else
    sqlite3_bind_null(s, column);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

ResultStore::ResultStore(const std::string& path, const RunInfo& run) : path_(path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError("--db " + path + ": cannot open (" + why + ")");
  }
  try {
    // One transaction from the schema to the first point: a database refused (another model or
    // cluster) is closed with it rolled back, so it is left as it was found.
    exec("BEGIN");
    exec(kSchema);
    add_missing_columns();
    check_identity(run);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db_,
                       "INSERT INTO runs(started_utc, command, version, clusters) "
                       "VALUES(?1, ?2, ?3, ?4)",
                       -1, &s, nullptr);
    const std::string started = utc_now();
    sqlite3_bind_text(s, 1, started.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, run.command.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 3, run.version.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 4, run.clusters.c_str(), -1, SQLITE_TRANSIENT);
    const int recorded = sqlite3_step(s);
    sqlite3_finalize(s);
    if (recorded != SQLITE_DONE)
      throw InputError("--db " + path + ": cannot record the run (" + sqlite3_errmsg(db_) + ")");
    run_id_ = sqlite3_last_insert_rowid(db_);
    sqlite3_prepare_v2(db_, kInsert, -1, &insert_, nullptr);
    sqlite3_prepare_v2(db_, kEvent, -1, &event_, nullptr);
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

ResultStore::~ResultStore() {
  sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_finalize(insert_);
  sqlite3_finalize(event_);
  sqlite3_close(db_);
}

void ResultStore::exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error ? error : "unknown error";
    sqlite3_free(error);
    throw InputError("--db " + path_ + ": " + why + " (not an Orrery results database?)");
  }
}

// A database written before the overlap_param_gather or tp_comm_overlap column gets it (every
// point then off).
void ResultStore::add_missing_columns() {
  for (const std::string column : {"overlap_param_gather", "tp_comm_overlap"}) {
    sqlite3_stmt* s = nullptr;
    const bool present =
        sqlite3_prepare_v2(db_, ("SELECT " + column + " FROM points LIMIT 0").c_str(), -1, &s,
                           nullptr) == SQLITE_OK;
    sqlite3_finalize(s);
    if (!present) exec("ALTER TABLE points ADD COLUMN " + column + " INTEGER DEFAULT 0");
  }
}

// The meta rows of a new database are this run's; an existing one's must equal them, and hold
// every one of them (a key it lacks was not recorded by the older Orrery that wrote it).
void ResultStore::check_identity(const RunInfo& run) {
  sqlite3_stmt* count = nullptr;
  sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM meta", -1, &count, nullptr);
  const bool existing = sqlite3_step(count) == SQLITE_ROW && sqlite3_column_int64(count, 0) > 0;
  sqlite3_finalize(count);
  std::istringstream lines(run.identity + "\nclusters=" + run.clusters);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t eq = line.find('=');
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key = ?1", -1, &s, nullptr);
    sqlite3_bind_text(s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
    std::optional<std::string> stored;
    if (sqlite3_step(s) == SQLITE_ROW)
      stored = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    if (stored && *stored != value)
      throw InputError("--db " + path_ + ": holds a search with " + key + " '" + *stored +
                       "', this one has '" + value + "'; use another database");
    if (!stored && existing)
      throw InputError("--db " + path_ + ": holds a search of an older Orrery, which recorded no " +
                       key + " (this one has '" + value + "'); use another database");
    if (!stored) {
      sqlite3_prepare_v2(db_, "INSERT INTO meta(key, value) VALUES(?1, ?2)", -1, &s, nullptr);
      sqlite3_bind_text(s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(s, 2, value.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_step(s);
      sqlite3_finalize(s);
    }
  }
}

std::unordered_map<std::string, std::optional<PointFigures>> ResultStore::stored_points() {
  std::unordered_map<std::string, std::optional<PointFigures>> out;
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db_,
                     "SELECT key, status, iteration_s, tokens_per_s, mfu, memory_gib, "
                     "usd_per_mtoken, joules_per_token FROM points",
                     -1, &s, nullptr);
  while (sqlite3_step(s) == SQLITE_ROW) {
    const std::string key = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    const std::string status = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
    if (status != "ok") {
      out[key] = std::nullopt;
      continue;
    }
    PointFigures f;
    f.iteration_s = sqlite3_column_double(s, 2);
    f.tokens_per_s = sqlite3_column_double(s, 3);
    f.mfu = sqlite3_column_double(s, 4);
    f.memory_gib = sqlite3_column_double(s, 5);
    if (sqlite3_column_type(s, 6) != SQLITE_NULL) f.usd_per_mtoken = sqlite3_column_double(s, 6);
    if (sqlite3_column_type(s, 7) != SQLITE_NULL) f.joules_per_token = sqlite3_column_double(s, 7);
    out[key] = f;
  }
  sqlite3_finalize(s);
  return out;
}

void ResultStore::add(const std::string& key, const PlanPoint& point, const ClusterChoice& choice,
                      const std::string& mode, const Evaluation& e) {
  sqlite3_stmt* s = insert_;
  const ParallelPlan& p = point.plan;
  const std::string recompute = recompute_name(p.recompute);
  sqlite3_bind_text(s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, run_id_);
  sqlite3_bind_text(s, 3, choice.label.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 4, choice.resolved.name.c_str(), -1, SQLITE_TRANSIENT);
  const int64_t ints[] = {choice.gpus, p.tp, p.pp,          p.vpp,          p.cp,
                          p.ep,        p.dp, p.micro_batch, p.micro_batches};
  for (int i = 0; i < 9; ++i)
    sqlite3_bind_int64(s, 5 + i, ints[i]);
  sqlite3_bind_text(s, 14, recompute.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(s, 15, p.sequence_parallel ? 1 : 0);
  sqlite3_bind_int(s, 16, p.distributed_optimizer ? 1 : 0);
  sqlite3_bind_int(s, 17, p.zero);
  sqlite3_bind_text(s, 18, mode.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 19, e.figures ? "ok" : "failed", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 20, e.error.c_str(), -1, SQLITE_TRANSIENT);
  const PointFigures f = e.figures.value_or(PointFigures{});
  const auto figure = [&](int column, double value) {
    bind_optional(s, column, e.figures ? std::optional<double>(value) : std::nullopt);
  };
  figure(21, f.iteration_s);
  figure(22, f.tokens_per_s);
  figure(23, f.mfu);
  figure(24, f.memory_gib);
  bind_optional(s, 25, f.usd_per_mtoken);
  bind_optional(s, 26, f.joules_per_token);
  sqlite3_bind_int(s, 27, p.overlap_param_gather ? 1 : 0);
  sqlite3_bind_int(s, 28, p.tp_comm_overlap ? 1 : 0);
  step(s);
}

void ResultStore::add_event(const std::string& key, const PointFigures& f) {
  sqlite3_stmt* s = event_;
  sqlite3_bind_text(s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(s, 2, f.iteration_s);
  sqlite3_bind_double(s, 3, f.tokens_per_s);
  sqlite3_bind_double(s, 4, f.mfu);
  bind_optional(s, 5, f.usd_per_mtoken);
  bind_optional(s, 6, f.joules_per_token);
  step(s);
}

void ResultStore::step(sqlite3_stmt* statement) {
  if (failure_.empty() && sqlite3_step(statement) != SQLITE_DONE) failure_ = sqlite3_errmsg(db_);
  sqlite3_reset(statement);
  commit_every(1000);
}

void ResultStore::commit_every(int64_t rows) {
  if (++pending_ < rows || !failure_.empty()) return;
  if (sqlite3_exec(db_, "COMMIT; BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK)
    failure_ = sqlite3_errmsg(db_);
  pending_ = 0;
}

void ResultStore::throw_if_failed() const {
  if (!failure_.empty()) throw InputError("--db " + path_ + ": writing failed (" + failure_ + ")");
}

}  // namespace orrery::explore
