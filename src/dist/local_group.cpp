// In-process communicators: n ranks as n threads sharing one State (see local_group.h).
//
// Protocol of every collective (rank r):
//   1. publish a Call (which collective, dtype, counts, buffer pointers) in slots[r];
//   2. barrier: all ranks have published;
//   3. check that all published Calls agree (every rank checks all of them, so all reach
//      the same verdict); on disagreement go to 5 and throw UsageError;
//   4. read peers' buffers through their slots and write only this rank's own outputs
//      (all-reduce sums into a private buffer first: its input and output are the same);
//   5. barrier: no rank returns, and so reuses an input or republishes its slot, while a
//      peer may still be reading it.
// The barrier is a generation counter under one mutex; waits are bounded by the group's
// timeout, after which (or after abort()) the group is broken and every wait throws.
#include "dpgnn/dist/local_group.h"

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "dpgnn/util/error.h"

namespace dpgnn::dist {

namespace {
enum class Op { allreduce, broadcast, allgather, allgatherv, alltoallv, barrier };

const char* op_name(Op op) {
  switch (op) {
    case Op::allreduce: return "allreduce_sum";
    case Op::broadcast: return "broadcast";
    case Op::allgather: return "allgather";
    case Op::allgatherv: return "allgatherv";
    case Op::alltoallv: return "alltoallv";
    case Op::barrier: return "barrier";
  }
  return "?";
}

struct Call {
  Op op = Op::barrier;
  DType dtype = DType::u8;
  std::size_t count = 0;  // allreduce/broadcast/allgather count; allgatherv send count
  int root = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  const std::vector<std::size_t>* send_counts = nullptr;
  const std::vector<std::size_t>* recv_counts = nullptr;
};

template <class T>
void add_into(T* acc, const void* src, std::size_t count) {
  const T* s = static_cast<const T*>(src);
  for (std::size_t i = 0; i < count; ++i) acc[i] += s[i];
}

void add_into(DType dtype, void* acc, const void* src, std::size_t count) {
  switch (dtype) {
    case DType::f32: add_into(static_cast<float*>(acc), src, count); break;
    case DType::f64: add_into(static_cast<double*>(acc), src, count); break;
    case DType::i32: add_into(static_cast<std::int32_t*>(acc), src, count); break;
    case DType::i64: add_into(static_cast<std::int64_t*>(acc), src, count); break;
    case DType::u8: add_into(static_cast<std::uint8_t*>(acc), src, count); break;
  }
}

std::size_t prefix(const std::vector<std::size_t>& counts, int upto) {
  std::size_t s = 0;
  for (int q = 0; q < upto; ++q) s += counts[static_cast<std::size_t>(q)];
  return s;
}
}  // namespace

struct LocalGroup::State {
  State(int n, std::chrono::milliseconds t) : size(n), timeout(t), slots(static_cast<std::size_t>(n)) {}

  const int size;
  const std::chrono::milliseconds timeout;
  std::vector<Call> slots;

  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::uint64_t generation = 0;
  bool broken = false;
  std::string broken_reason;
  int returned_rank = -1;  // a rank whose LocalGroup::run function returned, or -1

  void barrier(int rank, Op op) {
    std::unique_lock<std::mutex> lock(mu);
    if (broken) throw IoError(broken_reason);
    const std::uint64_t my_generation = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      cv.notify_all();
      return;
    }
    cv.wait_for(lock, timeout, [&] {
      return broken || returned_rank >= 0 || generation != my_generation;
    });
    if (generation != my_generation) return;  // released, even if broken just after
    // Timed out, aborted, or a rank returned: each ends the group for good.
    if (!broken) {
      broken = true;
      broken_reason =
          returned_rank >= 0
              ? "LocalGroup: rank " + std::to_string(rank) + " waits in " + op_name(op) +
                    " but rank " + std::to_string(returned_rank) +
                    " has returned from its function: the ranks called different numbers of "
                    "collectives; the group is aborted"
              : "LocalGroup: rank " + std::to_string(rank) + " waited " +
                    std::to_string(timeout.count()) + " ms in " + op_name(op) +
                    " for ranks that never joined; the group is aborted";
      cv.notify_all();
    }
    throw IoError(broken_reason);
  }

