#include "training/backward_estimate.h"

#include <cmath>
#include <sstream>
#include <vector>

namespace orrery {

void estimate_backward(Workload& w, double ratio, Diagnostics& diagnostics) {
  if (!w.forward_times_only) return;
  const size_t n = w.program.layers.size();
  std::vector<bool> has_parameters(n, false), in_pass(n, false);
  for (const size_t i : w.forward_times_only->parameter_layers)
    if (i < n) has_parameters[i] = true;
  for (const LayerRange& pass : w.program.micro_batches)
    for (size_t i = pass.begin; i < pass.end && i < n; ++i)
      in_pass[i] = true;
  // Every sum in double first: no Time is formed until the total is known to fit. Iteration-level
  // rows (the optimizer) have no backward.
  double total_ms = 0;
  for (size_t i = 0; i < n; ++i) {
    const Layer& layer = w.program.layers[i];
    total_ms += (in_pass[i] ? 1 + ratio : 1) * layer.forward.compute.milliseconds() +
                (layer.input_grad.compute + layer.weight_grad.compute).milliseconds();
    if (total_ms > kMaxIterationComputeMs) {
      std::ostringstream text;
      text << "expected at most 1e9 ms (11.6 days) of compute per iteration; with the backward "
              "estimated as "
           << ratio << " x forward (--backward-ratio) the rows up to this one hold " << total_ms
           << " ms";
      throw InputError({w.source, layer.line}, text.str());
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!in_pass[i]) continue;
    Layer& layer = w.program.layers[i];
    const double backward_ps = static_cast<double>(layer.forward.compute.ps()) * ratio;
    if (has_parameters[i]) {
      layer.input_grad.compute += Time::from_ps(std::llround(backward_ps / 2));
      layer.weight_grad.compute += Time::from_ps(std::llround(backward_ps / 2));
    } else {
      layer.input_grad.compute += Time::from_ps(std::llround(backward_ps));
    }
  }
  w.forward_times_only.reset();
  std::ostringstream text;
  text << "the file gives forward times only (NeuSight without is_train): backward times are "
          "assumed to be "
       << ratio
       << " x forward, a ratio the file does not give (--backward-ratio), split evenly between "
          "input and weight gradient for layers with parameters";
  diagnostics.warn({w.source, 0}, text.str());
}

}  // namespace orrery
