// A small mixed-integer linear program, minimised with COIN-OR CBC (Debian's coinor-libcbc): add
// variables with their objective coefficients, add rows lb <= sum(coef * var) <= ub, solve.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace orrery {

struct MilpSolution {
  bool found = false;           // a feasible solution exists (values are valid)
  bool proven_optimal = false;  // CBC closed the gap (within the relative gap asked)
  double objective = 0;
  std::vector<double> values;  // per variable
};

class Milp {
 public:
  static constexpr double kInfinity = 1e30;

  size_t add_binary(double cost);
  size_t add_continuous(double lower, double upper, double cost);
  void add_row(const std::vector<std::pair<size_t, double>>& terms, double lower, double upper);

  // time_limit_s <= 0: none; relative_gap <= 0: prove optimality.
  MilpSolution solve(double time_limit_s, double relative_gap) const;


 private:
  std::vector<double> cost_, lower_, upper_;
  std::vector<bool> integer_;
  struct Row {
    std::vector<std::pair<size_t, double>> terms;
    double lower, upper;
  };
  std::vector<Row> rows_;
};

}  // namespace orrery
