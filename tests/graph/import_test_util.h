// Helpers shared by the import tests: a temporary directory and file writers.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "dpgnn/util/remove_tree.h"

namespace dpgnn::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dpgnn-test-import-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    dpgnn::remove_tree(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string write_text(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
  return path;
}

inline std::string write_gzip(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  gzFile gz = gzopen(path.c_str(), "wb");
  gzwrite(gz, content.data(), static_cast<unsigned>(content.size()));
  gzclose(gz);
  return path;
}

}  // namespace dpgnn::test
