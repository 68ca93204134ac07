// One CSV field, quoted when it holds a comma, a quote or a newline (RFC 4180).
#pragma once

#include <string>

namespace orrery {

std::string csv_field(const std::string& text);

}  // namespace orrery
