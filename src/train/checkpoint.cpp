#include "checkpoint.h"

#include <torch/torch.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"

namespace dpgnn::train {
namespace {

void write_tensor(h5::File& f, const std::string& path, const at::Tensor& t) {
  const at::Tensor c = t.detach().to(torch::kCPU).contiguous();
  std::vector<std::uint64_t> dims;
  for (auto d : c.sizes()) dims.push_back(static_cast<std::uint64_t>(d));
  if (dims.empty()) dims.push_back(1);
  const std::uint64_t rows = dims[0];
  if (c.scalar_type() == torch::kInt64) {
    auto ds = f.create_dataset<std::int64_t>(path, dims);
    ds.write_rows(0, rows, c.data_ptr<std::int64_t>());
  } else if (c.scalar_type() == torch::kFloat64) {
    auto ds = f.create_dataset<double>(path, dims);
    ds.write_rows(0, rows, c.data_ptr<double>());
  } else {
    const at::Tensor x = c.to(torch::kFloat32);
    auto ds = f.create_dataset<float>(path, dims);
    ds.write_rows(0, rows, x.data_ptr<float>());
  }
}

at::Tensor read_tensor_like(const h5::File& f, const std::string& path, const at::Tensor& like) {
  auto ds = f.open_dataset(path);
  const at::Tensor c = like.detach().to(torch::kCPU);
  std::int64_t n = 1;
  for (auto d : ds.shape()) n *= static_cast<std::int64_t>(d);
  if (n != std::max<std::int64_t>(1, c.numel()))
    throw DataError(f.path(), path,
                    "holds " + std::to_string(n) + " values where the run needs " + std::to_string(c.numel()));
  if (c.scalar_type() == torch::kInt64) {
    auto v = ds.read_all<std::int64_t>();
    return torch::from_blob(v.data(), c.sizes(), torch::kInt64).clone().to(like.device());
  }
  auto v = ds.read_all<double>();
  return torch::from_blob(v.data(), c.sizes(), torch::kFloat64).clone().to(like.device(), like.scalar_type());
}

}  // namespace

void write_checkpoint(const std::string& path, const CheckpointMeta& meta, const model::Gnn& model,
                      const model::Optimizer& optimizer, const at::Tensor& ema) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    auto f = h5::File::create(tmp);
    f.set_attr("/", "format", std::string(kCheckpointFormat));
    f.set_attr("/", "format_version", kCheckpointVersion);
    f.set_attr("/", "step", meta.step);
    f.set_attr("/", "world_size", static_cast<std::int64_t>(meta.world_size));
    f.set_attr("/", "config", meta.config_text);
    f.set_attr("/", "dataset_checksum", meta.dataset_checksum);
    f.set_attr("/", "partition_checksum", meta.partition_checksum);
    f.set_attr("/", "num_parameters", model.num_parameters());
    write_tensor(f, "/parameters", model.flat_parameters());
    if (ema.defined()) write_tensor(f, "/ema", ema);
    for (const auto& [name, t] : optimizer.state()) write_tensor(f, "/optimizer/" + name, t);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError(path + ": cannot move the checkpoint into place: " + ec.message());
}

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  auto f = h5::File::open_read(path);
  if (!f.has_attr("/", "format") || f.attr_string("/", "format") != kCheckpointFormat)
    throw DataError(path, "attribute 'format'", "not a dpgnn checkpoint");
  if (f.attr_int("/", "format_version") != kCheckpointVersion)
    throw DataError(path, "attribute 'format_version'",
                    "unsupported version (this dpgnn reads " + std::to_string(kCheckpointVersion) + ")");
  CheckpointMeta m;
  m.step = f.attr_int("/", "step");
  m.world_size = static_cast<int>(f.attr_int("/", "world_size"));
  m.config_text = f.attr_string("/", "config");
  m.dataset_checksum = f.attr_string("/", "dataset_checksum");
  m.partition_checksum = f.attr_string("/", "partition_checksum");
  return m;
}

void load_checkpoint_state(const std::string& path, model::Gnn& model, model::Optimizer& optimizer,
                           at::Tensor* ema) {
  auto f = h5::File::open_read(path);
  if (f.attr_int("/", "num_parameters") != model.num_parameters())
    throw DataError(path, "attribute 'num_parameters'", "does not match the model of this config");
  model.unflatten(read_tensor_like(f, "/parameters", model.flat_parameters()));
  model::NamedTensors state = optimizer.state();
  for (auto& [name, t] : state) t = read_tensor_like(f, "/optimizer/" + name, t);
  optimizer.load_state(state);
  if (ema != nullptr && ema->defined()) *ema = read_tensor_like(f, "/ema", *ema);
}

void write_model_file(const std::string& path, const model::Gnn& model, const std::string& config_text,
                      const std::string& provenance) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    auto f = h5::File::create(tmp);
    f.set_attr("/", "format", std::string("dpgnn-model"));
    f.set_attr("/", "format_version", static_cast<std::int64_t>(1));
    f.set_attr("/", "config", config_text);
    if (!provenance.empty()) f.set_attr("/", "provenance", provenance);
    const auto& names = model.parameter_names();
    const auto& params = model.parameters();
    for (std::size_t i = 0; i < names.size(); ++i) write_tensor(f, "/" + names[i], params[i]);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError(path + ": cannot move the model file into place: " + ec.message());
}

}  // namespace dpgnn::train
