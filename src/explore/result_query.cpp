#include "explore/result_query.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "core/diagnostics.h"

namespace orrery::explore {

PointTable query_points(const std::string& path, const std::string& where,
                        const std::string& order_by, int64_t limit) {
  if (!std::filesystem::is_regular_file(path))
    throw InputError(path + ": expected an SQLite database written by orrery explore --db");
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  const std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(raw, sqlite3_close);
  if (opened != SQLITE_OK) throw InputError(path + ": cannot open (" + sqlite3_errmsg(raw) + ")");
  // The order column is checked against the table's own columns: it is spliced into the SQL.
  sqlite3_stmt* raw_statement = nullptr;
  if (sqlite3_prepare_v2(raw, "SELECT * FROM points LIMIT 0", -1, &raw_statement, nullptr) !=
      SQLITE_OK)
    throw InputError(path + ": expected an SQLite database written by orrery explore --db");
  PointTable out;
  for (int i = 0; i < sqlite3_column_count(raw_statement); ++i)
    out.columns.emplace_back(sqlite3_column_name(raw_statement, i));
  sqlite3_finalize(raw_statement);
  if (std::find(out.columns.begin(), out.columns.end(), order_by) == out.columns.end())
    throw InputError("--order-by " + order_by + ": expected a column of the points table");
  std::string sql = "SELECT * FROM points WHERE status = 'ok'";
  if (!where.empty()) sql += " AND (" + where + ")";
  sql += " ORDER BY " + order_by + " IS NULL, " + order_by + ", key";
  if (limit > 0) sql += " LIMIT " + std::to_string(limit);
  if (sqlite3_prepare_v2(raw, sql.c_str(), -1, &raw_statement, nullptr) != SQLITE_OK)
    throw InputError("--where " + where + ": " + sqlite3_errmsg(raw));
  const std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> statement(raw_statement,
                                                                             sqlite3_finalize);
  int step = 0;
  while ((step = sqlite3_step(raw_statement)) == SQLITE_ROW) {
    std::vector<std::string>& row = out.rows.emplace_back();
    for (int i = 0; i < static_cast<int>(out.columns.size()); ++i) {
      const unsigned char* text = sqlite3_column_text(raw_statement, i);
      row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
    }
  }
  if (step != SQLITE_DONE) throw InputError("--where " + where + ": " + sqlite3_errmsg(raw));
  return out;
}

}  // namespace orrery::explore
