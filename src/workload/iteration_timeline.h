// The simulated iteration as a timeline: what ran when on the streams of the simulated ranks, for
// the Chrome/Perfetto trace and the HTML report. Filled only when a run asks for it (--trace,
// --report); event mode has one track set per pipeline stage (its representative rank), flow mode
// one per rank chosen for the trace. Times are picoseconds from the start of the iteration.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/bandwidth.h"
#include "core/time.h"

namespace orrery {

// One piece of work on one stream: a layer's compute in one phase, a collective, a transfer.
struct TimelineSlice {
  std::string name;      // e.g. "attention fwd", "attention ig AllReduce", "send fwd to stage 1"
  std::string phase;     // "fwd", "ig", "wg", "recompute", "optimizer", "send", "bucket"
  Time start, duration;  // picoseconds
  int64_t micro_batch = -1;  // -1: iteration-level work
  int64_t chunk = -1;        // model chunk on its stage when there are several; else -1
  Bytes bytes = 0;           // communication: bytes moved (0 for compute)
  double flop = 0;           // compute: floating-point operations when the workload gives them
  std::string group;  // communication: "tp", "ep", "dp", "dp_ep", "pp", "cp", "emb", "mp", "world"
  std::string algorithm;  // communication: collective algorithm, e.g. "ring"
};

// One stream of one simulated rank: "compute", "tp", "ep", "dp", "dp_ep", "pp", "cp", "emb", "mp",
// "world", and the stage-to-stage transfers it sends: "pp send fwd" (to the next stage), "pp send
// bwd" (to the previous one).
struct TimelineTrack {
  int64_t stage = 0;
  int64_t rank = -1;  // flow mode: the global rank shown; -1 in event mode (a rank class)
  std::string stream;
  std::vector<TimelineSlice> slices;  // in start order
};

// Utilisation (rate / capacity, 0..1) of one link over the iteration, as a step function: each
// point holds from its time until the next.
struct LinkCounter {
  std::string link;
  std::vector<std::pair<Time, double>> points;
};

struct IterationTimeline {
  std::vector<TimelineTrack> tracks;  // by stage, then stream order
  std::vector<LinkCounter> links;     // flow mode: the busiest links, busiest first
};

}  // namespace orrery
