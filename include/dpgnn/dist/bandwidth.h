// Bandwidth figures comparable to the hardware, as nccl-tests reports them.
//
// algbw = bytes / time is what the caller sees. busbw rescales it by the traffic an
// optimal algorithm must put on the slowest link, so that it is comparable to the link's
// peak whatever the number of ranks n (nccl-tests, doc/PERFORMANCE.md):
//   all-reduce        2(n-1)/n
//   all-gather        (n-1)/n   (bytes = the full output)
//   reduce-scatter    (n-1)/n
//   all-to-all        (n-1)/n
//   broadcast         1
// The trainer logs the busbw of its per-step gradient all-reduce; bench/bench_allreduce
// prints time, algbw and busbw per message size.
#pragma once

#include <cstddef>

namespace dpgnn::dist {

enum class CollectiveKind { allreduce, allgather, reduce_scatter, alltoall, broadcast };

// busbw / algbw for `kind` on n ranks. With n == 1 every factor but broadcast's is 0
// (nothing crosses a link), as in nccl-tests. Throws UsageError when n < 1.
double busbw_factor(CollectiveKind kind, int ranks);
// bytes / seconds in bytes per second; 0 when seconds <= 0.
double algbw(std::size_t bytes, double seconds);
// algbw * busbw_factor(kind, ranks), in bytes per second.
double busbw(CollectiveKind kind, std::size_t bytes, double seconds, int ranks);

}  // namespace dpgnn::dist
