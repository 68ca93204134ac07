#include "cli/mpi_distribution.h"

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>

namespace orrery {
namespace {

// One evaluation on the wire; NaN for an absent figure, ok 0 for a failed point (its message
// stays on the rank that evaluated it).
struct Record {
  uint64_t index = 0;
  uint64_t ok = 0;
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, memory_gib = 0, usd_per_mtoken = 0,
         joules_per_token = 0;
};

constexpr double kAbsent = std::numeric_limits<double>::quiet_NaN();

Record to_record(const explore::IndexedEvaluation& e) {
  Record r;
  r.index = e.index;
  if (const auto& f = e.evaluation.figures) {
    r.ok = 1;
    r.iteration_s = f->iteration_s;
    r.tokens_per_s = f->tokens_per_s;
    r.mfu = f->mfu;
    r.memory_gib = f->memory_gib;
    r.usd_per_mtoken = f->usd_per_mtoken.value_or(kAbsent);
    r.joules_per_token = f->joules_per_token.value_or(kAbsent);
  }
  return r;
}

explore::IndexedEvaluation from_record(const Record& r, int rank) {
  explore::IndexedEvaluation e;
  e.index = r.index;
  if (!r.ok) {
    e.evaluation.error = "failed on rank " + std::to_string(rank);
    return e;
  }
  explore::PointFigures f;
  f.iteration_s = r.iteration_s;
  f.tokens_per_s = r.tokens_per_s;
  f.mfu = r.mfu;
  f.memory_gib = r.memory_gib;
  if (!std::isnan(r.usd_per_mtoken)) f.usd_per_mtoken = r.usd_per_mtoken;
  if (!std::isnan(r.joules_per_token)) f.joules_per_token = r.joules_per_token;
  e.evaluation.figures = f;
  return e;
}

}  // namespace

MpiDistribution::MpiDistribution() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
}

bool MpiDistribution::share_go(bool go) {
  int flag = go ? 1 : 0;
  MPI_Bcast(&flag, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return flag != 0;
}

void MpiDistribution::share_done(std::vector<char>& done) {
  MPI_Bcast(done.data(), static_cast<int>(done.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
}

std::vector<explore::IndexedEvaluation> MpiDistribution::gather(
    const std::vector<explore::IndexedEvaluation>& mine) {
  std::vector<Record> records;
  for (const explore::IndexedEvaluation& e : mine)
    records.push_back(to_record(e));
  const int bytes = static_cast<int>(records.size() * sizeof(Record));
  std::vector<int> counts(static_cast<size_t>(ranks_)), offsets(static_cast<size_t>(ranks_));
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int k = 0; k < ranks_; ++k) {
    offsets[static_cast<size_t>(k)] = total;
    total += counts[static_cast<size_t>(k)];
  }
  std::vector<Record> all(rank_ == 0 ? static_cast<size_t>(total) / sizeof(Record) : 0);
  MPI_Gatherv(records.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE,
              0, MPI_COMM_WORLD);
  std::vector<explore::IndexedEvaluation> out;
  if (rank_ != 0) return out;
  for (int k = 0; k < ranks_; ++k) {
    const size_t first = static_cast<size_t>(offsets[static_cast<size_t>(k)]) / sizeof(Record);
    const size_t n = static_cast<size_t>(counts[static_cast<size_t>(k)]) / sizeof(Record);
    std::cerr << "orrery-mpi: rank 0 received " << n << " points from rank " << k << "\n";
    for (size_t i = first; i < first + n; ++i)
      out.push_back(from_record(all[i], k));
  }
  return out;
}

}  // namespace orrery
