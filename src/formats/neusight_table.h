// Reader for NeuSight-derived operator tables (docs/formats.md, seed 002): a header line
// of 11 column names, in any order, then one tab-separated row per fx operator:
//   name, forward_compute_time (ms), forward_comm_type, forward_comm_size (elements),
//   backward_compute_time (ms), backward_comm_type, backward_comm_size (elements),
//   weight_grad_compute_time (ms), weight_grad_comm_type, weight_grad_comm_size (elements),
//   process_time (ms).
// Translation (no timing decision: the reader only translates):
// - each row is a Layer run on the compute stream in file order (forward) and in reverse
//   (backward); times in milliseconds become Time, element counts become bytes at the
//   communication element type (fp32 unless ReaderOptions::comm_dtype says otherwise);
// - `X_grad` rows carry ALLREDUCE_ASYNC of X's gradient: an asynchronous data-parallel all-reduce
//   issued right after X's backward (the row precedes X, so it follows X in reverse order) and
//   awaited before the iteration-level rows; "None" and "NONE" mean no communication;
// - when every backward and weight-gradient time is 0 (NeuSight run with is_train=False) the
//   backward is left 0 and Workload::forward_times_only lists the rows that own parameters (those
//   with an `X_grad` row); the run estimates it (training/backward_estimate.h);
// - blocks are read from torch.fx module paths, whatever the model: `<stack>_K_<rest>`
//   (`transformer_h_0_ln_1`, `model_layers_0_mlp`), the stack being the name up to its first
//   number that is not its last part; rows from the first row of block K to the next row of the
//   stack's first part outside it (`transformer_ln_f`) form block K. ReaderOptions::layers
//   replicates the last block to that many blocks (the file holds one; GPT-2 Large has 36), with a
//   warning when it is not given;
// - a non-zero process_time adds an iteration-level optimizer row of their sum.
// The table does not say how many GPUs run it: Workload::world_size_from_file is false.
#pragma once

#include <string>
#include <string_view>

#include "core/diagnostics.h"
#include "formats/reader_options.h"
#include "workload/workload.h"

namespace orrery {

// True when the first line is the NeuSight column header.
bool looks_like_neusight_table(std::string_view content);

// Throws InputError ("path:line: expected ...") on malformed input.
Workload read_neusight_table(const std::string& path, std::string_view content,
                             const ReaderOptions& options, Diagnostics& diagnostics);

}  // namespace orrery
