#include "report/html_report.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

namespace orrery {
namespace {

using nlohmann::ordered_json;

std::string escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double micros(Time t) {
  return static_cast<double>(t.ps()) / 1e6;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// [name, value] (a JSON array, never an object).
ordered_json pair(const std::string& name, double value) {
  return ordered_json::array({name, value});
}

// The breakdown as [key, seconds] in the order of the JSON result's breakdown_s.
ordered_json breakdown_data(const Breakdown& b) {
  ordered_json j = ordered_json::array();
  j.push_back(pair("compute", b.compute.seconds()));
  for (const auto& [group, time] : b.exposed_comm)
    j.push_back(pair("exposed_comm." + std::string(to_string(group)), time.seconds()));
  j.push_back(pair("bubble", b.bubble.seconds()));
  j.push_back(pair("p2p", b.p2p.seconds()));
  return j;
}

// Tracks grouped per process (stage, rank), slice names and phases interned.
ordered_json timeline_data(const IterationTimeline& timeline, Time& end) {
  ordered_json groups = ordered_json::array();
  ordered_json names = ordered_json::array(), phases = ordered_json::array();
  std::map<std::string, size_t> name_index, phase_index;
  const auto intern = [](std::map<std::string, size_t>& index, ordered_json& list,
                         const std::string& s) {
    const auto [it, added] = index.emplace(s, list.size());
    if (added) list.push_back(s);
    return it->second;
  };
  for (const TimelineTrack& track : timeline.tracks) {
    if (groups.empty() || groups.back()["stage"] != track.stage ||
        groups.back()["rank"] != track.rank) {
      std::string label = "stage " + std::to_string(track.stage);
      if (track.rank >= 0) label += " (rank " + std::to_string(track.rank) + ")";
      groups.push_back({{"stage", track.stage},
                        {"rank", track.rank},
                        {"label", label},
                        {"tracks", ordered_json::array()}});
    }
    ordered_json slices = ordered_json::array();
    for (const TimelineSlice& s : track.slices) {
      end = std::max(end, s.start + s.duration);
      slices.push_back(ordered_json::array({micros(s.start), micros(s.duration),
                                            intern(name_index, names, s.name),
                                            intern(phase_index, phases, s.phase)}));
    }
    groups.back()["tracks"].push_back({{"stream", track.stream}, {"slices", std::move(slices)}});
  }
  return {
      {"groups", std::move(groups)}, {"names", std::move(names)}, {"phases", std::move(phases)}};
}

ordered_json memory_data(const MemoryEstimate& m) {
  ordered_json stages = ordered_json::array();
  for (const StageMemory& s : m.stages)
    stages.push_back(
        {{"stage", s.stage},
         {"parts", ordered_json::array({pair("weights", s.weights_bytes / kGiB),
                                        pair("gradients", s.gradients_bytes / kGiB),
                                        pair("optimizer", s.optimizer_bytes / kGiB),
                                        pair("activations", s.activations_bytes / kGiB),
                                        pair("logits", s.logits_bytes / kGiB)})}});
  return {{"capacity_gib", m.capacity_bytes / kGiB}, {"stages", std::move(stages)}};
}

ordered_json job_data(const Result& r) {
  ordered_json j;
  j["iteration_s"] = r.iteration_time.seconds();
  j["breakdown"] = breakdown_data(r.breakdown);
  Time end = r.iteration_time;
  j["timeline"] = r.timeline ? timeline_data(*r.timeline, end) : ordered_json();
  j["memory"] = r.memory && !r.memory->stages.empty() ? memory_data(*r.memory) : ordered_json();
  ordered_json links = ordered_json::array();
  if (r.timeline)
    for (const LinkCounter& link : r.timeline->links) {
      ordered_json points = ordered_json::array();
      for (const auto& [time, utilization] : link.points)
        points.push_back(ordered_json::array({micros(time), utilization}));
      links.push_back({{"name", link.link}, {"points", std::move(points)}});
    }
  j["links"] = std::move(links);
  j["end_us"] = micros(end);
  return j;
}

std::string cell(double value, const std::string& shown) {
  return fmt::format("<td data-v=\"{}\">{}</td>", value, shown);
}
std::string cell(const std::string& text) {
  return "<td data-v=\"" + escape(text) + "\">" + escape(text) + "</td>";
}
std::string micros_cell(Time t) {
  return cell(t.microseconds(), fmt::format("{:.2f}", t.microseconds()));
}

void write_table_head(std::ostream& out, const std::vector<std::string>& heads) {
  out << "<table class=\"sortable\"><thead><tr>";
  for (const std::string& h : heads)
    out << "<th>" << escape(h) << "</th>";
  out << "</tr></thead><tbody>\n";
}

std::string comm_cell(const std::optional<CommTiming>& c) {
  if (!c) return cell(0, "");
  return cell(c->cost.microseconds(),
              fmt::format("{:.2f} ({} {})", c->cost.microseconds(), to_string(c->comm.kind),
                          to_string(c->comm.group)));
}

void write_layer_table(std::ostream& out, const Result& r) {
  if (r.layers.empty()) return;
  out << "<h3>Per layer (one execution, µs; click a column to sort)</h3>\n";
  write_table_head(out,
                   {"#", "layer", "executions", "recomputes", "fwd compute (µs)", "fwd comm (µs)",
                    "ig compute (µs)", "ig comm (µs)", "wg compute (µs)", "wg comm (µs)"});
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerTiming& l = r.layers[i];
    out << "<tr>" << cell(static_cast<double>(i), std::to_string(i)) << cell(l.name)
        << cell(static_cast<double>(l.executions), std::to_string(l.executions))
        << cell(static_cast<double>(l.recomputes), std::to_string(l.recomputes))
        << micros_cell(l.forward.compute) << comm_cell(l.forward.comm)
        << micros_cell(l.input_grad.compute) << comm_cell(l.input_grad.comm)
        << micros_cell(l.weight_grad.compute) << comm_cell(l.weight_grad.comm) << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

void write_links_table(std::ostream& out, const Result& r) {
  if (r.hottest_links.empty()) return;
  out << "<h3>Busiest links</h3>\n";
  write_table_head(out, {"link", "carried (GB)", "busy (ms)", "peak utilisation (%)"});
  for (const LinkUsage& l : r.hottest_links)
    out << "<tr>" << cell(l.name) << cell(l.bytes / 1e9, fmt::format("{:.3f}", l.bytes / 1e9))
        << cell(l.busy.milliseconds(), fmt::format("{:.3f}", l.busy.milliseconds()))
        << cell(100 * l.peak_utilization, fmt::format("{:.1f}", 100 * l.peak_utilization))
        << "</tr>\n";
  out << "</tbody></table>\n";
}

void write_dataflow_table(std::ostream& out, const DataflowFigures& d) {
  out << "<h3>DFModel configurations (one sample of one layer, ns)</h3>\n<p>" << escape(d.system)
      << "<br>" << escape(d.mapping) << "<br>" << escape(d.search) << "</p>\n";
  write_table_head(out, {"config", "kernels", "compute (ns)", "memory (ns)", "network (ns)",
                         "initiation interval (ns)"});
  for (const DataflowConfigRow& c : d.configs)
    out << "<tr>" << cell(static_cast<double>(c.config), std::to_string(c.config))
        << cell(c.kernels) << cell(c.compute_ns, fmt::format("{:.1f}", c.compute_ns))
        << cell(c.memory_ns, fmt::format("{:.1f}", c.memory_ns))
        << cell(c.network_ns, fmt::format("{:.1f}", c.network_ns))
        << cell(c.ii_ns, fmt::format("{:.1f}", c.ii_ns)) << "</tr>\n";
  out << "</tbody></table>\n";
}

void write_summary(std::ostream& out, const Result& r) {
  const Parallelism& p = r.parallelism;
  out << "<div class=\"result\"><h3>Result</h3><table class=\"facts\">";
  const auto row = [&](std::string_view k, const std::string& v) {
    if (!v.empty()) out << "<tr><th>" << k << "</th><td>" << escape(v) << "</td></tr>";
  };
  row("workload", r.workload);
  row("cluster", r.cluster);
  row("device", r.device);
  row("mode", r.mode);
  row("schedule", r.schedule);
  row("parallelism",
      fmt::format("{} GPUs: tp {}, pp {}, dp {}, ep {}, cp {}, vpp {}, {} "
                  "micro-batches",
                  p.world_size, p.tp, p.pp, p.dp(), p.ep, p.cp, p.vpp, p.micro_batches));
  row("iteration time", fmt::format("{:.3f} ms", r.iteration_time.milliseconds()));
  row("critical stage", std::to_string(r.critical_stage));
  if (r.simulated_tasks > 0) row("simulated tasks", std::to_string(r.simulated_tasks));
  out << "</table></div>\n";
  if (!r.warnings.empty()) {
    out << "<details class=\"warnings\"><summary>Warnings (" << r.warnings.size()
        << ")</summary><ul>";
    for (const Warning& w : r.warnings)
      out << "<li>" << escape(w.to_string()) << "</li>";
    out << "</ul></details>\n";
  }
}

void write_job(std::ostream& out, const Result& r, size_t k, bool several) {
  out << "<section class=\"job\" data-job=\"" << k << "\">\n";
  if (several) out << "<h2>Job " << k + 1 << ": " << escape(r.workload) << "</h2>\n";
  write_summary(out, r);
  out << "<h3>Breakdown of the critical stage</h3><div class=\"chart breakdown\"></div>\n";
  if (r.timeline)
    out << "<h3>Timeline of one iteration</h3><div class=\"chart timeline\"></div>"
           "<div class=\"tooltip\"></div>\n";
  if (r.memory && !r.memory->stages.empty())
    out << "<h3>Memory per GPU of each stage</h3><div class=\"chart memory\"></div>\n";
  if (r.timeline && !r.timeline->links.empty())
    out << "<h3>Utilisation of the busiest links</h3><div class=\"chart links\"></div>\n";
  write_links_table(out, r);
  if (r.dataflow) write_dataflow_table(out, *r.dataflow);
  write_layer_table(out, r);
  out << "</section>\n";
}

constexpr std::string_view kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1300px}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc}h3{font-size:1.05em;margin-top:1.4em}
table{border-collapse:collapse;margin:.4em 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
table.sortable th{cursor:pointer;background:#f4f4f4}table.sortable td[data-v]{font-variant-numeric:tabular-nums}
.facts th{font-weight:600;padding-right:1.5em}.warnings{color:#8a4b00;margin:.6em 0}
.inputs{float:left;margin-right:4em}.result{display:inline-block;vertical-align:top}
.job>h3,.job>details{clear:both}
svg text{font-size:11px;fill:#333}.axis-line,.tick{stroke:#555}.axis-label{font-weight:600}
.legend rect{stroke:#444;stroke-width:.5}.tooltip{position:fixed;display:none;background:#fff;border:1px solid #888;padding:3px 6px;font-size:12px;pointer-events:none}
)";

constexpr std::string_view kScript = R"(
(function () {
'use strict';
const NS = 'http://www.w3.org/2000/svg';
const COLORS = {compute: '#4e79a7', 'exposed_comm.tp': '#f28e2b', 'exposed_comm.ep': '#edc948',
  'exposed_comm.dp': '#e15759', 'exposed_comm.dp_ep': '#ff9da7', 'exposed_comm.pp': '#b07aa1',
  'exposed_comm.cp': '#9c755f', 'exposed_comm.emb': '#86bcb6', 'exposed_comm.mp': '#d37295',
  'exposed_comm.world': '#79706e', bubble: '#bab0ac', p2p: '#59a14f',
  fwd: '#4e79a7', ig: '#f28e2b', wg: '#e15759', recompute: '#76b7b2', send: '#59a14f',
  bucket: '#edc948', weights: '#4e79a7', gradients: '#f28e2b', optimizer: '#e15759',
  activations: '#76b7b2', logits: '#59a14f'};
const LEFT = 200, WIDTH = 1000;
function el(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function label(parent, x, y, s, cls, anchor) {
  const t = el('text', {x: x, y: y, class: cls || '', 'text-anchor': anchor || 'start'}, parent);
  t.textContent = s;
  return t;
}
function fmt(v) { return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : +v.toFixed(3) + ''; }
function step(max) {
  const raw = max / 8, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}
// A horizontal axis from 0 to max at height y, its label naming the unit.
function axis(svg, y, max, name, unit) {
  const g = el('g', {class: 'axis', 'data-unit': unit}, svg);
  el('line', {x1: LEFT, y1: y, x2: LEFT + WIDTH, y2: y, class: 'axis-line'}, g);
  if (max > 0) {
    const s = step(max);
    for (let i = 0; i * s <= max * 1.000001; ++i) {
      const x = LEFT + i * s / max * WIDTH;
      el('line', {x1: x, y1: y, x2: x, y2: y + 4, class: 'tick'}, g);
      label(g, x, y + 15, fmt(i * s), 'tick-label', 'middle');
    }
  }
  label(g, LEFT + WIDTH / 2, y + 31, name + ' (' + unit + ')', 'axis-label', 'middle');
}
function legend(svg, y, keys) {
  const g = el('g', {class: 'legend'}, svg);
  let x = LEFT;
  for (const k of keys) {
    el('rect', {x: x, y: y, width: 10, height: 10, fill: COLORS[k] || '#999'}, g);
    label(g, x + 14, y + 9, k);
    x += 24 + 7 * k.length;
  }
}
function svgIn(div, height) {
  return el('svg', {width: LEFT + WIDTH + 40, height: height, viewBox: '0 0 ' + (LEFT + WIDTH + 40) + ' ' + height}, div);
}
function breakdown(div, job) {
  const parts = job.breakdown.filter(p => p[1] > 0);
  const total = parts.reduce((a, p) => a + p[1], 0);
  const svg = svgIn(div, 90);
  let x = LEFT;
  for (const [key, s] of parts) {
    const w = total > 0 ? s / total * WIDTH : 0;
    const r = el('rect', {x: x, y: 10, width: w, height: 24, fill: COLORS[key] || '#999', class: 'bd-seg', 'data-key': key, 'data-seconds': s}, svg);
    el('title', {}, r).textContent = key + ': ' + fmt(s * 1e3) + ' ms';
    x += w;
  }
  label(svg, LEFT - 8, 27, 'critical stage', '', 'end');
  axis(svg, 40, total * 1e3, 'time', 'ms');
  legend(svg, 78, parts.map(p => p[0]));
}
function timeline(div, tip, job) {
  const t = job.timeline, ROW = 14, GAP = 8;
  let rows = 0;
  for (const g of t.groups) rows += g.tracks.length;
  const height = rows * ROW + t.groups.length * GAP + 70;
  const svg = svgIn(div, height);
  const scale = WIDTH / job.end_us;
  let y = 4;
  for (const g of t.groups) {
    label(svg, 4, y + 11, g.label, 'group-label');
    for (const track of g.tracks) {
      label(svg, LEFT - 8, y + 11, track.stream, '', 'end');
      const row = el('g', {class: 'track', 'data-stage': g.stage, 'data-stream': track.stream}, svg);
      for (let i = 0; i < track.slices.length; ++i) {
        const s = track.slices[i];
        el('rect', {x: LEFT + s[0] * scale, y: y + 1, width: Math.max(s[1] * scale, 0.3), height: ROW - 2,
          fill: COLORS[t.phases[s[3]]] || '#999', class: 'slice', 'data-stage': g.stage, 'data-n': s[2],
          'data-t': s[0], 'data-d': s[1]}, row);
      }
      y += ROW;
    }
    y += GAP;
  }
  axis(svg, y, job.end_us / 1e3, 'time', 'ms');
  legend(svg, y + 40, t.phases);
  svg.addEventListener('mousemove', function (e) {
    const r = e.target;
    if (!r.classList || !r.classList.contains('slice')) { tip.style.display = 'none'; return; }
    tip.textContent = t.names[+r.getAttribute('data-n')] + ': ' + fmt(+r.getAttribute('data-t') / 1e3) +
      ' ms + ' + fmt(+r.getAttribute('data-d')) + ' µs';
    tip.style.left = (e.clientX + 12) + 'px';
    tip.style.top = (e.clientY + 12) + 'px';
    tip.style.display = 'block';
  });
}
function memory(div, job) {
  const m = job.memory, ROW = 18;
  const height = m.stages.length * ROW + 70;
  const svg = svgIn(div, height);
  let max = m.capacity_gib;
  for (const s of m.stages) max = Math.max(max, s.parts.reduce((a, p) => a + p[1], 0));
  const scale = WIDTH / max;
  m.stages.forEach(function (s, i) {
    const y = 4 + i * ROW;
    label(svg, LEFT - 8, y + 12, 'stage ' + s.stage, '', 'end');
    let x = LEFT;
    for (const [k, v] of s.parts) {
      el('rect', {x: x, y: y + 2, width: v * scale, height: ROW - 4, fill: COLORS[k], class: 'mem-seg'}, svg);
      x += v * scale;
    }
  });
  const bottom = 4 + m.stages.length * ROW;
  if (m.capacity_gib > 0) {
    const x = LEFT + m.capacity_gib * scale;
    el('line', {x1: x, y1: 2, x2: x, y2: bottom, stroke: '#c00', 'stroke-dasharray': '4 3'}, svg);
    label(svg, x - 4, 12, 'capacity ' + fmt(m.capacity_gib) + ' GiB', '', 'end');
  }
  axis(svg, bottom, max, 'memory per GPU', 'GiB');
  legend(svg, bottom + 40, m.stages[0].parts.map(p => p[0]));
}
function links(div, job) {
  const ROW = 16, height = job.links.length * ROW + 70;
  const svg = svgIn(div, height);
  const scale = WIDTH / job.end_us;
  job.links.forEach(function (l, i) {
    const y = 4 + i * ROW;
    label(svg, LEFT - 8, y + 12, l.name.length > 30 ? l.name.slice(0, 29) + '…' : l.name, '', 'end');
    for (let k = 0; k < l.points.length; ++k) {
      const start = l.points[k][0], end = k + 1 < l.points.length ? l.points[k + 1][0] : job.end_us;
      if (l.points[k][1] <= 0) continue;
      el('rect', {x: LEFT + start * scale, y: y + 1, width: Math.max((end - start) * scale, 0.3), height: ROW - 2,
        fill: '#e15759', 'fill-opacity': l.points[k][1], class: 'link-seg'}, svg);
    }
  });
  const bottom = 4 + job.links.length * ROW;
  axis(svg, bottom, job.end_us / 1e3, 'time', 'ms');
  label(svg, LEFT, bottom + 50, 'colour depth: utilisation, 0 to 100 %');
}
function sortable(table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    let ascending = true;
    th.addEventListener('click', function () {
      const body = table.tBodies[0], rows = Array.from(body.rows);
      rows.sort(function (a, b) {
        const x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
        const nx = parseFloat(x), ny = parseFloat(y);
        const c = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
        return ascending ? c : -c;
      });
      ascending = !ascending;
      for (const r of rows) body.appendChild(r);
    });
  });
}
try {
  const data = JSON.parse(document.getElementById('orrery-data').textContent);
  document.querySelectorAll('section.job').forEach(function (section) {
    const job = data.jobs[+section.getAttribute('data-job')];
    breakdown(section.querySelector('.breakdown'), job);
    if (job.timeline) timeline(section.querySelector('.timeline'), section.querySelector('.tooltip'), job);
    if (job.memory) memory(section.querySelector('.memory'), job);
    if (job.links.length) links(section.querySelector('.links'), job);
  });
  document.querySelectorAll('table.sortable').forEach(sortable);
  document.body.setAttribute('data-status', 'ok');
} catch (e) {
  document.body.setAttribute('data-status', 'error: ' + e.message);
}
})();
)";

// JSON inside <script>: "</" would end the element.
std::string script_safe(const std::string& json) {
  std::string out;
  for (size_t i = 0; i < json.size(); ++i) {
    out += json[i];
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') out += "\\";
  }
  return out;
}

}  // namespace

void write_html_report(std::ostream& out, const std::vector<Result>& results,
                       const std::vector<std::pair<std::string, std::string>>& inputs) {
  ordered_json data = {{"jobs", ordered_json::array()}};
  for (const Result& r : results)
    data["jobs"].push_back(job_data(r));
  const std::string title =
      results.empty() ? "Orrery report" : "Orrery report: " + results.front().workload;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << escape(title)
      << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n<h1>" << escape(title)
      << "</h1>\n<div class=\"inputs\"><h3>Inputs</h3><table class=\"facts\">";
  for (const auto& [name, value] : inputs)
    out << "<tr><th>" << escape(name) << "</th><td>" << escape(value) << "</td></tr>";
  out << "</table></div>\n";
  for (size_t k = 0; k < results.size(); ++k)
    write_job(out, results[k], k, results.size() > 1);
  out << "<script type=\"application/json\" id=\"orrery-data\">" << script_safe(data.dump())
      << "</script>\n<script>" << kScript << "</script>\n</body></html>\n";
}

}  // namespace orrery
