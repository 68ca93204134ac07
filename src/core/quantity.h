// Parsing of quantities with units, as users write them in cluster and device files and flags:
// bandwidths ("300 GB/s", "200 Gb/s", "400Gbps", "48.5 GiB/s"), durations ("1.5 us", "2ms",
// "0"), sizes ("1GiB", "64 MiB", "4096") and arithmetic rates ("989.4 TFLOP/s", "312 TFLOPS",
// "624 TOPS"). A bandwidth without a unit is GB/s (10^9 B/s). Decimal prefixes are powers of 10,
// binary prefixes (Ki, Mi, Gi, Ti) powers of 2; a lowercase "b" means bits. Each function throws
// std::invalid_argument whose message says what was expected.
#pragma once

#include <string>
#include <string_view>

#include "core/bandwidth.h"
#include "core/flop_rate.h"
#include "core/time.h"

namespace orrery {

Bandwidth parse_bandwidth(std::string_view text);
Time parse_duration(std::string_view text);
Bytes parse_size(std::string_view text);
FlopRate parse_flop_rate(std::string_view text);

// "1 GiB", "96 KiB", "1000 B": the largest binary unit that divides the size, else bytes.
std::string format_size(Bytes bytes);

}  // namespace orrery
