// Turning an error that every rank meets into one clean shutdown (CollectiveError), without
// tying util/ to MPI: the caller passes the all-reduce.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn {

// Runs `fn` on this rank. An Error that every rank meets alike (a bad option, a missing or
// malformed data file) ends the job as one CollectiveError: rank 0 reports it and every rank
// exits with its code, without an abort banner. An error on some ranks only is rethrown there
// (the abort path, so that no rank waits forever); the others go on to the next collective,
// where the abort ends them. `sum_over_ranks(std::int64_t)` is the caller's all-reduce (sum)
// of one count, and every rank must reach this call.
template <class Fn, class SumOverRanks>
void on_every_rank(int rank, int size, SumOverRanks&& sum_over_ranks, Fn&& fn) {
  std::exception_ptr error;
  std::string message;
  int code = 0;
  std::int64_t failed = 0;
  try {
    fn();
  } catch (const CollectiveError&) {
    throw;  // already thrown alike on every rank
  } catch (const Error& e) {
    error = std::current_exception();
    message = e.what();
    code = e.exit_code();
    failed = 1;
  }
  if (sum_over_ranks(failed) == size) throw CollectiveError(message, code, rank == 0);
  if (error) std::rethrow_exception(error);
}

}  // namespace dpgnn