  // Under LocalGroup::run: once a rank's function has returned no barrier can complete,
  // so ranks waiting (or arriving later) fail at once instead of at the timeout.
  void rank_returned(int rank) {
    std::lock_guard<std::mutex> lock(mu);
    if (returned_rank < 0) returned_rank = rank;
    cv.notify_all();
  }

  void abort(const std::string& reason) {
    std::lock_guard<std::mutex> lock(mu);
    if (!broken) {
      broken = true;
      broken_reason = "LocalGroup aborted: " + reason;
    }
    cv.notify_all();
  }

  // Point-to-point messages in flight, by (source, dest), oldest first: send copies its
  // buffer here and returns (buffered, as MPI may do); recv waits for the oldest.
  std::map<std::pair<int, int>, std::deque<std::vector<unsigned char>>> mail;

  void post(int source, int dest, std::vector<unsigned char> message) {
    std::lock_guard<std::mutex> lock(mu);
    if (broken) throw IoError(broken_reason);
    mail[{source, dest}].push_back(std::move(message));
    cv.notify_all();
  }

  std::vector<unsigned char> take(int source, int dest) {
    std::unique_lock<std::mutex> lock(mu);
    auto& box = mail[{source, dest}];
    const bool arrived = cv.wait_for(lock, timeout, [&] { return broken || !box.empty(); });
    if (broken) throw IoError(broken_reason);
    if (!arrived) {
      broken = true;
      broken_reason = "LocalGroup: rank " + std::to_string(dest) + " waited " + std::to_string(timeout.count()) +
                      " ms in recv for a message from rank " + std::to_string(source) + "; the group is aborted";
      cv.notify_all();
      throw IoError(broken_reason);
    }
    std::vector<unsigned char> message = std::move(box.front());
    box.pop_front();
    return message;
  }

  // Empty when every rank's Call agrees; otherwise what disagrees.
  std::string disagreement() const {
    const Call& first = slots[0];
    for (int p = 0; p < size; ++p) {
      const Call& c = slots[static_cast<std::size_t>(p)];
      const std::string who = "rank " + std::to_string(p);
      if (c.op != first.op)
        return who + " called " + op_name(c.op) + " while rank 0 called " + op_name(first.op);
      if (c.op == Op::barrier) continue;
      if (c.dtype != first.dtype)
        return who + " passed dtype " + dtype_name(c.dtype) + " to " + op_name(c.op) +
               " while rank 0 passed " + dtype_name(first.dtype);
      if ((c.op == Op::allreduce || c.op == Op::broadcast || c.op == Op::allgather) &&
          c.count != first.count)
        return who + " passed count " + std::to_string(c.count) + " to " + op_name(c.op) +
               " while rank 0 passed " + std::to_string(first.count);
      if (c.op == Op::broadcast && c.root != first.root)
        return who + " broadcasts from root " + std::to_string(c.root) + " while rank 0 uses root " +
               std::to_string(first.root);
      if (c.op == Op::allgatherv && *c.recv_counts != *first.recv_counts)
        return who + " passed different recv_counts to allgatherv than rank 0";
      if (c.op == Op::alltoallv)
        for (int q = 0; q < size; ++q) {
          const Call& peer = slots[static_cast<std::size_t>(q)];
          const std::size_t sent = (*c.send_counts)[static_cast<std::size_t>(q)];
          const std::size_t expected = (*peer.recv_counts)[static_cast<std::size_t>(p)];
          if (sent != expected)
            return "alltoallv: rank " + std::to_string(p) + " sends " + std::to_string(sent) +
                   " elements to rank " + std::to_string(q) + ", which expects " +
                   std::to_string(expected);
        }
    }
    return "";
  }
};

