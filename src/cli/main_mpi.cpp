// The `orrery-mpi` command: `orrery explore` split over MPI ranks (mpirun -np K orrery-mpi
// explore ...; docs/explore.md, "More than one machine"). A separate executable, so that the
// plain orrery binary does not link libmpi. Rank 0 writes the answer and the database; the other
// ranks evaluate their share and print nothing, errors included (every rank parses the same
// command, so rank 0 reports any error once).
#include <mpi.h>

#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "cli/mpi_distribution.h"
#include "core/allocator_tuning.h"
#include "core/diagnostics.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  orrery::keep_freed_memory_for_reuse();
  int status = 0;
  {
    orrery::MpiDistribution distribution;
    const bool root = distribution.rank() == 0;
    if (!root) std::cout.setstate(std::ios::failbit);
    CLI::App app{"orrery-mpi: `orrery explore` split over MPI ranks", "orrery-mpi"};
    app.require_subcommand(1);
    const auto explore = orrery::add_explore_command(app, &distribution);
    try {
      app.parse(argc, argv);
      status = explore();
    } catch (const CLI::ParseError& e) {
      status = root ? app.exit(e) : 2;
    } catch (const orrery::InputError& e) {
      if (root) std::cerr << "orrery-mpi: " << e.what() << "\n";
      status = 2;
    } catch (const std::exception& e) {
      if (root) std::cerr << "orrery-mpi: internal error: " << e.what() << "\n";
      status = 1;
    }
  }
  MPI_Finalize();
  return status;
}
