// Noise drawn ahead on background threads (see noise/prefetch.h).
#include "dpgnn/noise/prefetch.h"

#include <string.h>  // explicit_bzero

#include <algorithm>

#include "dpgnn/noise/discrete_gaussian.h"
#include "dpgnn/util/error.h"

namespace dpgnn::noise {

void add_discrete_gaussian_noise_threads(double* grid_sum, std::size_t n, std::uint64_t variance, const Secret& key,
                                         std::uint64_t step, int threads, const std::atomic<bool>* cancel) {
  const std::size_t chunks = noise_chunks(n);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mu;
  // Chunks are taken in turn from a shared counter; which thread draws a chunk does not
  // matter, each reads its own substream (noise/discrete_gaussian.h).
  auto work = [&] {
    try {
      for (std::size_t c; (c = next.fetch_add(1)) < chunks;) {
        if (failed.load(std::memory_order_relaxed) || (cancel != nullptr && cancel->load(std::memory_order_relaxed)))
          return;
        add_discrete_gaussian_noise_chunk(grid_sum, n, variance, key, step, c);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  const int helpers =
      static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), chunks)) - 1;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(std::max(helpers, 0)));
  for (int i = 0; i < helpers; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

NoisePrefetcher::NoisePrefetcher(const Secret& key, std::size_t n, int threads)
    : key_(key), n_(n), threads_(std::max(threads, 1)) {
  worker_ = std::thread([this] { run(); });
}

NoisePrefetcher::~NoisePrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& s : slots_) s.cancel = true;
  }
  cv_.notify_all();
  worker_.join();
  // The vectors are as secret as the key for their steps.
  for (auto& s : slots_)
    if (!s.noise.empty()) explicit_bzero(s.noise.data(), s.noise.size() * sizeof(double));
  explicit_bzero(key_.bytes.data(), key_.bytes.size());
}

NoisePrefetcher::Slot* NoisePrefetcher::find(std::uint64_t step, std::uint64_t variance) {
  for (auto& s : slots_)
    if (s.state != State::empty && s.step == step && s.variance == variance) return &s;
  return nullptr;
}

void NoisePrefetcher::request(std::uint64_t step, std::uint64_t variance) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (find(step, variance) != nullptr) return;
    // A free slot; else the oldest finished one; else the one still waiting for the thread
    // (a newer request replaces an older one nobody consumed). A slot being drawn or read
    // is never taken.
    Slot* pick = nullptr;
    for (auto& s : slots_)
      if (s.state == State::empty) pick = &s;
    for (int pass = 0; pass < 2 && pick == nullptr; ++pass)
      for (auto& s : slots_) {
        const bool eligible =
            pass == 0 ? (s.state == State::ready || s.state == State::failed) : s.state == State::queued;
        if (eligible && (pick == nullptr || s.order < pick->order)) pick = &s;
      }
    if (pick == nullptr) return;  // both busy (one drawing, one being read): add_to will draw it
    pick->step = step;
    pick->variance = variance;
    pick->order = ++order_;
    pick->error = nullptr;
    pick->cancel = false;
    pick->state = State::queued;
  }
  cv_.notify_all();
}

void NoisePrefetcher::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Slot* job = nullptr;
    cv_.wait(lock, [&] {
      if (stop_) return true;
      for (auto& s : slots_)
        if (s.state == State::queued && (job == nullptr || s.order < job->order)) job = &s;
      return job != nullptr;
    });
    if (stop_) return;
    job->state = State::running;
    const std::uint64_t step = job->step, variance = job->variance;
    lock.unlock();
    std::exception_ptr error;
    try {
      if (job->noise.size() != n_) job->noise.assign(n_, 0.0);
      else std::fill(job->noise.begin(), job->noise.end(), 0.0);
      add_discrete_gaussian_noise_threads(job->noise.data(), n_, variance, key_, step, threads_, &job->cancel);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (job->cancel) {
      job->state = State::empty;
    } else if (error) {
      job->error = error;
      job->state = State::failed;
    } else {
      job->state = State::ready;
    }
    cv_.notify_all();
  }
}

void NoisePrefetcher::add_to(double* grid_sum, std::uint64_t step, std::uint64_t variance) {
  std::unique_lock<std::mutex> lock(mu_);
  Slot* slot = find(step, variance);
  if (slot != nullptr && slot->state != State::reading) {
    cv_.wait(lock, [&] { return slot->state == State::ready || slot->state == State::failed; });
    if (slot->state == State::failed) {
      const std::exception_ptr error = slot->error;
      slot->error = nullptr;
      slot->state = State::empty;
      ++misses_;
      std::rethrow_exception(error);
    }
    slot->state = State::reading;
    ++hits_;
    lock.unlock();
    const double* noise = slot->noise.data();
    for (std::size_t i = 0; i < n_; ++i) grid_sum[i] += noise[i];  // = the direct call's sum, bit for bit
    lock.lock();
    slot->state = State::empty;  // consumed: a step's noise is added once
    cv_.notify_all();
    return;
  }
  // Not prefetched for this (step, variance): a draw for the same step with another variance
  // is stale (the variance was recalibrated), stop it.
  for (auto& s : slots_) {
    if (s.step != step) continue;
    if (s.state == State::running) s.cancel = true;
    if (s.state == State::queued || s.state == State::ready || s.state == State::failed) s.state = State::empty;
  }
  ++misses_;
  // A cancelled draw stops at its next chunk; wait for it, so that its slot is free before this
  // returns and the next requests find both slots (otherwise whether step t + 1 is prefetched
  // would depend on the thread's timing).
  cv_.wait(lock, [&] {
    for (const auto& s : slots_)
      if (s.state == State::running && s.cancel) return false;
    return true;
  });
  lock.unlock();
  add_discrete_gaussian_noise_threads(grid_sum, n_, variance, key_, step, threads_);
}

}  // namespace dpgnn::noise
