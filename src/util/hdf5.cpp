// HDF5 C API wrappers with errors that name the file, the object and HDF5's message.
#include "dpgnn/util/hdf5.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "dpgnn/util/error.h"

namespace dpgnn::h5 {
namespace {

herr_t collect_error(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (n < 3 && err->desc != nullptr && *err->desc != '\0') {  // innermost few are the useful ones
    if (!out->empty()) *out += "; ";
    *out += err->desc;
  }
  return 0;
}

std::string where(const std::string& file, const std::string& path) {
  return file + (path.empty() ? "" : ": " + path);
}

// Splits "/a/b/c" into prefixes "/a", "/a/b", "/a/b/c" to test link existence level by level.
std::vector<std::string> prefixes(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += "/" + part;
    out.push_back(cur);
  }
  return out;
}

// HDF5's shuffle filter (H5Zshuffle.c): byte j of element i goes to position j * n + i, so
// equal bytes of neighbouring elements (signs, exponents) become runs deflate can use.
std::vector<unsigned char> shuffled(const unsigned char* src, std::size_t size, std::size_t elem) {
  std::vector<unsigned char> out(size);
  const std::size_t n = size / elem;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < elem; ++j) out[j * n + i] = src[i * elem + j];
  std::memcpy(out.data() + n * elem, src + n * elem, size - n * elem);  // trailing bytes, as HDF5
  return out;
}

// zlib stream of `size` bytes, as HDF5's deflate filter writes it (compress2).
std::vector<unsigned char> deflated(const unsigned char* src, std::size_t size, int level) {
  uLongf out_size = compressBound(static_cast<uLong>(size));
  std::vector<unsigned char> out(out_size);
  if (compress2(out.data(), &out_size, src, static_cast<uLong>(size), level) != Z_OK)
    throw std::runtime_error("zlib compress2 failed on a chunk of " + std::to_string(size) + " bytes");
  out.resize(out_size);
  return out;
}

// Inverse of `shuffled` into `dst`; the common 4-byte case (float32) as one pass over the
// four byte planes.
void unshuffle(const unsigned char* src, std::size_t size, std::size_t elem, unsigned char* dst) {
  const std::size_t n = size / elem;
  if (elem == 4) {
    const unsigned char *p0 = src, *p1 = src + n, *p2 = src + 2 * n, *p3 = src + 3 * n;
    for (std::size_t i = 0; i < n; ++i) {
      dst[4 * i] = p0[i];
      dst[4 * i + 1] = p1[i];
      dst[4 * i + 2] = p2[i];
      dst[4 * i + 3] = p3[i];
    }
  } else {
    for (std::size_t j = 0; j < elem; ++j)
      for (std::size_t i = 0; i < n; ++i) dst[i * elem + j] = src[j * n + i];
  }
  std::memcpy(dst + n * elem, src + n * elem, size - n * elem);
}

}  // namespace

EncodedChunk encode_chunk(const void* data, std::size_t size, std::size_t element_size, int deflate_level,
                          double max_ratio) {
  const auto* src = static_cast<const unsigned char*>(data);
  const std::size_t elem = std::max<std::size_t>(1, element_size);
  auto raw = [&] {
    return EncodedChunk{std::vector<unsigned char>(src, src + size), 0x3u};
  };
  const double limit = max_ratio * static_cast<double>(size);
  // Probe on a prefix (1/16 of the chunk, at least 64 KiB): which variant compresses better,
  // and whether either can reach the limit at all. Rows of one chunk are alike (the same
  // features of neighbouring nodes), so the prefix predicts the chunk.
  bool use_shuffle = true;
  std::size_t sample = std::max<std::size_t>(std::size_t{64} << 10, size / 16) / elem * elem;
  if (sample > 0 && sample < size) {
    const std::size_t with = deflated(shuffled(src, sample, elem).data(), sample, deflate_level).size();
    const std::size_t without = deflated(src, sample, deflate_level).size();
    use_shuffle = with <= without;
    if (max_ratio < 1.0 && static_cast<double>(std::min(with, without)) > max_ratio * static_cast<double>(sample))
      return raw();
  } else {
    const std::size_t with = deflated(shuffled(src, size, elem).data(), size, deflate_level).size();
    const std::size_t without = deflated(src, size, deflate_level).size();
    use_shuffle = with <= without;
  }
  EncodedChunk out;
  if (use_shuffle) {
    out.bytes = deflated(shuffled(src, size, elem).data(), size, deflate_level);
    out.filter_mask = 0x0u;
  } else {
    out.bytes = deflated(src, size, deflate_level);
    out.filter_mask = 0x1u;  // shuffle skipped
  }
  if (max_ratio < 1.0 && static_cast<double>(out.bytes.size()) > limit) return raw();
  return out;
}

