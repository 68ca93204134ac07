// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the checksum of each input
// file in a result's provenance. Written from the standard; checked on its test vectors.
#pragma once

#include <string>
#include <string_view>

namespace orrery {

std::string sha256_hex(std::string_view bytes);

}  // namespace orrery
