// Reading a model.h5 (or checkpoint.h5) in tests: its parameter names and values.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

#include "dpgnn/util/hdf5.h"

namespace dpgnn::testing {

// The parameters named `names`, concatenated as float32.
inline std::vector<float> read_model(const std::string& path, const std::vector<std::string>& names) {
  auto f = h5::File::open_read(path);
  std::vector<float> out;
  for (const auto& n : names) {
    auto v = f.open_dataset("/" + n).read_all<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// The names of the links at a model file's root (its parameters; a checkpoint also has
// groups), in the file's (alphabetical) order.
inline std::vector<std::string> model_parameter_names(const std::string& model_file) {
  auto f = h5::File::open_read(model_file);
  std::vector<std::string> names;
  H5Literate(
      f.id(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      },
      &names);
  return names;
}

}  // namespace dpgnn::testing
