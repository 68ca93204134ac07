// `orrery results FILE.sqlite`: the points a search stored, best first, as a table or CSV
// (docs/explore.md, "Results").
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_files.h"
#include "explore/result_query.h"

namespace orrery {
namespace {

struct ResultsArgs {
  std::string db;
  int64_t top = 10;
  std::string where, order_by = "iteration_s", csv;
};

// The columns the table shows (the CSV has every column).
const std::vector<std::string> kShown = {"cluster",
                                         "gpus",
                                         "tp",
                                         "pp",
                                         "vpp",
                                         "cp",
                                         "ep",
                                         "dp",
                                         "mbs",
                                         "recompute",
                                         "sequence_parallel",
                                         "zero",
                                         "overlap_param_gather",
                                         "tp_comm_overlap",
                                         "iteration_s",
                                         "event_iteration_s",
                                         "tokens_per_s",
                                         "mfu",
                                         "memory_gib",
                                         "usd_per_mtoken",
                                         "joules_per_token"};

void write_csv(const explore::PointTable& t, std::ostream& out) {
  const auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      const bool quote = cells[i].find_first_of(",\"") != std::string::npos;
      std::string cell = cells[i];
      if (quote) {
        for (size_t at = cell.find('"'); at != std::string::npos; at = cell.find('"', at + 2))
          cell.insert(at, "\"");
        cell = "\"" + cell + "\"";
      }
      out << (i ? "," : "") << cell;
    }
    out << "\n";
  };
  line(t.columns);
  for (const auto& row : t.rows)
    line(row);
}

void print_table(const explore::PointTable& t) {
  std::vector<size_t> index;
  for (const std::string& name : kShown)
    for (size_t i = 0; i < t.columns.size(); ++i)
      if (t.columns[i] == name) index.push_back(i);
  std::vector<size_t> width(index.size());
  for (size_t k = 0; k < index.size(); ++k) {
    width[k] = t.columns[index[k]].size();
    for (const auto& row : t.rows)
      width[k] = std::max(width[k], row[index[k]].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    for (size_t k = 0; k < index.size(); ++k)
      std::cout << (k ? "  " : "") << fmt::format("{:<{}}", cells[index[k]], width[k]);
    std::cout << "\n";
  };
  line(t.columns);
  for (const auto& row : t.rows)
    line(row);
}

int run_results(const ResultsArgs& a) {
  const explore::PointTable table = explore::query_points(a.db, a.where, a.order_by, a.top);
  if (a.csv.empty()) {
    print_table(table);
    return 0;
  }
  protect_input_file(a.db);
  write_file(a.csv, [&](std::ostream& out) { write_csv(table, out); });
  std::cout << fmt::format("{} points written to {}\n", table.rows.size(), a.csv);
  return 0;
}

}  // namespace

std::function<int()> add_results_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("results", "Query the database of an `orrery explore --db` search");
  auto a = std::make_shared<ResultsArgs>();
  cmd->add_option("db", a->db, "The SQLite database")->required();
  cmd->add_option("--top", a->top, "Points to show (0: all)")
      ->check(integer_in(0, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--where", a->where,
                  "SQL condition over the points table's columns, e.g. \"tp = 8 AND mfu > 0.4\"");
  cmd->add_option("--order-by", a->order_by, "Column to order by, ascending")
      ->capture_default_str();
  cmd->add_option("--csv", a->csv, "Write the points (every column) to this CSV file")
      ->check(not_empty("a file to write"));
  return [a]() { return run_results(*a); };
}

}  // namespace orrery
