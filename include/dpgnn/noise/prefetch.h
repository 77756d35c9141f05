// The discrete Gaussian noise off the critical path (issue 24 item 1): the noise of a step
// depends only on (noise secret, step, variance), not on the data, so rank 0 can draw step
// t + 1's vector on background threads while the ranks compute step t's gradients.
//
// The vector is exactly add_discrete_gaussian_noise's for (key, variance, step) (noise/discrete_gaussian.h:
// the same chunks, each from its own substream, whatever thread draws it), so prefetching
// changes no bit of a run or of its replay. A prefetched vector is used only for the
// (step, variance) it was drawn for: when the variance changes between the request and the
// use (DRW-D's re-sampling, DPAR's recalibration), it is discarded and the noise is drawn
// anew. Each vector is consumed by one add_to (noise is added exactly once per step).
//
// Use (rank 0 only):
//   NoisePrefetcher noise(secrets.noise, P, spare_threads);
//   noise.request(first_step, variance);                 // before the loop
//   for each step t:
//     ... forward/backward, clip, round to the grid ...
//     noise.add_to(grid_sum, t, variance_t);             // waits if still drawing
//     noise.request(t + 1, variance_t);                  // t + 1's noise while t finishes
// Two vectors may be held at once (a request made before the previous one was consumed),
// each of P doubles.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "dpgnn/util/secure_rng.h"

namespace dpgnn::noise {

// grid_sum[i] += Y_i as add_discrete_gaussian_noise does, on `threads` std::threads (the
// caller's included) that take chunks in turn; stops early (with a partial sum) once
// `cancel` becomes true. Rethrows the first exception of any thread after joining all.
void add_discrete_gaussian_noise_threads(double* grid_sum, std::size_t n, std::uint64_t variance, const Secret& key,
                                         std::uint64_t step, int threads,
                                         const std::atomic<bool>* cancel = nullptr);

class NoisePrefetcher {
 public:
  // n: the number of coordinates (P); threads >= 1: how many threads draw one vector (the
  // background thread and threads - 1 helpers; also used by add_to when it draws now).
  NoisePrefetcher(const Secret& key, std::size_t n, int threads);
  // Cancels a draw in progress, joins the thread and zeroes the vectors and the key.
  ~NoisePrefetcher();
  NoisePrefetcher(const NoisePrefetcher&) = delete;
  NoisePrefetcher& operator=(const NoisePrefetcher&) = delete;

  // Starts drawing (step, variance)'s noise in the background unless it is already held or
  // being drawn. Returns at once.
  void request(std::uint64_t step, std::uint64_t variance);
  // grid_sum[i] += Y_i for (step, variance): the prefetched vector when there is one (waiting
  // for its draw to finish), else drawn now on `threads` threads. An exception of the
  // background draw (e.g. a variance outside the sampler's range) is rethrown here.
  void add_to(double* grid_sum, std::uint64_t step, std::uint64_t variance);

  std::size_t size() const { return n_; }
  // add_to calls served by a prefetched vector / drawn on the spot (for logs and tests).
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  enum class State { empty, queued, running, ready, failed, reading };
  struct Slot {
    std::vector<double> noise;
    std::uint64_t step = 0, variance = 0, order = 0;
    State state = State::empty;
    std::exception_ptr error;
    std::atomic<bool> cancel{false};
  };
  void run();
  Slot* find(std::uint64_t step, std::uint64_t variance);

  Secret key_;
  std::size_t n_;
  int threads_;
  Slot slots_[2];
  std::uint64_t order_ = 0;
  std::uint64_t hits_ = 0, misses_ = 0;
  bool stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread worker_;
};

}  // namespace dpgnn::noise
