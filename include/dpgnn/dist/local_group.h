// n ranks in one process: communicators whose collectives run across n threads.
//
// For fast multi-rank unit tests of the code above dist/ (the trainer's tests), without
// mpiexec. `LocalGroup group(n)` owns n communicators; rank r's thread calls collectives
// on `group.comm(r)`. Semantics are those of communicator.h, with two extra checks that
// MPI cannot make: every rank must call the same collective with the same dtype and
// agreeing counts, otherwise all ranks throw UsageError (MPI would hang or corrupt), and a
// rank that does not reach a collective within the timeout makes the others throw IoError
// instead of hanging the test. Sums are taken in rank order 0..n-1, so all ranks get
// bitwise identical results (MPI and NCCL may use another order).
//
// Each collective is two barriers: ranks publish their buffer pointers, wait for all,
// read their peers' buffers into their own outputs, and wait again so no rank reuses an
// input that a peer is still reading.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dpgnn/dist/communicator.h"

namespace dpgnn::dist {

class LocalGroup {
 public:
  // Throws UsageError when size < 1.
  explicit LocalGroup(int size,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(60000));
  ~LocalGroup();
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;

  int size() const;
  Communicator& comm(int rank);

  // Runs fn(comm(r)) on one thread per rank and joins them. When a rank throws, the group
  // is aborted (ranks waiting in a collective throw IoError, like MPI_Abort ending the
  // job) and the first rank's exception is rethrown here. An aborted group stays aborted.
  void run(const std::function<void(Communicator&)>& fn);
  // Makes every pending and future collective of the group throw IoError(reason).
  void abort(const std::string& reason);

  struct State;

 private:
  std::shared_ptr<State> state_;
  std::vector<std::unique_ptr<Communicator>> comms_;
};

}  // namespace dpgnn::dist
