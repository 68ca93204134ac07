// Reading a search's database back (`orrery results`): the stored points, filtered by an SQL
// condition over the points table's columns (result_store.h), ordered by one of them and limited.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orrery::explore {

struct PointTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // cells as text; NULL as ""
};

// Points with status 'ok' (and `where`, when given) ordered by `order_by` ascending, at most
// `limit` (0: all). Throws InputError for a file that is no results database, an unknown order
// column or a condition SQLite cannot read.
PointTable query_points(const std::string& path, const std::string& where,
                        const std::string& order_by, int64_t limit);

}  // namespace orrery::explore
