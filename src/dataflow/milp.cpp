#include "dataflow/milp.h"

#include <coin/CbcModel.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

namespace orrery {

size_t Milp::add_binary(double cost) {
  cost_.push_back(cost);
  lower_.push_back(0);
  upper_.push_back(1);
  integer_.push_back(true);
  return cost_.size() - 1;
}

size_t Milp::add_continuous(double lower, double upper, double cost) {
  cost_.push_back(cost);
  lower_.push_back(lower);
  upper_.push_back(upper);
  integer_.push_back(false);
  return cost_.size() - 1;
}

void Milp::add_row(const std::vector<std::pair<size_t, double>>& terms, double lower,
                   double upper) {
  rows_.push_back({terms, lower, upper});
}

MilpSolution Milp::solve(double time_limit_s, double relative_gap) const {
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, static_cast<int>(cost_.size()));
  std::vector<double> row_lower, row_upper;
  for (const Row& row : rows_) {
    CoinPackedVector v;
    for (const auto& [var, coef] : row.terms)
      v.insert(static_cast<int>(var), coef);
    matrix.appendRow(v);
    row_lower.push_back(row.lower <= -kInfinity ? -COIN_DBL_MAX : row.lower);
    row_upper.push_back(row.upper >= kInfinity ? COIN_DBL_MAX : row.upper);
  }
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, lower_.data(), upper_.data(), cost_.data(), row_lower.data(),
                     row_upper.data());
  for (size_t i = 0; i < integer_.size(); ++i)
    if (integer_[i]) solver.setInteger(static_cast<int>(i));

  CbcModel model(solver);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  if (time_limit_s > 0) model.setMaximumSeconds(time_limit_s);
  if (relative_gap > 0) model.setAllowableFractionGap(relative_gap);
  model.branchAndBound();

  MilpSolution s;
  const double* best = model.bestSolution();
  s.found = best != nullptr;
  s.proven_optimal = s.found && model.isProvenOptimal();
  if (s.found) {
    s.objective = model.getObjValue();
    s.values.assign(best, best + cost_.size());
  }
  return s;
}

}  // namespace orrery
