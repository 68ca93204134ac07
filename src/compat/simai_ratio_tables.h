// SimAI 1.7's collective efficiency tables (its inputs/ratio/*.csv), used only by the SimAI-exact
// analytical mode. A ratio scales the bus bandwidth of a collective by message size and by the
// number of nodes the group spans. Values are SimAI's published data.
#pragma once

#include <cstdint>
#include <optional>

#include "core/bandwidth.h"

namespace orrery::simai {

enum class RatioTable { Nic, NvLink, AllToAll };

// Columns of a table: 0..7 = 1, 2, 4, 8, 16, 32, 64, 128 nodes; 8 = "Multi 16".
constexpr int kMulti16Column = 8;
// Column for a node count; counts without a column of their own use the 16-node column.
int ratio_column_for_nodes(int64_t nodes);

// The table value at `size` (linear interpolation in bytes between rows; sizes below the first
// row, 16 MiB, use the first row) divided by the value of the last row (16 GiB). nullopt when
// `size` is beyond the last row: SimAI aborts with "Data size out of range" there.
std::optional<double> efficiency_ratio(RatioTable table, int column, Bytes size);

}  // namespace orrery::simai
