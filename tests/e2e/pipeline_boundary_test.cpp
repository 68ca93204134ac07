// Each pipeline stage boundary's transfer priced on its own pair of ranks (docs/network.md,
// stage-to-stage transfers): TP 1, PP 4, DP 4 on two servers of 8 GPUs puts stage s on GPUs
// 4s to 4s + 3, so boundary 0-1 (GPUs 0 and 4) and 2-3 (8 and 12) lie inside a server and 1-2
// (4 and 8) across the two. Each transfer must take what `orrery collective --op sendrecv` gives
// for its kind of pair: 2 ranks inside one server, or 16 ranks over two servers.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

namespace orrery::e2e {
namespace {

const std::string kJob = "--model gpt3-1.3b --gpus 16 --tp 1 --pp 4 --gbs 32 --cluster hgx-h100";

nlohmann::json run_json(const std::string& args) {
  const CliRun r = orrery(args);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// A sendrecv of `bytes` on the first `ranks` GPUs, in microseconds.
double sendrecv_us(int64_t bytes, int ranks) {
  const auto j = run_json("collective --op sendrecv --size " + std::to_string(bytes) + " --ranks " +
                          std::to_string(ranks) + " --cluster hgx-h100 --json");
  return j.is_null() ? 0 : j["results"][0]["time_s"].get<double>() * 1e6;
}

struct Send {
  double us = 0;
  int64_t bytes = 0;
};

// The first micro-batch's transfers in the trace of `mode`, by name ("send fwd mb0 to stage 1").
std::map<std::string, Send> first_sends(const std::string& mode) {
  TempDir dir;
  const std::string trace = (dir.path() / "t.json").string();
  const CliRun r = orrery("simulate " + kJob + " --mode " + mode + " --trace " + trace);
  EXPECT_EQ(r.status, 0) << r.err;
  std::map<std::string, Send> sends;
  if (r.status != 0) return sends;
  const auto events = nlohmann::json::parse(read_file(trace))["traceEvents"];
  for (const auto& e : events) {
    if (e.value("cat", "") != "send") continue;
    const std::string name = e["name"].get<std::string>();
    if (name.find(" mb0 ") == std::string::npos) continue;
    sends[name] = {e["dur"].get<double>(), e["args"]["bytes"].get<int64_t>()};
  }
  return sends;
}

TEST(PipelineBoundary, EachBoundaryTakesItsOwnPairsSendrecvInEventMode) {
  const auto sends = first_sends("event");
  ASSERT_EQ(sends.size(), 6u);  // three boundaries, each way
  const int64_t bytes = sends.begin()->second.bytes;
  const double inside = sendrecv_us(bytes, 2), across = sendrecv_us(bytes, 16);
  ASSERT_GT(across, inside * 1.5);
  const std::map<std::string, double> expected = {
      {"send fwd mb0 to stage 1", inside}, {"send fwd mb0 to stage 2", across},
      {"send fwd mb0 to stage 3", inside}, {"send bwd mb0 to stage 0", inside},
      {"send bwd mb0 to stage 1", across}, {"send bwd mb0 to stage 2", inside}};
  for (const auto& [name, us] : expected) {
    ASSERT_TRUE(sends.contains(name)) << name;
    EXPECT_EQ(sends.at(name).bytes, bytes) << name;
    EXPECT_NEAR(sends.at(name).us, us, 1e-3) << name;  // the trace rounds to the nanosecond
  }
}

// Flow mode runs each transfer on its own route with its boundary's protocol: the first
// micro-batch's forward sends meet no other traffic and take the closed form's time.
TEST(PipelineBoundary, FlowModeRunsEachBoundaryAsTheEventModePricesIt) {
  const auto event = first_sends("event");
  const auto flow = first_sends("flow");
  for (const std::string name :
       {"send fwd mb0 to stage 1", "send fwd mb0 to stage 2", "send fwd mb0 to stage 3"}) {
    ASSERT_TRUE(event.contains(name) && flow.contains(name)) << name;
    EXPECT_NEAR(flow.at(name).us, event.at(name).us, 1e-2) << name;
  }
}

// The closed form charges every stage the pipeline's fill and drain, each boundary forward and
// back, 2 (2 inside + across); with blocking transfers (1F1B without model chunks) also, per
// micro-batch (8 here), a send over each of its boundaries: stages 1 and 2 hold the one across
// servers, and the end stages pay their single boundary, inside, twice.
TEST(PipelineBoundary, AnalyticalModeSumsEachStagesOwnBoundaries) {
  const auto sends = first_sends("event");
  ASSERT_FALSE(sends.empty());
  const int64_t bytes = sends.begin()->second.bytes;
  const double inside = sendrecv_us(bytes, 2), across = sendrecv_us(bytes, 16);
  const auto j = run_json("simulate " + kJob + " --mode analytical --json");
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j["stages"].size(), 4u);
  const double fill = 2 * (2 * inside + across);
  const double blocking[] = {2 * inside, inside + across, across + inside, 2 * inside};
  for (size_t s = 0; s < 4; ++s)
    EXPECT_NEAR(j["stages"][s]["breakdown_s"]["p2p"].get<double>() * 1e6, fill + 8 * blocking[s],
                1e-3)
        << s;
}

}  // namespace
}  // namespace orrery::e2e
