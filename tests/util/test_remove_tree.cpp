// remove_tree: the POSIX tree removal used instead of std::filesystem::remove_all (which
// PyTorch's LibTorch interposes and crashes in).
#include "dpgnn/util/remove_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir() {
  std::string tmpl = (fs::temp_directory_path() / "dpgnn-remove-tree-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

void write(const fs::path& p) { std::ofstream(p) << "x"; }

}  // namespace

TEST(RemoveTree, RemovesNestedDirectoriesFilesAndLinksButNotWhatALinkPointsTo) {
  const fs::path outside = fresh_dir();
  write(outside / "keep.txt");
  const fs::path root = fresh_dir();
  fs::create_directories(root / "a" / "b" / "c");
  write(root / "top.txt");
  write(root / "a" / "b" / "c" / "deep.txt");
  fs::create_directory(root / "empty");
  fs::create_directory_symlink(outside, root / "a" / "link-to-outside");
  fs::create_symlink(outside / "keep.txt", root / "file-link");
  std::error_code ec;
  dpgnn::remove_tree(root, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(fs::exists(fs::symlink_status(root)));
  EXPECT_TRUE(fs::exists(outside / "keep.txt")) << "a link inside the tree is removed, not followed";
  dpgnn::remove_tree(outside, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(fs::exists(outside));
}

TEST(RemoveTree, RemovesASingleFileAndAcceptsAMissingPath) {
  const fs::path root = fresh_dir();
  write(root / "f");
  std::error_code ec;
  dpgnn::remove_tree(root / "f", ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(fs::exists(root / "f"));
  dpgnn::remove_tree(root / "never-made", ec);
  EXPECT_FALSE(ec) << "a missing path is already removed: " << ec.message();
  dpgnn::remove_tree(root, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(fs::exists(root));
}

TEST(RemoveTree, WhatCannotBeRemovedIsAnErrorNotACrash) {
  // procfs refuses unlink even to root.
  std::error_code ec;
  dpgnn::remove_tree("/proc/self/status", ec);
  EXPECT_TRUE(ec) << "unlinking a procfs file must fail";
  EXPECT_TRUE(fs::exists("/proc/self/status"));
}
