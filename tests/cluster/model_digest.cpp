// model_digest MODEL.h5: one line per parameter of a model.h5 (or checkpoint.h5) - its name,
// element count and a BLAKE2b digest of its float32 values - so that shell tests can compare
// the parameters of two runs bit for bit. The file's attributes (provenance: hosts, times)
// are left out on purpose: they differ between runs that trained the same model.
#include <hdf5.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "dpgnn/util/digest.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"
#include "model_file.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: model_digest MODEL.h5\n";
    return 2;
  }
  try {
    dpgnn::h5::silence_library_errors();
    auto f = dpgnn::h5::File::open_read(argv[1]);
    const std::vector<std::string> names = dpgnn::testing::model_parameter_names(argv[1]);
    int datasets = 0;
    for (const auto& n : names) {
      const hid_t d = H5Dopen2(f.id(), n.c_str(), H5P_DEFAULT);  // groups are skipped
      if (d < 0) continue;
      H5Dclose(d);
      const auto v = f.open_dataset("/" + n).read_all<float>();
      std::string bytes(v.size() * sizeof(float), '\0');
      if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
      std::cout << n << " " << v.size() << " " << dpgnn::blake2b_digest(bytes) << "\n";
      ++datasets;
    }
    if (datasets == 0) {
      std::cerr << argv[1] << ": no datasets at the file's root (not a model.h5?)\n";
      return 3;
    }
  } catch (const std::exception& e) {
    std::cerr << "model_digest: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
