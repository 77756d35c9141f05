// A rank's communicators, owned together: MPI for host buffers (start-up state, stop flags,
// checkpoints, halo plans) and, when the run is on a GPU, NCCL on the rank's GPU for buffers in
// its memory (the gradient all-reduce, halo rows). `train` and `audit` open them here once;
// `for_buffer` picks the one that serves a buffer where it lives.
#pragma once

#include <memory>

#include "dpgnn/dist/communicator.h"

namespace dpgnn::dist {

class Collectives {
 public:
  // Collective (needs init_environment()): the host communicator, and the device one when
  // `on_gpu` (cuda_device: the pinned GPU, or -1 for the local rank's).
  static Collectives open(bool on_gpu, int cuda_device = -1);

  Communicator& host() const { return *host_; }
  // The device communicator, or nullptr (CPU runs; then GPU buffers are staged through host).
  Communicator* device() const { return device_.get(); }
  // The communicator that moves a buffer at `location` without a copy, or nullptr when none
  // can (a GPU buffer without a device communicator: stage it through host memory).
  Communicator* for_buffer(BufferLocation location) const {
    return location == BufferLocation::host ? host_.get() : device_.get();
  }

 private:
  Collectives(std::unique_ptr<Communicator> host, std::unique_ptr<Communicator> device)
      : host_(std::move(host)), device_(std::move(device)) {}
  std::unique_ptr<Communicator> host_;
  std::unique_ptr<Communicator> device_;
};

}  // namespace dpgnn::dist
