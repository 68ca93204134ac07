// The human-readable summary printed by `orrery simulate`: what was simulated, the iteration
// time and its breakdown (each figure with its unit and share), stage balance, and warnings.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "core/time.h"
#include "workload/result.h"

namespace orrery {

// `details` (e.g. the per-operator table) is printed after the figures, before the warnings.
void write_text_summary(std::ostream& out, const Result& result, std::string_view details = {});

// "14.772 s", "290.1 ms", "15.0 us", "0 s": four significant digits in the largest unit below
// the value.
std::string format_duration(Time t);

}  // namespace orrery
