// The Chrome/Perfetto trace and the HTML report from a hand-made timeline.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "report/html_report.h"
#include "report/trace_writer.h"

namespace orrery {
namespace {

Result with_timeline() {
  Result r;
  r.mode = "flow";
  r.workload = "w";
  r.iteration_time = Time::from_us(10);
  r.breakdown.compute = r.iteration_time;
  IterationTimeline t;
  TimelineTrack compute{1, 9, "compute", {}};
  // 1.5 us for 2.0004 us: rounded to the nanosecond, 2 us.
  compute.slices.push_back({"attn fwd mb0", "fwd", Time::from_ps(1'500'000),
                            Time::from_ps(2'000'400), 0, -1, 0, 3e9, "", ""});
  TimelineTrack tp{1, 9, "tp", {}};
  tp.slices.push_back({"attn fwd all-reduce mb0", "fwd", Time::from_us(4), Time::from_us(1), 0, -1,
                       4096, 0, "tp", "ring"});
  t.tracks = {compute, tp};
  t.links.push_back({"gpu0-nic", {{Time::from_us(4), 0.5}, {Time::from_us(5), 0.0}}});
  r.timeline = t;
  return r;
}

nlohmann::json trace_of(const std::vector<Result>& results) {
  std::ostringstream out;
  write_trace(out, results);
  return nlohmann::json::parse(out.str());
}

TEST(TraceWriter, SlicesAreCompleteEventsInMicroseconds) {
  const nlohmann::json trace = trace_of({with_timeline()});
  std::vector<nlohmann::json> slices, counters;
  std::map<std::string, std::string> names;  // "pid/tid" -> name
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") slices.push_back(e);
    if (e["ph"] == "C") counters.push_back(e);
    if (e["ph"] == "M" && e["name"] == "process_name")
      names[std::to_string(e["pid"].get<int>())] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[std::to_string(e["pid"].get<int>()) + "/" + std::to_string(e["tid"].get<int>())] =
          e["args"]["name"];
  }
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0]["name"], "attn fwd mb0");
  EXPECT_EQ(slices[0]["cat"], "fwd");
  EXPECT_DOUBLE_EQ(slices[0]["ts"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(slices[0]["dur"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(slices[0]["args"]["flop"].get<double>(), 3e9);
  EXPECT_FALSE(slices[0]["args"].contains("chunk"));
  EXPECT_EQ(slices[1]["args"]["bytes"], 4096);
  EXPECT_EQ(slices[1]["args"]["group"], "tp");
  EXPECT_EQ(slices[1]["args"]["algorithm"], "ring");
  const std::string pid = std::to_string(slices[0]["pid"].get<int>());
  EXPECT_EQ(names[pid], "stage 1 (rank 9)");
  EXPECT_EQ(names[pid + "/" + std::to_string(slices[0]["tid"].get<int>())], "compute");
  EXPECT_EQ(names[pid + "/" + std::to_string(slices[1]["tid"].get<int>())], "tp");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0]["name"], "gpu0-nic");
  EXPECT_DOUBLE_EQ(counters[0]["ts"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(counters[0]["args"]["utilisation %"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(counters[1]["args"]["utilisation %"].get<double>(), 0.0);
}

TEST(TraceWriter, ResultsWithoutATimelineAddNothing) {
  EXPECT_TRUE(trace_of({Result{}})["traceEvents"].empty());
}

TEST(HtmlReport, IsSelfContainedAndCarriesTheTimeline) {
  std::ostringstream out;
  write_html_report(out, {with_timeline()}, {{"workload", "w.txt"}});
  const std::string html = out.str();
  // Nothing fetched: no external scripts, styles, images or links.
  for (const char* fetch : {"src=", "href=", "url(", "@import"})
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  EXPECT_NE(html.find("<td>w.txt</td>"), std::string::npos);
  EXPECT_NE(html.find("\"attn fwd mb0\""), std::string::npos);
  EXPECT_NE(html.find("data-status"), std::string::npos);
}

TEST(HtmlReport, EmbeddedDataCannotCloseItsScript) {
  Result r = with_timeline();
  r.timeline->tracks[0].slices[0].name = "</script><b>";
  std::ostringstream out;
  write_html_report(out, {r}, {});
  EXPECT_EQ(out.str().find("</script><b>"), std::string::npos);
}

}  // namespace
}  // namespace orrery