namespace {

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<LocalGroup::State> state, int rank)
      : state_(std::move(state)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return state_->size; }
  BufferLocation location() const override { return BufferLocation::host; }
  const char* backend() const override { return "local"; }

 protected:
  void do_allreduce_sum(void* buf, std::size_t count, DType dtype) override {
    Call c;
    c.op = Op::allreduce;
    c.dtype = dtype;
    c.count = count;
    c.send = buf;
    collective(c, [&] {
      // Rank order 0..n-1 on every rank: bitwise identical sums everywhere.
      const std::size_t bytes = count * dtype_size(dtype);
      std::vector<unsigned char> acc(static_cast<const unsigned char*>(state_->slots[0].send),
                                     static_cast<const unsigned char*>(state_->slots[0].send) + bytes);
      for (int p = 1; p < size(); ++p)
        add_into(dtype, acc.data(), state_->slots[static_cast<std::size_t>(p)].send, count);
      return acc;
    }, [&](const std::vector<unsigned char>& acc) { std::memcpy(buf, acc.data(), acc.size()); });
  }

  void do_broadcast(void* buf, std::size_t count, DType dtype, int root) override {
    Call c;
    c.op = Op::broadcast;
    c.dtype = dtype;
    c.count = count;
    c.root = root;
    c.send = buf;
    collective(c, [&] {
      if (rank_ != root)
        std::memcpy(buf, state_->slots[static_cast<std::size_t>(root)].send, count * dtype_size(dtype));
      return std::vector<unsigned char>();
    });
  }

  void do_allgather(const void* send, void* recv, std::size_t count_per_rank, DType dtype) override {
    Call c;
    c.op = Op::allgather;
    c.dtype = dtype;
    c.count = count_per_rank;
    c.send = send;
    collective(c, [&] {
      const std::size_t block = count_per_rank * dtype_size(dtype);
      for (int p = 0; p < size(); ++p)
        std::memcpy(static_cast<char*>(recv) + static_cast<std::size_t>(p) * block,
                    state_->slots[static_cast<std::size_t>(p)].send, block);
      return std::vector<unsigned char>();
    });
  }

  void do_allgatherv(const void* send, std::size_t send_count, void* recv,
                     const std::vector<std::size_t>& recv_counts, DType dtype) override {
    Call c;
    c.op = Op::allgatherv;
    c.dtype = dtype;
    c.count = send_count;
    c.send = send;
    c.recv_counts = &recv_counts;
    collective(c, [&] {
      const std::size_t elem = dtype_size(dtype);
      std::size_t offset = 0;
      for (int p = 0; p < size(); ++p) {
        const std::size_t n = recv_counts[static_cast<std::size_t>(p)];
        if (n > 0)
          std::memcpy(static_cast<char*>(recv) + offset * elem,
                      state_->slots[static_cast<std::size_t>(p)].send, n * elem);
        offset += n;
      }
      return std::vector<unsigned char>();
    });
  }

  void do_alltoallv(const void* send, const std::vector<std::size_t>& send_counts, void* recv,
                    const std::vector<std::size_t>& recv_counts, DType dtype) override {
    Call c;
    c.op = Op::alltoallv;
    c.dtype = dtype;
    c.send = send;
    c.send_counts = &send_counts;
    c.recv_counts = &recv_counts;
    collective(c, [&] {
      const std::size_t elem = dtype_size(dtype);
      std::size_t offset = 0;
      for (int p = 0; p < size(); ++p) {
        const Call& peer = state_->slots[static_cast<std::size_t>(p)];
        const std::size_t n = recv_counts[static_cast<std::size_t>(p)];
        // Rank p's block for this rank starts after its blocks for ranks 0..rank-1.
        const std::size_t peer_offset = prefix(*peer.send_counts, rank_);
        if (n > 0)
          std::memcpy(static_cast<char*>(recv) + offset * elem,
                      static_cast<const char*>(peer.send) + peer_offset * elem, n * elem);
        offset += n;
      }
      return std::vector<unsigned char>();
    });
  }

  void do_send(const void* buf, std::size_t count, DType dtype, int dest) override {
    const auto* bytes = static_cast<const unsigned char*>(buf);
    state_->post(rank_, dest, std::vector<unsigned char>(bytes, bytes + count * dtype_size(dtype)));
  }

  void do_recv(void* buf, std::size_t count, DType dtype, int source) override {
    const std::vector<unsigned char> message = state_->take(source, rank_);
    if (message.size() != count * dtype_size(dtype))
      throw UsageError("LocalGroup: rank " + std::to_string(rank_) + " receives " + std::to_string(count) + " " +
                       dtype_name(dtype) + " elements from rank " + std::to_string(source) + ", which sent " +
                       std::to_string(message.size()) + " bytes");
    std::memcpy(buf, message.data(), message.size());
  }

  void do_barrier() override {
    Call c;
    collective(c, [] { return std::vector<unsigned char>(); });
  }

 private:
  // Runs the two-barrier protocol. `work` reads peers' buffers (between the barriers);
  // `finish` writes what must not be written while peers may still read (after them).
  template <class Work, class Finish>
  void collective(const Call& call, Work work, Finish finish) {
    state_->slots[static_cast<std::size_t>(rank_)] = call;
    state_->barrier(rank_, call.op);
    const std::string problem = state_->disagreement();
    std::vector<unsigned char> result;
    if (problem.empty()) result = work();
    state_->barrier(rank_, call.op);
    if (!problem.empty()) throw UsageError("LocalGroup: " + problem);
    finish(result);
  }
  template <class Work>
  void collective(const Call& call, Work work) {
    collective(call, work, [](const std::vector<unsigned char>&) {});
  }

  std::shared_ptr<LocalGroup::State> state_;
  int rank_;
};

}  // namespace