std::string last_error_message() {
  std::string msg;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &msg);
  H5Eclear2(H5E_DEFAULT);
  return msg.empty() ? "unknown HDF5 error" : msg;
}

void silence_library_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

// ---- Dataset ---------------------------------------------------------------------------

std::vector<std::uint64_t> Dataset::shape() const {
  Handle space(H5Dget_space(id()), H5Sclose);
  if (!space.valid()) throw DataError(file_, path_, "cannot read shape: " + last_error_message());
  const int rank = H5Sget_simple_extent_ndims(space.id());
  std::vector<hsize_t> dims(rank > 0 ? rank : 0);
  if (rank > 0) H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  return std::vector<std::uint64_t>(dims.begin(), dims.end());
}

bool Dataset::is_integer() const {
  Handle t(H5Dget_type(id()), H5Tclose);
  return H5Tget_class(t.id()) == H5T_INTEGER;
}

bool Dataset::is_float() const {
  Handle t(H5Dget_type(id()), H5Tclose);
  return H5Tget_class(t.id()) == H5T_FLOAT;
}

std::size_t Dataset::element_size() const {
  Handle t(H5Dget_type(id()), H5Tclose);
  return H5Tget_size(t.id());
}

// Whole chunks of a dataset whose filters are [shuffle] [deflate], decoded here instead of
// by HDF5: HDF5's deflate filter inflates into a buffer it doubles from the compressed size
// (about seven reallocations and copies for a chunk that compresses 100-fold), then
// unshuffles into a third buffer and copies out; here each chunk is inflated once into a
// buffer of its known size and unshuffled straight into `out` (issue 25 item 5: shard loads
// of compressed files). Returns false, having read nothing, where the case is not this one
// (another layout or filter, a type conversion, rows not on chunk boundaries), and HDF5's
// own read is used instead.
static bool read_whole_chunks(const Dataset& ds, std::uint64_t r0, std::uint64_t r1, void* out, hid_t mem_type) {
  const std::string& file_ = ds.file();
  const std::string& path_ = ds.path();
  const hid_t id = ds.id();
  const std::uint64_t c = ds.chunk_rows();
  const auto s = ds.shape();
  if (c == 0 || s.empty() || r0 % c != 0 || (r1 % c != 0 && r1 != s[0])) return false;
  Handle dcpl(H5Dget_create_plist(id), H5Pclose);
  hsize_t cdims[H5S_MAX_RANK];
  const int crank = H5Pget_chunk(dcpl.id(), H5S_MAX_RANK, cdims);
  if (crank != static_cast<int>(s.size())) return false;
  for (std::size_t i = 1; i < s.size(); ++i)
    if (cdims[i] != s[i]) return false;  // chunks must span whole rows
  int shuffle_at = -1, deflate_at = -1;
  const int nfilters = H5Pget_nfilters(dcpl.id());
  for (int i = 0; i < nfilters; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nvalues = 0;
    const H5Z_filter_t f = H5Pget_filter2(dcpl.id(), static_cast<unsigned>(i), &flags, &nvalues, nullptr, 0,
                                          nullptr, &config);
    if (f == H5Z_FILTER_SHUFFLE && i == 0) shuffle_at = i;
    else if (f == H5Z_FILTER_DEFLATE && deflate_at < 0) deflate_at = i;
    else return false;
  }
  if (nfilters == 0) return false;  // unfiltered: HDF5 reads straight into `out` already
  Handle ftype(H5Dget_type(id), H5Tclose);
  if (H5Tequal(ftype.id(), mem_type) <= 0) return false;
  const std::size_t elem = H5Tget_size(mem_type);
  std::uint64_t width = 1;
  for (std::size_t i = 1; i < s.size(); ++i) width *= s[i];
  const std::size_t chunk_bytes = static_cast<std::size_t>(c * width) * elem;
  thread_local std::vector<unsigned char> stored, inflated, edge;
  std::vector<hsize_t> offset(s.size(), 0);
  for (std::uint64_t lo = r0; lo < r1; lo += c) {
    const std::uint64_t hi = std::min(r1, lo + c);
    offset[0] = lo;
    // The stored size by the chunk index's lookup (H5Dget_chunk_info_by_coord would walk
    // every chunk of the dataset, a cost per read that grows with the file).
    hsize_t nbytes = 0;
    if (H5Dget_chunk_storage_size(id, offset.data(), &nbytes) < 0 || nbytes == 0) return false;  // unwritten
    unsigned char* dst = static_cast<unsigned char*>(out) + static_cast<std::size_t>((lo - r0) * width) * elem;
    const bool whole = hi - lo == c;
    auto read_stored = [&](void* into) {
      std::uint32_t mask = 0;
      if (H5Dread_chunk(id, H5P_DEFAULT, offset.data(), &mask, into) < 0)
        throw DataError(file_, path_,
                        "rows [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            ") cannot be read: the stored chunk is unreadable (the file is damaged or truncated): " +
                            last_error_message());
      return mask;
    };
    std::uint32_t mask = 0;
    if (whole && nbytes == chunk_bytes) {
      // Most likely a raw chunk (both filters skipped): straight into the result, as HDF5
      // would; in the rare case that it was filtered to exactly its raw size, decode below.
      mask = read_stored(dst);
      if (!(deflate_at >= 0 && !(mask & (1u << deflate_at))) && !(shuffle_at >= 0 && !(mask & (1u << shuffle_at))))
        continue;
      stored.assign(dst, dst + chunk_bytes);
    } else {
      stored.resize(nbytes);
      mask = read_stored(stored.data());
    }
    const bool deflated = deflate_at >= 0 && !(mask & (1u << deflate_at));
    const bool shuffled_bytes = shuffle_at >= 0 && !(mask & (1u << shuffle_at));
    // The chunk decoded: a full chunk even at the end of the dataset (HDF5 stores edge
    // chunks whole); only the rows up to `hi` are copied out.
    const unsigned char* plain = stored.data();
    if (deflated) {
      inflated.resize(chunk_bytes);
      uLongf got = static_cast<uLongf>(chunk_bytes);
      const int rc = uncompress(inflated.data(), &got, stored.data(), static_cast<uLong>(stored.size()));
      if (rc != Z_OK || got != chunk_bytes)
        throw DataError(file_, path_,
                        "rows [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            ") cannot be read: the stored chunk does not decode (zlib: " +
                            (rc == Z_OK ? "wrong size" : std::string(zError(rc))) +
                            "), so the file is damaged or truncated");
      plain = inflated.data();
    } else if (stored.size() != chunk_bytes) {
      throw DataError(file_, path_,
                      "rows [" + std::to_string(lo) + ", " + std::to_string(hi) + ") cannot be read: the stored chunk has " +
                          std::to_string(stored.size()) + " bytes, not " + std::to_string(chunk_bytes));
    }
    const std::size_t keep = static_cast<std::size_t>((hi - lo) * width) * elem;
    if (shuffled_bytes) {
      if (whole) {
        unshuffle(plain, chunk_bytes, elem, dst);
      } else {
        edge.resize(chunk_bytes);
        unshuffle(plain, chunk_bytes, elem, edge.data());
        std::memcpy(dst, edge.data(), keep);
      }
    } else {
      std::memcpy(dst, plain, keep);
    }
  }
  return true;
}

