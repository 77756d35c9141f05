// SGD and Adam over the flat parameter buffer (see include/dpgnn/model/optimizer.h).
#include "dpgnn/model/optimizer.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>  // c10::NoGradGuard: LibTorch 2.x has no at:: alias in ATen.h
#include <ATen/Parallel.h>

#include <cmath>
#include <string>

#include "dpgnn/util/error.h"
#include "dpgnn/util/system.h"

namespace dpgnn::model {
namespace {

const at::Tensor& find_state(const NamedTensors& state, const std::string& name,
                             std::int64_t expected_numel) {
  for (const auto& [key, t] : state) {
    if (key != name) continue;
    if (expected_numel >= 0 && t.numel() != expected_numel) {
      throw DataError("optimizer state", name, "expected " + std::to_string(expected_numel) +
                                                   " values, got " + std::to_string(t.numel()));
    }
    return t;
  }
  throw DataError("optimizer state", name, "missing");
}

std::int64_t load_step(const NamedTensors& state) {
  const std::int64_t step = find_state(state, "step", 1).to(at::kCPU).to(at::kLong).item<std::int64_t>();
  if (step < 0) throw DataError("optimizer state", "step", "must be >= 0");
  return step;
}

at::Tensor step_tensor(std::int64_t step) {
  return at::scalar_tensor(step, at::TensorOptions().dtype(at::kLong));
}

class Sgd final : public Optimizer {
 public:
  Sgd(const OptimizerConfig& c, std::int64_t P, c10::Device device, c10::ScalarType dtype)
      : cfg_(c), momentum_(at::zeros({P}, at::TensorOptions().device(device).dtype(dtype))) {}

  NamedTensors state() const override {
    return {{"step", step_tensor(steps_)}, {"momentum_buffer", momentum_.clone()}};
  }
  void load_state(const NamedTensors& state) override {
    const std::int64_t step = load_step(state);
    c10::NoGradGuard no_grad;
    momentum_.copy_(find_state(state, "momentum_buffer", momentum_.numel()).view_as(momentum_));
    steps_ = step;
  }

 protected:
  void update(const at::Tensor& params, const at::Tensor& g_in) override {
    at::Tensor g = g_in;
    if (cfg_.weight_decay != 0.0) g = g.add(params, cfg_.weight_decay);
    if (cfg_.momentum != 0.0) {
      // torch.optim.SGD: buf = g at the first step, then buf = mu buf + g (dampening 0).
      if (steps_ == 0) {
        momentum_.copy_(g);
      } else {
        momentum_.mul_(cfg_.momentum).add_(g);
      }
      g = cfg_.nesterov ? g.add(momentum_, cfg_.momentum) : momentum_;
    }
    params.add_(g, -cfg_.lr);
  }

 private:
  OptimizerConfig cfg_;
  at::Tensor momentum_;  // [P]
};

class Adam final : public Optimizer {
 public:
  Adam(const OptimizerConfig& c, std::int64_t P, c10::Device device, c10::ScalarType dtype)
      : cfg_(c),
        exp_avg_(at::zeros({P}, at::TensorOptions().device(device).dtype(dtype))),
        exp_avg_sq_(at::zeros({P}, at::TensorOptions().device(device).dtype(dtype))) {}

  NamedTensors state() const override {
    return {{"step", step_tensor(steps_)},
            {"exp_avg", exp_avg_.clone()},
            {"exp_avg_sq", exp_avg_sq_.clone()}};
  }
  void load_state(const NamedTensors& state) override {
    const std::int64_t step = load_step(state);
    c10::NoGradGuard no_grad;
    exp_avg_.copy_(find_state(state, "exp_avg", exp_avg_.numel()).view_as(exp_avg_));
    exp_avg_sq_.copy_(find_state(state, "exp_avg_sq", exp_avg_sq_.numel()).view_as(exp_avg_sq_));
    steps_ = step;
  }

 protected:
  void update(const at::Tensor& params, const at::Tensor& g_in) override {
    at::Tensor g = g_in;
    if (cfg_.weight_decay != 0.0) g = g.add(params, cfg_.weight_decay);
    const double t = static_cast<double>(steps_ + 1);
    exp_avg_.mul_(cfg_.beta1).add_(g, 1.0 - cfg_.beta1);
    exp_avg_sq_.mul_(cfg_.beta2).addcmul_(g, g, 1.0 - cfg_.beta2);
    const double bc1 = 1.0 - std::pow(cfg_.beta1, t);
    const double bc2 = 1.0 - std::pow(cfg_.beta2, t);
    // Same arithmetic as torch.optim.Adam (non-fused): denom = sqrt(v)/sqrt(bc2) + eps.
    const at::Tensor denom = (exp_avg_sq_.sqrt() / std::sqrt(bc2)).add_(cfg_.eps);
    params.addcdiv_(exp_avg_, denom, -cfg_.lr / bc1);
  }

 private:
  OptimizerConfig cfg_;
  at::Tensor exp_avg_, exp_avg_sq_;  // [P] first and second moments
};

}  // namespace

OptimizerType parse_optimizer(const std::string& name) {
  if (name == "sgd") return OptimizerType::kSgd;
  if (name == "adam") return OptimizerType::kAdam;
  throw UsageError("train.optimizer: unknown optimizer '" + name + "' (expected sgd or adam)");
}

void OptimizerConfig::validate() const {
  auto require = [](bool ok, const std::string& key, const std::string& rule, double v) {
    if (!ok) throw UsageError("train." + key + ": must be " + rule + ", got " + std::to_string(v));
  };
  require(std::isfinite(lr) && lr > 0.0, "lr", "finite and > 0", lr);
  require(std::isfinite(weight_decay) && weight_decay >= 0.0, "weight_decay", ">= 0", weight_decay);
  require(momentum >= 0.0 && momentum < 1.0, "momentum", "in [0, 1)", momentum);
  require(!nesterov || momentum > 0.0, "nesterov", "used with momentum > 0", momentum);
  require(beta1 >= 0.0 && beta1 < 1.0, "beta1", "in [0, 1)", beta1);
  require(beta2 >= 0.0 && beta2 < 1.0, "beta2", "in [0, 1)", beta2);
  require(eps > 0.0, "eps", "> 0", eps);
}

void Optimizer::step(const at::Tensor& params, const at::Tensor& grad_sum, std::int64_t batch_size) {
  if (batch_size < 1) {
    throw UsageError("train.batch_size: the optimiser needs a batch size >= 1, got " +
                     std::to_string(batch_size));
  }
  if (params.dim() != 1 || grad_sum.dim() != 1 || params.numel() != grad_sum.numel()) {
    throw UsageError("optimizer step: params and gradient must be flat buffers of equal length, got " +
                     std::to_string(params.numel()) + " and " + std::to_string(grad_sum.numel()));
  }
  c10::NoGradGuard no_grad;
  // g = (sum of clipped gradients + noise) / m  (Abadi et al. 2016, Alg. 1, "add noise").
  update(params, grad_sum / static_cast<double>(batch_size));
  ++steps_;
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::int64_t num_parameters,
                                          c10::Device device, c10::ScalarType dtype) {
  config.validate();
  if (config.type == OptimizerType::kAdam) {
    return std::make_unique<Adam>(config, num_parameters, device, dtype);
  }
  return std::make_unique<Sgd>(config, num_parameters, device, dtype);
}

void set_compute_threads(int threads) {
  const int t = threads < 1 ? 1 : threads;
  at::set_num_threads(t);
  set_blas_threads(t);
}

}  // namespace dpgnn::model