LocalGroup::LocalGroup(int size, std::chrono::milliseconds timeout) {
  if (size < 1) throw UsageError("LocalGroup: size must be >= 1, got " + std::to_string(size));
  if (timeout.count() <= 0)
    throw UsageError("LocalGroup: timeout must be positive, got " + std::to_string(timeout.count()) + " ms");
  state_ = std::make_shared<State>(size, timeout);
  for (int r = 0; r < size; ++r) comms_.push_back(std::make_unique<LocalCommunicator>(state_, r));
}

LocalGroup::~LocalGroup() = default;

int LocalGroup::size() const { return state_->size; }

Communicator& LocalGroup::comm(int rank) {
  if (rank < 0 || rank >= state_->size)
    throw UsageError("LocalGroup: rank " + std::to_string(rank) + " is not in a group of " +
                     std::to_string(state_->size));
  return *comms_[static_cast<std::size_t>(rank)];
}

void LocalGroup::abort(const std::string& reason) { state_->abort(reason); }

void LocalGroup::run(const std::function<void(Communicator&)>& fn) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->returned_rank = -1;  // a previous run's ranks have all returned
  }
  std::mutex first_mu;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(state_->size));
  for (int r = 0; r < state_->size; ++r)
    threads.emplace_back([&, r] {
      try {
        fn(*comms_[static_cast<std::size_t>(r)]);
        state_->rank_returned(r);
      } catch (const std::exception& e) {
        {
          std::lock_guard<std::mutex> lock(first_mu);
          if (!first) first = std::current_exception();
        }
        state_->abort("rank " + std::to_string(r) + " threw: " + e.what());
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(first_mu);
          if (!first) first = std::current_exception();
        }
        state_->abort("rank " + std::to_string(r) + " threw a non-standard exception");
      }
    });
  for (auto& t : threads) t.join();
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->returned_rank = -1;  // the group may be used again, by run() or by hand
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace dpgnn::dist
