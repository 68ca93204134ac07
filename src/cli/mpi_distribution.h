// A design-space search split over MPI ranks (explore::Distribution): flags of done points
// broadcast from rank 0, evaluations gathered on rank 0 as fixed-size records. Only the
// orrery-mpi executable links this (and libmpi).
#pragma once

#include <vector>

#include "explore/search.h"

namespace orrery {

class MpiDistribution : public explore::Distribution {
 public:
  MpiDistribution();  // after MPI_Init
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  bool share_go(bool go) override;
  void share_done(std::vector<char>& done) override;
  std::vector<explore::IndexedEvaluation> gather(
      const std::vector<explore::IndexedEvaluation>& mine) override;

 private:
  int rank_ = 0, ranks_ = 1;
};

}  // namespace orrery
