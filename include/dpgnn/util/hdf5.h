// A thin RAII layer over HDF5's C API, for the dataset, partition, sample and model files.
//
// Why not the C++ API: its exceptions carry little context. Here every failing call
// throws with the file name, the dataset path inside it and HDF5's own message
// (STYLE.md: check macros that print enough to act on). Reads convert to the requested
// native type only within a type class (integers to integers, floats to floats): a float
// dataset where integers are expected is an error, not a silent conversion.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace dpgnn::h5 {

// Owns one hid_t and closes it with the matching H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      closer_ = o.closer_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

template <typename T>
hid_t native_type();
template <> inline hid_t native_type<float>() { return H5T_NATIVE_FLOAT; }
template <> inline hid_t native_type<double>() { return H5T_NATIVE_DOUBLE; }
template <> inline hid_t native_type<std::int8_t>() { return H5T_NATIVE_INT8; }
template <> inline hid_t native_type<std::uint8_t>() { return H5T_NATIVE_UINT8; }
template <> inline hid_t native_type<std::int32_t>() { return H5T_NATIVE_INT32; }
template <> inline hid_t native_type<std::int64_t>() { return H5T_NATIVE_INT64; }
template <> inline hid_t native_type<std::uint64_t>() { return H5T_NATIVE_UINT64; }

class File;

class Dataset {
 public:
  Dataset(Handle h, std::string file, std::string path)
      : h_(std::move(h)), file_(std::move(file)), path_(std::move(path)) {}
  hid_t id() const { return h_.id(); }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  std::vector<std::uint64_t> shape() const;
  bool is_integer() const;
  bool is_float() const;
  std::size_t element_size() const;  // bytes per element as stored

  // Whole dataset; checks the type class of T against the stored one.
  template <typename T>
  std::vector<T> read_all() const {
    std::uint64_t n = 1;
    for (auto d : shape()) n *= d;
    std::vector<T> out(n);
    read_rows_raw(0, shape().empty() ? 1 : shape()[0], out.data(), native_type<T>(),
                  std::is_floating_point<T>::value);
    return out;
  }
  // Rows [r0, r1) of a 1-D or 2-D dataset into `out` (r1 - r0 rows of the row width).
  template <typename T>
  void read_rows(std::uint64_t r0, std::uint64_t r1, T* out) const {
    read_rows_raw(r0, r1, out, native_type<T>(), std::is_floating_point<T>::value);
  }
  template <typename T>
  std::vector<T> read_rows(std::uint64_t r0, std::uint64_t r1) const {
    const auto s = shape();
    std::uint64_t width = 1;
    for (std::size_t i = 1; i < s.size(); ++i) width *= s[i];
    std::vector<T> out((r1 - r0) * width);
    read_rows(r0, r1, out.data());
    return out;
  }
  // Rows [r0, r0 + nrows) from `data`.
  template <typename T>
  void write_rows(std::uint64_t r0, std::uint64_t nrows, const T* data) {
    write_rows_raw(r0, nrows, data, native_type<T>());
  }
  // Rows per chunk along the first dimension; 0 when the dataset is not chunked.
  std::uint64_t chunk_rows() const;
  // Names of the filters in the dataset's pipeline, in order (e.g. {"shuffle", "deflate"}).
  std::vector<std::string> filters() const;
  // Bytes the dataset occupies in the file (compressed size for a filtered dataset).
  std::uint64_t storage_bytes() const;
  // Stores one chunk, already encoded (H5Dwrite_chunk): the chunk starting at row `row0`
  // (a multiple of chunk_rows()), with bit i of `filter_mask` set when filter i of the
  // pipeline was NOT applied to `bytes` (readers then skip it for this chunk).
  void write_chunk(std::uint64_t row0, std::uint32_t filter_mask, const void* bytes, std::size_t size);

 private:
  void read_rows_raw(std::uint64_t r0, std::uint64_t r1, void* out, hid_t mem_type,
                     bool want_float) const;
  void write_rows_raw(std::uint64_t r0, std::uint64_t nrows, const void* data, hid_t mem_type);
  Handle h_;
  std::string file_, path_;
};

