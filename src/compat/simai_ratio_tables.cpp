#include "compat/simai_ratio_tables.h"

#include <array>

namespace orrery::simai {
namespace {

constexpr int kRows = 11;  // 16 MiB, 32 MiB, ..., 16 GiB (powers of two)
using Table = std::array<std::array<double, 9>, kRows>;

// Empty cells of SimAI's CSVs read as 1 and are written as 1 here.
constexpr Table kNic = {{
    {0.45, 0.32, 0.24, 0.13, 0.05, 0.044, 0.021, 0.0087, 0.86},    // 16777216
    {0.55, 0.47, 0.38, 0.24, 0.11, 0.052, 0.042, 0.021225, 0.92},  // 33554432
    {0.65, 0.5, 0.53, 0.39, 0.21, 0.106, 0.051, 0.04405, 0.94},    // 67108864
    {0.69, 0.67, 0.67, 0.54, 0.38, 0.205, 0.107, 0.0533, 0.94},    // 134217728
    {0.73, 0.85, 0.77, 0.69, 0.57, 0.387, 0.209, 0.1027, 0.94},    // 268435456
    {0.76, 0.89, 0.85, 0.78, 0.73, 0.562, 0.384, 0.1902, 0.95},    // 536870912
    {0.77, 0.92, 0.93, 0.9, 0.76, 0.74, 0.563, 0.314575, 0.96},    // 1073741824
    {0.78, 0.94, 0.94, 0.94, 0.92, 0.758, 0.745, 0.553525, 0.96},  // 2147483648
    {0.79, 0.95, 0.95, 0.95, 0.95, 0.923, 0.755, 0.740175, 0.96},  // 4294967296
    {0.8, 0.95, 0.96, 0.96, 0.96, 0.953, 0.914, 0.7648, 0.96},     // 8589934592
    {0.81, 0.96, 0.96, 0.96, 0.96, 0.957, 0.958, 0.919175, 0.96},  // 17179869184
}};

constexpr Table kNvLink = {{
    {0.45, 0.55, 0.34, 0.16, 0.08, 1, 1, 1, 0.86},  // 16777216
    {0.55, 0.68, 0.6, 0.34, 0.16, 1, 1, 1, 0.92},   // 33554432
    {0.65, 0.74, 0.71, 0.62, 0.33, 1, 1, 1, 0.94},  // 67108864
    {0.69, 0.8, 0.74, 0.7, 0.65, 1, 1, 1, 0.94},    // 134217728
    {0.73, 0.84, 0.79, 0.78, 0.72, 1, 1, 1, 0.94},  // 268435456
    {0.76, 0.86, 0.86, 0.82, 0.75, 1, 1, 1, 0.95},  // 536870912
    {0.77, 0.87, 0.87, 0.86, 0.83, 1, 1, 1, 0.96},  // 1073741824
    {0.78, 0.87, 0.87, 0.87, 0.86, 1, 1, 1, 0.96},  // 2147483648
    {0.79, 0.88, 0.88, 0.88, 0.87, 1, 1, 1, 0.96},  // 4294967296
    {0.8, 0.88, 0.88, 0.88, 0.88, 1, 1, 1, 0.96},   // 8589934592
    {0.81, 0.88, 0.88, 0.88, 0.88, 1, 1, 1, 0.96},  // 17179869184
}};

constexpr Table kAllToAll = {{
    {0.44, 0.52, 0.67, 0.64, 0.62, 1, 1, 1, 0.86},  // 16777216
    {0.51, 0.63, 0.68, 0.67, 0.66, 1, 1, 1, 0.92},  // 33554432
    {0.6, 0.72, 0.83, 0.82, 0.66, 1, 1, 1, 0.94},   // 67108864
    {0.65, 0.76, 0.9, 0.85, 0.72, 1, 1, 1, 0.94},   // 134217728
    {0.7, 0.79, 0.92, 0.87, 0.75, 1, 1, 1, 0.94},   // 268435456
    {0.71, 0.8, 0.94, 0.89, 0.81, 1, 1, 1, 0.95},   // 536870912
    {0.74, 0.81, 0.94, 0.92, 0.85, 1, 1, 1, 0.96},  // 1073741824
    {0.76, 0.81, 0.95, 0.93, 0.88, 1, 1, 1, 0.96},  // 2147483648
    {0.77, 0.8, 0.95, 0.94, 0.89, 1, 1, 1, 0.96},   // 4294967296
    {0.78, 0.8, 0.95, 0.94, 0.9, 1, 1, 1, 0.96},    // 8589934592
    {0.78, 0.8, 0.95, 0.94, 0.9, 1, 1, 1, 0.96},    // 17179869184
}};
const Table& table_data(RatioTable table) {
  switch (table) {
    case RatioTable::Nic:
      return kNic;
    case RatioTable::NvLink:
      return kNvLink;
    case RatioTable::AllToAll:
      return kAllToAll;
  }
  return kNic;
}

constexpr Bytes row_size(int row) {
  return Bytes{16} * kMiB << row;
}

}  // namespace

int ratio_column_for_nodes(int64_t nodes) {
  for (int column = 0; column < 8; ++column)
    if (nodes == (int64_t{1} << column)) return column;
  return 4;
}

std::optional<double> efficiency_ratio(RatioTable table, int column, Bytes size) {
  const Table& t = table_data(table);
  const double last = t[kRows - 1][column];
  if (size > row_size(kRows - 1)) return std::nullopt;
  if (size <= row_size(0)) return t[0][column] / last;
  int row = 0;
  while (size > row_size(row + 1))
    ++row;
  const double lo = t[row][column];
  const double hi = t[row + 1][column];
  const double fraction = static_cast<double>(size - row_size(row)) /
                          static_cast<double>(row_size(row + 1) - row_size(row));
  return (lo + (hi - lo) * fraction) / last;
}

}  // namespace orrery::simai
