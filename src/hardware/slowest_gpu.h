// The pace of a job whose GPUs wait for each other every step: that of its slowest GPU
// (docs/compute-model.md, "The slowest GPU sets the pace"). Dimensionless shares of a rate.
//
// GPUs of one kind held at their board power limit settle at different clocks (chips differ in
// leakage and voltage), so their sustained matrix rates scatter about the typical GPU's, the one
// the kernel constants describe, with a coefficient of variation c (the device's
// efficiency.rate_spread). Tensor-parallel collectives, pipeline transfers and the
// data-parallel gradient reduction make every GPU of a training job wait for the slowest, so with
// the rates normal the job's GPUs compute at
//
//   pace(c, n) = 1 - c * z(n)          of the typical rate, where
//   z(n) = E[max of n standard normals] = integral of x d(Phi(x)^n)
//
// (z(1) = 0, z(2) = 0.564, z(8) = 1.424, z(64) = 2.344, z(512) = 3.044). Only power-limited
// kernels, those on the matrix units, see the spread: memory-bound ones run below the limit, at
// the clock every GPU reaches.
#pragma once

#include <cstdint>

namespace orrery {

// z(n): the expected largest of n independent standard normal values (n >= 1).
double expected_max_of_normals(int64_t n);

// pace(c, n), never below 0.5 (a spread that large describes a broken GPU, not a fleet).
double slowest_gpu_pace(double rate_spread, int64_t gpus);

}  // namespace orrery
