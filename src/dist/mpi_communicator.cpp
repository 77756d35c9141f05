// MPI implementation of Communicator for host buffers (see mpi_communicator.h).
//
// MPI takes counts and displacements as `int`. Every call is split so that no count or
// displacement passed to MPI exceeds max_elements_per_call (INT_MAX by default):
//   all-reduce, broadcast: consecutive chunks of the buffer, one call each;
//   all-gather(v):         MPI_Allgather(v) when the whole receive buffer fits in one
//                          call, otherwise each rank's block is broadcast from its owner
//                          in chunks;
//   all-to-all-v:          MPI_Alltoallv when every rank's send and receive totals fit
//                          (agreed by a one-int all-reduce, as counts differ per rank),
//                          otherwise point-to-point chunks (MPI keeps messages between one
//                          pair of ranks with one tag in order, so chunks need no numbering).
// all-gather(v) needs no agreement: its counts are the same on every rank.
// Pointer arithmetic is done in bytes (char*) with size_t offsets, never in int.
#include "dpgnn/dist/mpi_communicator.h"

#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "dpgnn/util/error.h"
#include "mpi_check.h"

namespace dpgnn::dist {
namespace {

MPI_Datatype to_mpi(DType dtype) {
  switch (dtype) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::u8: return MPI_UINT8_T;
  }
  throw UsageError("dist: MPI: unknown dtype");
}

constexpr int kChunkTag = 7001;
// send/recv: chunks of one message keep their order (one pair of ranks, one tag).
constexpr int kPointToPointTag = 7002;

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(std::size_t max_per_call) : max_per_call_(max_per_call) {
    int initialized = 0;
    MPI_CHECK(MPI_Initialized(&initialized));
    if (!initialized)
      throw UsageError("dist: MPI communicator requested before MPI was initialised: call "
                       "dist::init_environment() first");
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    MPI_CHECK(MPI_Comm_size(comm_, &size_));
  }

  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);  // no throw in a destructor
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  BufferLocation location() const override { return BufferLocation::host; }
  const char* backend() const override { return "mpi"; }

 protected:
  void do_allreduce_sum(void* buf, std::size_t count, DType dtype) override {
    const std::size_t elem = dtype_size(dtype);
    char* bytes = static_cast<char*>(buf);
    for (std::size_t done = 0; done < count; done += max_per_call_) {
      const int n = chunk(count - done);
      MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, bytes + done * elem, n, to_mpi(dtype), MPI_SUM, comm_));
    }
  }

  void do_broadcast(void* buf, std::size_t count, DType dtype, int root) override {
    chunked_bcast(static_cast<char*>(buf), count, dtype, root);
  }

  void do_allgather(const void* send, void* recv, std::size_t count_per_rank,
                    DType dtype) override {
    // The total, not just one block, must fit: MPI implementations index the receive
    // buffer with int arithmetic in some algorithms.
    if (count_per_rank * static_cast<std::size_t>(size_) <= max_per_call_) {
      MPI_CHECK(MPI_Allgather(send, static_cast<int>(count_per_rank), to_mpi(dtype), recv,
                              static_cast<int>(count_per_rank), to_mpi(dtype), comm_));
      return;
    }
    gather_by_broadcasts(send, recv, std::vector<std::size_t>(size_, count_per_rank), dtype);
  }

  void do_allgatherv(const void* send, std::size_t send_count, void* recv,
                     const std::vector<std::size_t>& recv_counts, DType dtype) override {
    std::vector<int> counts, displs;
    if (fits(recv_counts, &counts, &displs)) {
      MPI_CHECK(MPI_Allgatherv(send, static_cast<int>(send_count), to_mpi(dtype), recv,
                               counts.data(), displs.data(), to_mpi(dtype), comm_));
      return;
    }
    gather_by_broadcasts(send, recv, recv_counts, dtype);
  }

  void do_alltoallv(const void* send, const std::vector<std::size_t>& send_counts, void* recv,
                    const std::vector<std::size_t>& recv_counts, DType dtype) override {
    std::vector<int> scounts, sdispls, rcounts, rdispls;
    // Counts differ between ranks, so whether they fit is agreed on first: a rank calling
    // MPI_Alltoallv while a peer posts point-to-point messages would deadlock.
    int all_fit =
        fits(send_counts, &scounts, &sdispls) && fits(recv_counts, &rcounts, &rdispls) ? 1 : 0;
    if (size_ > 1) MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &all_fit, 1, MPI_INT, MPI_LAND, comm_));
    if (all_fit) {
      MPI_CHECK(MPI_Alltoallv(send, scounts.data(), sdispls.data(), to_mpi(dtype), recv,
                              rcounts.data(), rdispls.data(), to_mpi(dtype), comm_));
      return;
    }
    alltoallv_point_to_point(static_cast<const char*>(send), send_counts,
                             static_cast<char*>(recv), recv_counts, dtype);
  }

  void do_send(const void* buf, std::size_t count, DType dtype, int dest) override {
    const std::size_t elem = dtype_size(dtype);
    const char* bytes = static_cast<const char*>(buf);
    for (std::size_t done = 0; done < count; done += max_per_call_)
      MPI_CHECK(MPI_Send(bytes + done * elem, chunk(count - done), to_mpi(dtype), dest, kPointToPointTag, comm_));
  }

  void do_recv(void* buf, std::size_t count, DType dtype, int source) override {
    const std::size_t elem = dtype_size(dtype);
    char* bytes = static_cast<char*>(buf);
    for (std::size_t done = 0; done < count; done += max_per_call_)
      MPI_CHECK(MPI_Recv(bytes + done * elem, chunk(count - done), to_mpi(dtype), source, kPointToPointTag, comm_,
                         MPI_STATUS_IGNORE));
  }

  void do_barrier() override { MPI_CHECK(MPI_Barrier(comm_)); }

  const void* native_handle() const override { return &comm_; }

 private:
  int chunk(std::size_t remaining) const {
    return static_cast<int>(remaining < max_per_call_ ? remaining : max_per_call_);
  }

  // True when the total of `counts` (so every count and displacement) fits in one MPI
  // call; then fills the int arrays MPI wants.
  bool fits(const std::vector<std::size_t>& counts, std::vector<int>* icounts,
            std::vector<int>* idispls) const {
    icounts->resize(counts.size());
    idispls->resize(counts.size());
    std::size_t offset = 0;
    for (std::size_t p = 0; p < counts.size(); ++p) {
      if (counts[p] > max_per_call_ - offset) return false;  // offset + counts[p] > max
      (*icounts)[p] = static_cast<int>(counts[p]);
      (*idispls)[p] = static_cast<int>(offset);
      offset += counts[p];
    }
    return true;
  }

  void chunked_bcast(char* buf, std::size_t count, DType dtype, int root) {
    const std::size_t elem = dtype_size(dtype);
    for (std::size_t done = 0; done < count; done += max_per_call_)
      MPI_CHECK(MPI_Bcast(buf + done * elem, chunk(count - done), to_mpi(dtype), root, comm_));
  }

  // recv = concatenation of every rank's block: each owner copies its block into place and
  // broadcasts it. Used only when counts exceed one MPI call.
  void gather_by_broadcasts(const void* send, void* recv, const std::vector<std::size_t>& counts,
                            DType dtype) {
    const std::size_t elem = dtype_size(dtype);
    char* out = static_cast<char*>(recv);
    std::size_t offset = 0;
    for (int p = 0; p < size_; ++p) {
      const std::size_t n = counts[static_cast<std::size_t>(p)];
      if (p == rank_ && n > 0) std::memcpy(out + offset * elem, send, n * elem);
      chunked_bcast(out + offset * elem, n, dtype, p);
      offset += n;
    }
  }

  void alltoallv_point_to_point(const char* send, const std::vector<std::size_t>& send_counts,
                                char* recv, const std::vector<std::size_t>& recv_counts,
                                DType dtype) {
    const std::size_t elem = dtype_size(dtype);
    std::vector<MPI_Request> requests;
    std::size_t recv_offset = 0;
    for (int p = 0; p < size_; ++p) {  // post all receives first
      const std::size_t n = recv_counts[static_cast<std::size_t>(p)];
      if (p != rank_)
        for (std::size_t done = 0; done < n; done += max_per_call_) {
          requests.emplace_back();
          MPI_CHECK(MPI_Irecv(recv + (recv_offset + done) * elem, chunk(n - done), to_mpi(dtype),
                              p, kChunkTag, comm_, &requests.back()));
        }
      recv_offset += n;
    }
    std::size_t send_offset = 0;
    for (int p = 0; p < size_; ++p) {
      const std::size_t n = send_counts[static_cast<std::size_t>(p)];
      if (p == rank_) {
        // Communicator::alltoallv checked send_counts[rank] == recv_counts[rank].
        const std::size_t self_recv_offset = prefix(recv_counts, p);
        if (n > 0) std::memcpy(recv + self_recv_offset * elem, send + send_offset * elem, n * elem);
      } else {
        for (std::size_t done = 0; done < n; done += max_per_call_) {
          requests.emplace_back();
          MPI_CHECK(MPI_Isend(send + (send_offset + done) * elem, chunk(n - done), to_mpi(dtype),
                              p, kChunkTag, comm_, &requests.back()));
        }
      }
      send_offset += n;
    }
    if (!requests.empty())
      MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                            MPI_STATUSES_IGNORE));
  }

  static std::size_t prefix(const std::vector<std::size_t>& counts, int upto) {
    std::size_t s = 0;
    for (int q = 0; q < upto; ++q) s += counts[static_cast<std::size_t>(q)];
    return s;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::size_t max_per_call_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(std::size_t max_elements_per_call) {
  if (max_elements_per_call == 0 || max_elements_per_call > kMpiMaxElementsPerCall)
    throw UsageError("dist: make_mpi_communicator: max_elements_per_call must be in [1, INT_MAX], got " +
                     std::to_string(max_elements_per_call));
  return std::make_unique<MpiCommunicator>(max_elements_per_call);
}

}  // namespace dpgnn::dist
