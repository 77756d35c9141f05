// Removing a directory tree without std::filesystem::remove_all.
//
// Why not remove_all: PyTorch's LibTorch 2.x (the CUDA LibTorch users build with) exports its
// own copies of some std::filesystem functions, and the dynamic linker binds dpgnn's calls to
// them before libstdc++'s. Its remove_all called a null pointer and crashed on the first tree
// it recursed into (PyTorch 2.11.0+cu130 on an H200, docs/development.md "The GPU check"). The
// POSIX walk below needs nothing of std::filesystem.
#pragma once

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace dpgnn {

namespace detail {
// nftw's callback, children first (FTW_DEPTH): directories are removed once empty; files and
// symbolic links are unlinked (FTW_PHYS: a link is never followed out of the tree).
inline int remove_tree_entry(const char* path, const struct stat* /*st*/, int type, struct FTW* /*ftw*/) {
  const int rc = type == FTW_DP ? ::rmdir(path) : ::unlink(path);
  if (rc == 0 || errno == ENOENT) return 0;
  return errno;  // non-zero stops the walk; nftw returns it
}
}  // namespace detail

// Removes `path` and everything under it. A path that does not exist is not an error. On failure
// `ec` holds the errno of the first entry that could not be removed (what was removed before it
// stays removed).
inline void remove_tree(const std::filesystem::path& path, std::error_code& ec) {
  ec.clear();
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) ec = std::error_code(errno, std::generic_category());
    return;
  }
  const int rc = ::nftw(path.c_str(), detail::remove_tree_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (rc > 0) ec = std::error_code(rc, std::generic_category());
  else if (rc < 0) ec = std::error_code(errno != 0 ? errno : EIO, std::generic_category());
}

}  // namespace dpgnn
