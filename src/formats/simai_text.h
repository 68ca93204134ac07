// Reader for SimAI / AICB layer-wise text workloads.
//
// Line 1: a training-loop policy followed by "key: value" header tokens in any order
//   (model_parallel_NPU_group:, ep:, pp:, vpp:, ga:, all_gpus:, checkpoints: k l1..lk,
//    checkpoint_initiates: k l1..lk, pp_comm[:]).
// Line 2: the number of layer records N (authoritative, as in SimAI: records beyond N are ignored).
// Then N records, one per line, 12 whitespace-separated fields:
//   name, dependency, fwd compute (ns), fwd comm type, fwd comm size (B), input-grad compute (ns),
//   ig comm type, ig comm size, weight-grad compute (ns), wg comm type, wg comm size, wg update
//   (ns).
// Comm types: ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, optionally suffixed _EP (expert
// group) or _DP_EP (expert-data-parallel group); a bare type means the tensor-parallel group in
// the fwd/ig columns and the data-parallel group in the wg column; NONE means no communication.
//
// Micro-batch passes start at rows named "embedding_layer*"; rows before the first pass and the
// trailing "cross_entropy*" / "optimizer*" rows are iteration-level. See docs/formats.md.
#pragma once

#include <string>
#include <string_view>

#include "core/diagnostics.h"
#include "workload/workload.h"

namespace orrery {

// True when the content starts like a SimAI text workload (a known or plausible policy line
// followed by a record count).
bool looks_like_simai_text(std::string_view content);

// Throws InputError ("path:line: expected ...") on malformed input; assumptions and SimAI
// incompatibilities become warnings in `diagnostics` (with `simai_compat`, none about what the
// event simulator would do).
Workload read_simai_text(const std::string& path, std::string_view content,
                         Diagnostics& diagnostics, bool simai_compat = false);

}  // namespace orrery
