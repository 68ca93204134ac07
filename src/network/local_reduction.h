// The time a reducing collective spends combining received data in each rank's local memory, as
// a peer's convention charges it (ASTRA-sim's analytical backend with its system's local-mem-bw).
// Orrery's own model of NCCL charges none: NCCL reduces in registers on the way through, and its
// own-shard copy (network/protocol.h) covers what memory traffic it has.
//
// A rank of an all-reduce or reduce-scatter of S bytes (the input) on n ranks reduces
// (n - 1) / n x S received bytes, whatever the algorithm that brings them; each reduced byte is
// read twice (the received and the local operand) and written once through memory of bandwidth M:
//
//   T = kReductionPasses x (n - 1) / n x S / M
//
// serialised with the transfers. Other collectives reduce nothing (reduce, rooted, is not
// charged). Times in Time (picoseconds), sizes in bytes.
#pragma once

#include <cstdint>
#include <optional>

#include "core/bandwidth.h"
#include "core/collective_kind.h"
#include "core/time.h"

namespace orrery {

constexpr double kReductionPasses = 3;

// Zero when `memory` is unset, for other kinds, or for fewer than two ranks.
Time local_reduction_time(CollectiveKind kind, double bytes, int64_t ranks,
                          std::optional<Bandwidth> memory);

}  // namespace orrery