class File {
 public:
  // Opens an existing file for reading; DataError when it is not HDF5 or is truncated,
  // IoError when it does not exist or cannot be read.
  static File open_read(const std::string& path);
  static File open_readwrite(const std::string& path);
  // Creates (truncates) a file.
  static File create(const std::string& path);

  hid_t id() const { return h_.id(); }
  const std::string& path() const { return path_; }
  void close() { h_.reset(); }

  bool exists(const std::string& path) const;  // a link (group or dataset), nested paths ok
  Dataset open_dataset(const std::string& path) const;
  void create_group(const std::string& path);  // with intermediate groups
  // A new dataset of `dims` (row-major), chunked by rows when chunk_rows > 0, with the
  // filter pipeline [shuffle] [deflate] when `shuffle` / deflate_level > 0 (chunked only).
  template <typename T>
  Dataset create_dataset(const std::string& path, const std::vector<std::uint64_t>& dims,
                         std::uint64_t chunk_rows = 0, int deflate_level = 0, bool shuffle = false) {
    return create_dataset_raw(path, dims, native_type<T>(), chunk_rows, deflate_level, shuffle);
  }
  template <typename T>
  void write_vector(const std::string& path, const std::vector<T>& v, std::uint64_t chunk_rows = 0) {
    auto ds = create_dataset<T>(path, {v.size()}, chunk_rows == 0 ? 0 : chunk_rows);
    if (!v.empty()) ds.write_rows(0, v.size(), v.data());
  }
  // Writes a 1-D dataset of variable-length UTF-8 strings.
  void write_strings(const std::string& path, const std::vector<std::string>& v);
  std::vector<std::string> read_strings(const std::string& path) const;

  // Attributes on the object at `obj` ("/" for the file).
  bool has_attr(const std::string& obj, const std::string& name) const;
  void set_attr(const std::string& obj, const std::string& name, const std::string& value);
  void set_attr(const std::string& obj, const std::string& name, std::int64_t value);
  void set_attr(const std::string& obj, const std::string& name, double value);
  std::string attr_string(const std::string& obj, const std::string& name) const;
  std::int64_t attr_int(const std::string& obj, const std::string& name) const;
  double attr_double(const std::string& obj, const std::string& name) const;

 private:
  File(Handle h, std::string path) : h_(std::move(h)), path_(std::move(path)) {}
  Dataset create_dataset_raw(const std::string& path, const std::vector<std::uint64_t>& dims,
                             hid_t type, std::uint64_t chunk_rows, int deflate_level, bool shuffle);
  Handle h_;
  std::string path_;
};

// One chunk encoded for Dataset::write_chunk on a dataset whose pipeline is exactly
// [shuffle, deflate] (create_dataset with shuffle = true and deflate_level > 0).
struct EncodedChunk {
  std::vector<unsigned char> bytes;
  std::uint32_t filter_mask = 0;  // bit 0: shuffle skipped, bit 1: deflate skipped
};
// Encodes `size` bytes of elements of `element_size` bytes the way HDF5's shuffle and
// deflate filters would (so any HDF5 reader decodes it), choosing per chunk: deflate alone
// or shuffle + deflate, whichever is smaller, or the raw bytes (both filters skipped) unless
// the compressed chunk is at most `max_ratio` of the raw size. A sample of the chunk is
// compressed first, so chunks that will not reach `max_ratio` (dense real-valued features)
// cost a fraction of a full compression. max_ratio >= 1 always compresses.
EncodedChunk encode_chunk(const void* data, std::size_t size, std::size_t element_size, int deflate_level,
                          double max_ratio);

// HDF5's error stack as one line (the innermost messages), for error reports.
std::string last_error_message();

// Silences HDF5's automatic error printing; our errors report instead. Idempotent.
void silence_library_errors();

}  // namespace dpgnn::h5
