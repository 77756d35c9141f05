// Bus-bandwidth factors of nccl-tests (doc/PERFORMANCE.md, "Bus bandwidth"): for a ring
// all-reduce each rank sends and receives 2(n-1)/n of the buffer, for all-gather,
// reduce-scatter and all-to-all (n-1)/n, for broadcast the whole buffer once.
#include "dpgnn/dist/bandwidth.h"

#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::dist {

double busbw_factor(CollectiveKind kind, int ranks) {
  if (ranks < 1) throw UsageError("dist: busbw_factor: ranks must be >= 1, got " + std::to_string(ranks));
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::allreduce: return 2.0 * (n - 1.0) / n;
    case CollectiveKind::allgather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::alltoall: return (n - 1.0) / n;
    case CollectiveKind::broadcast: return 1.0;
  }
  throw UsageError("dist: busbw_factor: unknown collective kind");
}

double algbw(std::size_t bytes, double seconds) {
  return seconds > 0.0 ? static_cast<double>(bytes) / seconds : 0.0;
}

double busbw(CollectiveKind kind, std::size_t bytes, double seconds, int ranks) {
  return algbw(bytes, seconds) * busbw_factor(kind, ranks);
}

}  // namespace dpgnn::dist
