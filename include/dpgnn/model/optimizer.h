// Optimisers over the flat parameter buffer: SGD (momentum, weight decay) and Adam.
//
// DP-SGD (Abadi et al. 2016, Alg. 1) and DP-Adam take the noisy sum
//   g_tilde = sum_s clip(g_s) + N(0, sigma^2 I)
// and use g = g_tilde / m with m the (fixed) batch size of the sampling scheme, then the usual
// update. The noise is added by the trainer at rank 0 only (DESIGN.md decision 7), so the
// interface takes the already-noised flat sum; non-private training passes the plain
// gradient sum and the same m. Dividing by the fixed m (not by the number of examples
// actually present on this rank) keeps the update identical on every rank.
//   SGD  (PyTorch torch.optim.SGD semantics, dampening 0):
//        g += wd * p;  buf = mu * buf + g (buf = g at the first step);
//        p -= lr * (nesterov ? g + mu * buf : buf)
//   Adam (Kingma & Ba 2015, Alg. 1; L2 weight decay added to g as torch.optim.Adam):
//        m1 = b1 m1 + (1-b1) g;  m2 = b2 m2 + (1-b2) g^2;
//        p -= lr * (m1 / (1-b1^t)) / (sqrt(m2 / (1-b2^t)) + eps)
// State is exposed as named tensors for checkpoints.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dpgnn::model {

enum class OptimizerType { kSgd, kAdam };
// "sgd", "adam"; UsageError naming train.optimizer otherwise.
OptimizerType parse_optimizer(const std::string& name);

struct OptimizerConfig {
  OptimizerType type = OptimizerType::kSgd;
  double lr = 0.01;
  double weight_decay = 0.0;
  double momentum = 0.0;   // SGD
  bool nesterov = false;   // SGD
  double beta1 = 0.9;      // Adam
  double beta2 = 0.999;    // Adam
  double eps = 1e-8;       // Adam
  // UsageError naming "train.<key>" when a value is out of range.
  void validate() const;
};

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Updates params [P] in place (under NoGradGuard) from grad_sum [P] summed over a batch of
  // batch_size examples. batch_size must be >= 1.
  void step(const at::Tensor& params, const at::Tensor& grad_sum, std::int64_t batch_size);
  std::int64_t steps_taken() const { return steps_; }
  // Named state tensors (copies): "step" (CPU int64 scalar) plus the algorithm's buffers.
  virtual NamedTensors state() const = 0;
  // Restores state(); DataError naming the entry when one is missing or mis-shaped.
  virtual void load_state(const NamedTensors& state) = 0;

 protected:
  virtual void update(const at::Tensor& params, const at::Tensor& g) = 0;
  std::int64_t steps_ = 0;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config,
                                          std::int64_t num_parameters, c10::Device device,
                                          c10::ScalarType dtype = c10::ScalarType::Float);

// Sets LibTorch's intra-op threads and OpenBLAS's threads together (the two pools must not
// both run free, see util/system.h).
void set_compute_threads(int threads);

}  // namespace dpgnn::model