void Dataset::read_rows_raw(std::uint64_t r0, std::uint64_t r1, void* out, hid_t mem_type,
                            bool want_float) const {
  if (want_float && !is_float())
    throw DataError(file_, path_, "expected floating-point values, found another type");
  if (!want_float && !is_integer())
    throw DataError(file_, path_, "expected integer values, found another type");
  const auto s = shape();
  if (s.empty()) {  // scalar
    if (H5Dread(id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
      throw DataError(file_, path_, "read failed (file truncated or corrupt?): " + last_error_message());
    return;
  }
  if (r0 > r1 || r1 > s[0])
    throw DataError(file_, path_,
                    "row range [" + std::to_string(r0) + ", " + std::to_string(r1) +
                        ") outside the dataset's " + std::to_string(s[0]) + " rows");
  if (r1 == r0) return;
  if (read_whole_chunks(*this, r0, r1, out, mem_type)) return;
  std::vector<hsize_t> start(s.size(), 0), count(s.begin(), s.end());
  start[0] = r0;
  count[0] = r1 - r0;
  auto read = [&](std::uint64_t a, std::uint64_t b, void* dst) {
    start[0] = a;
    count[0] = b - a;
    Handle file_space(H5Dget_space(id()), H5Sclose);
    H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    Handle mem_space(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
    return H5Dread(id(), mem_type, mem_space.id(), file_space.id(), H5P_DEFAULT, dst) >= 0;
  };
  if (read(r0, r1, out)) return;
  const std::string hdf5_message = last_error_message();
  // A compressed chunk whose bytes are damaged fails the whole read (zlib's own check fires
  // before the block checksums could), and HDF5 does not say which chunk: read chunk by
  // chunk to name the rows of the first that fails, as a checksum mismatch names its block.
  const std::uint64_t c = chunk_rows();
  if (c > 0 && r1 - r0 > c) {
    std::uint64_t width = 1;
    for (std::size_t i = 1; i < s.size(); ++i) width *= s[i];
    std::vector<unsigned char> tmp(c * width * H5Tget_size(mem_type));
    for (std::uint64_t a = r0; a < r1; a = (a / c + 1) * c) {
      const std::uint64_t b = std::min(r1, (a / c + 1) * c);
      if (!read(a, b, tmp.data()))
        throw DataError(file_, path_,
                        "rows [" + std::to_string(a) + ", " + std::to_string(b) +
                            ") cannot be read: the stored chunk does not decode (the file is damaged or truncated): " +
                            last_error_message());
    }
  }
  throw DataError(file_, path_,
                  "rows [" + std::to_string(r0) + ", " + std::to_string(r1) +
                      ") cannot be read (the file is damaged or truncated, or a compressed chunk does not decode): " +
                      hdf5_message);
}

std::uint64_t Dataset::chunk_rows() const {
  Handle dcpl(H5Dget_create_plist(id()), H5Pclose);
  if (!dcpl.valid() || H5Pget_layout(dcpl.id()) != H5D_CHUNKED) return 0;
  hsize_t dims[H5S_MAX_RANK];
  if (H5Pget_chunk(dcpl.id(), H5S_MAX_RANK, dims) < 1) return 0;
  return dims[0];
}

std::vector<std::string> Dataset::filters() const {
  Handle dcpl(H5Dget_create_plist(id()), H5Pclose);
  std::vector<std::string> out;
  if (!dcpl.valid()) return out;
  const int n = H5Pget_nfilters(dcpl.id());
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nvalues = 0;
    char name[64] = {0};
    const H5Z_filter_t f = H5Pget_filter2(dcpl.id(), static_cast<unsigned>(i), &flags, &nvalues, nullptr,
                                          sizeof name, name, &config);
    out.push_back(f == H5Z_FILTER_DEFLATE ? "deflate" : f == H5Z_FILTER_SHUFFLE ? "shuffle" : name);
  }
  return out;
}

std::uint64_t Dataset::storage_bytes() const { return H5Dget_storage_size(id()); }

void Dataset::write_chunk(std::uint64_t row0, std::uint32_t filter_mask, const void* bytes, std::size_t size) {
  std::vector<hsize_t> offset(shape().size(), 0);
  if (offset.empty()) throw std::logic_error(where(file_, path_) + ": write_chunk on a scalar dataset");
  offset[0] = row0;
  if (H5Dwrite_chunk(id(), H5P_DEFAULT, filter_mask, offset.data(), size, bytes) < 0)
    throw IoError(where(file_, path_) + ": writing the chunk at row " + std::to_string(row0) +
                  " failed: " + last_error_message());
}

void Dataset::write_rows_raw(std::uint64_t r0, std::uint64_t nrows, const void* data,
                             hid_t mem_type) {
  if (nrows == 0) return;
  const auto s = shape();
  std::vector<hsize_t> start(s.size(), 0), count(s.begin(), s.end());
  start[0] = r0;
  count[0] = nrows;
  Handle file_space(H5Dget_space(id()), H5Sclose);
  H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Handle mem_space(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
  if (H5Dwrite(id(), mem_type, mem_space.id(), file_space.id(), H5P_DEFAULT, data) < 0)
    throw IoError(where(file_, path_) + ": write failed: " + last_error_message());
}

// ---- File ----------------------------------------------------------------------------

File File::open_read(const std::string& path) {
  silence_library_errors();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw IoError(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw IoError(path + ": is a directory, expected an HDF5 file");
  const htri_t is = H5Fis_hdf5(path.c_str());
  if (is <= 0)
    throw DataError(path, "", "not an HDF5 file (no HDF5 signature: wrong file, or truncated)");
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0)
    throw DataError(path, "", "cannot open as HDF5 (truncated or corrupt?): " + last_error_message());
  return File(Handle(id, H5Fclose), path);
}

File File::open_readwrite(const std::string& path) {
  silence_library_errors();
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (id < 0) throw IoError(path + ": cannot open for writing: " + last_error_message());
  return File(Handle(id, H5Fclose), path);
}

File File::create(const std::string& path) {
  silence_library_errors();
  hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) throw IoError(path + ": cannot create: " + last_error_message());
  return File(Handle(id, H5Fclose), path);
}

bool File::exists(const std::string& path) const {
  if (path == "/") return true;
  for (const auto& p : prefixes(path)) {
    const htri_t e = H5Lexists(id(), p.c_str(), H5P_DEFAULT);
    if (e <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
  }
  return true;
}

Dataset File::open_dataset(const std::string& path) const {
  if (!exists(path)) throw DataError(path_, path, "missing (required dataset not found)");
  hid_t id = H5Dopen2(this->id(), path.c_str(), H5P_DEFAULT);
  if (id < 0) throw DataError(path_, path, "cannot open dataset: " + last_error_message());
  return Dataset(Handle(id, H5Dclose), path_, path);
}

void File::create_group(const std::string& path) {
  for (const auto& p : prefixes(path)) {
    if (H5Lexists(id(), p.c_str(), H5P_DEFAULT) > 0) continue;
    Handle g(H5Gcreate2(id(), p.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!g.valid()) throw IoError(where(path_, p) + ": cannot create group: " + last_error_message());
  }
}

Dataset File::create_dataset_raw(const std::string& path, const std::vector<std::uint64_t>& dims,
                                 hid_t type, std::uint64_t chunk_rows, int deflate_level, bool shuffle) {
  const auto slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) create_group(path.substr(0, slash));
  std::vector<hsize_t> d(dims.begin(), dims.end());
  Handle space(H5Screate_simple(static_cast<int>(d.size()), d.data(), nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  bool has_zero = false;
  for (auto x : d) has_zero = has_zero || x == 0;
  if (chunk_rows > 0 && !d.empty() && !has_zero) {
    std::vector<hsize_t> chunk(d);
    chunk[0] = std::min<hsize_t>(chunk_rows, d[0]);
    H5Pset_chunk(dcpl.id(), static_cast<int>(chunk.size()), chunk.data());
    if (shuffle) H5Pset_shuffle(dcpl.id());
    if (deflate_level > 0) H5Pset_deflate(dcpl.id(), static_cast<unsigned>(deflate_level));
  }
  hid_t id = H5Dcreate2(this->id(), path.c_str(), type, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT);
  if (id < 0) throw IoError(where(path_, path) + ": cannot create dataset: " + last_error_message());
  return Dataset(Handle(id, H5Dclose), path_, path);
}

void File::write_strings(const std::string& path, const std::vector<std::string>& v) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.id(), H5T_VARIABLE);
  H5Tset_cset(type.id(), H5T_CSET_UTF8);
  const auto slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) create_group(path.substr(0, slash));
  hsize_t n = v.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle ds(H5Dcreate2(id(), path.c_str(), type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose);
  if (!ds.valid()) throw IoError(where(path_, path) + ": cannot create dataset: " + last_error_message());
  std::vector<const char*> ptrs;
  for (const auto& s : v) ptrs.push_back(s.c_str());
  if (n > 0 && H5Dwrite(ds.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
    throw IoError(where(path_, path) + ": write failed: " + last_error_message());
}

std::vector<std::string> File::read_strings(const std::string& path) const {
  Dataset ds = open_dataset(path);
  Handle ftype(H5Dget_type(ds.id()), H5Tclose);
  if (H5Tget_class(ftype.id()) != H5T_STRING) throw DataError(path_, path, "expected strings");
  const auto s = ds.shape();
  const std::size_t n = s.empty() ? 1 : s[0];
  std::vector<std::string> out;
  if (H5Tis_variable_str(ftype.id()) > 0) {
    Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mtype.id(), H5T_VARIABLE);
    H5Tset_cset(mtype.id(), H5Tget_cset(ftype.id()));
    std::vector<char*> ptrs(n, nullptr);
    if (n > 0 && H5Dread(ds.id(), mtype.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
      throw DataError(path_, path, "read failed: " + last_error_message());
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    Handle space(H5Dget_space(ds.id()), H5Sclose);
    if (n > 0) H5Dvlen_reclaim(mtype.id(), space.id(), H5P_DEFAULT, ptrs.data());
  } else {
    const std::size_t width = H5Tget_size(ftype.id());
    std::vector<char> buf(n * width + 1, '\0');
    Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mtype.id(), width);
    if (n > 0 && H5Dread(ds.id(), mtype.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
      throw DataError(path_, path, "read failed: " + last_error_message());
    for (std::size_t i = 0; i < n; ++i) out.emplace_back(std::string(buf.data() + i * width, strnlen(buf.data() + i * width, width)));
  }
  return out;
}

bool File::has_attr(const std::string& obj, const std::string& name) const {
  const htri_t e = H5Aexists_by_name(id(), obj.c_str(), name.c_str(), H5P_DEFAULT);
  if (e < 0) H5Eclear2(H5E_DEFAULT);
  return e > 0;
}

namespace {
Handle open_attr(const File& f, const std::string& obj, const std::string& name) {
  if (!f.has_attr(obj, name))
    throw DataError(f.path(), obj == "/" ? "attribute '" + name + "'" : obj + " attribute '" + name + "'",
                    "missing (required attribute not found)");
  return Handle(H5Aopen_by_name(f.id(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
}

void replace_attr(hid_t file, const std::string& obj, const std::string& name) {
  if (H5Aexists_by_name(file, obj.c_str(), name.c_str(), H5P_DEFAULT) > 0)
    H5Adelete_by_name(file, obj.c_str(), name.c_str(), H5P_DEFAULT);
}

std::string attr_where(const std::string& obj, const std::string& name) {
  return obj == "/" ? "attribute '" + name + "'" : obj + " attribute '" + name + "'";
}
}  // namespace

void File::set_attr(const std::string& obj, const std::string& name, const std::string& value) {
  replace_attr(id(), obj, name);
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.id(), H5T_VARIABLE);
  H5Tset_cset(type.id(), H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate_by_name(id(), obj.c_str(), name.c_str(), type.id(), space.id(), H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  const char* p = value.c_str();
  if (!a.valid() || H5Awrite(a.id(), type.id(), &p) < 0)
    throw IoError(path_ + ": cannot write " + attr_where(obj, name) + ": " + last_error_message());
}

void File::set_attr(const std::string& obj, const std::string& name, std::int64_t value) {
  replace_attr(id(), obj, name);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate_by_name(id(), obj.c_str(), name.c_str(), H5T_STD_I64LE, space.id(), H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  if (!a.valid() || H5Awrite(a.id(), H5T_NATIVE_INT64, &value) < 0)
    throw IoError(path_ + ": cannot write " + attr_where(obj, name) + ": " + last_error_message());
}

void File::set_attr(const std::string& obj, const std::string& name, double value) {
  replace_attr(id(), obj, name);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate_by_name(id(), obj.c_str(), name.c_str(), H5T_IEEE_F64LE, space.id(), H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  if (!a.valid() || H5Awrite(a.id(), H5T_NATIVE_DOUBLE, &value) < 0)
    throw IoError(path_ + ": cannot write " + attr_where(obj, name) + ": " + last_error_message());
}

std::string File::attr_string(const std::string& obj, const std::string& name) const {
  Handle a = open_attr(*this, obj, name);
  Handle ftype(H5Aget_type(a.id()), H5Tclose);
  if (H5Tget_class(ftype.id()) != H5T_STRING)
    throw DataError(path_, attr_where(obj, name), "expected a string attribute");
  if (H5Tis_variable_str(ftype.id()) > 0) {
    Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mtype.id(), H5T_VARIABLE);
    H5Tset_cset(mtype.id(), H5Tget_cset(ftype.id()));
    char* p = nullptr;
    if (H5Aread(a.id(), mtype.id(), &p) < 0)
      throw DataError(path_, attr_where(obj, name), "read failed: " + last_error_message());
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  const std::size_t width = H5Tget_size(ftype.id());
  std::vector<char> buf(width + 1, '\0');
  Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mtype.id(), width);
  if (H5Aread(a.id(), mtype.id(), buf.data()) < 0)
    throw DataError(path_, attr_where(obj, name), "read failed: " + last_error_message());
  return std::string(buf.data(), strnlen(buf.data(), width));
}

std::int64_t File::attr_int(const std::string& obj, const std::string& name) const {
  Handle a = open_attr(*this, obj, name);
  Handle ftype(H5Aget_type(a.id()), H5Tclose);
  const auto cls = H5Tget_class(ftype.id());
  if (cls != H5T_INTEGER && cls != H5T_ENUM)  // h5py stores Python bools as an enum
    throw DataError(path_, attr_where(obj, name), "expected an integer attribute");
  std::int64_t v = 0;
  if (cls == H5T_ENUM) {
    std::int8_t b = 0;
    if (H5Aread(a.id(), ftype.id(), &b) < 0)
      throw DataError(path_, attr_where(obj, name), "read failed: " + last_error_message());
    return b;
  }
  if (H5Aread(a.id(), H5T_NATIVE_INT64, &v) < 0)
    throw DataError(path_, attr_where(obj, name), "read failed: " + last_error_message());
  return v;
}

double File::attr_double(const std::string& obj, const std::string& name) const {
  Handle a = open_attr(*this, obj, name);
  Handle ftype(H5Aget_type(a.id()), H5Tclose);
  const auto cls = H5Tget_class(ftype.id());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw DataError(path_, attr_where(obj, name), "expected a numeric attribute");
  double v = 0;
  if (H5Aread(a.id(), H5T_NATIVE_DOUBLE, &v) < 0)
    throw DataError(path_, attr_where(obj, name), "read failed: " + last_error_message());
  return v;
}

}  // namespace dpgnn::h5
