// Plain/gzip text input and an RFC 4180 CSV reader (see include/dpgnn/graph/import/csv.h).
#include "dpgnn/graph/import/csv.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "dpgnn/util/error.h"

namespace dpgnn::graph::import {

namespace {
constexpr std::size_t kBufferBytes = 1 << 20;
}

TextSource::TextSource(const std::string& path) : path_(path), buf_(kBufferBytes) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw IoError("input file '" + path + "' does not exist");
  if (std::filesystem::is_directory(path, ec))
    throw IoError("input file '" + path + "' is a directory, not a file");
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr)
    throw IoError("cannot open input file '" + path + "': " + std::strerror(errno));
  gzbuffer(gz, 1 << 18);
  gz_ = gz;
}

TextSource::~TextSource() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
}

bool TextSource::refill() {
  const int n = gzread(static_cast<gzFile>(gz_), buf_.data(), static_cast<unsigned>(buf_.size()));
  if (n < 0) {
    int code = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &code);
    throw IoError("cannot read '" + path_ + "': " + (msg ? msg : "read error") +
                  " (a truncated or corrupt gzip file?)");
  }
  if (n == 0) {
    // gzread returns 0 also for a gzip stream cut short; gzerror tells them apart.
    int code = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &code);
    if (code != Z_OK && code != Z_STREAM_END)
      throw IoError("cannot read '" + path_ + "': " + (msg ? msg : "read error") +
                    " (a truncated or corrupt gzip file?)");
    return false;
  }
  pos_ = 0;
  end_ = static_cast<std::size_t>(n);
  return true;
}

CsvReader::CsvReader(const std::string& path, char delimiter) : src_(path), delim_(delimiter) {}

std::string CsvReader::where() const { return path() + ", line " + std::to_string(record_line_); }

bool CsvReader::next(std::vector<std::string>& fields) {
  int c = src_.get();
  if (c < 0) return false;
  record_line_ = next_line_;
  std::size_t count = 0;
  auto start_field = [&]() -> std::string& {
    if (fields.size() <= count) fields.emplace_back();
    std::string& f = fields[count++];
    f.clear();
    return f;
  };
  std::string* field = &start_field();
  bool at_field_start = true;
  for (;;) {
    if (c < 0) break;  // last record without a line end
    if (at_field_start && c == '"') {
      // Quoted field: read until a quote that is not doubled.
      const std::int64_t quote_line = next_line_;
      for (;;) {
        c = src_.get();
        if (c < 0)
          throw DataError(path() + ", line " + std::to_string(quote_line), "",
                          "unterminated quoted field (a '\"' opened here is never closed)");
        if (c == '"') {
          if (src_.peek() == '"') {
            src_.get();
            field->push_back('"');
            continue;
          }
          break;
        }
        if (c == '\n') ++next_line_;
        field->push_back(static_cast<char>(c));
      }
      c = src_.get();
      if (c == '\r' && src_.peek() == '\n') c = src_.get();
      if (c >= 0 && c != delim_ && c != '\n')
        throw DataError(path() + ", line " + std::to_string(next_line_), "",
                        std::string("text after the closing quote of a quoted field (found '") +
                            static_cast<char>(c) + "'; a quote inside a quoted field is written \"\")");
      at_field_start = false;
      continue;
    }
    at_field_start = false;
    if (c == delim_) {
      field = &start_field();
      at_field_start = true;
    } else if (c == '\n') {
      ++next_line_;
      break;
    } else if (c == '\r' && src_.peek() == '\n') {
      src_.get();
      ++next_line_;
      break;
    } else {
      field->push_back(static_cast<char>(c));
    }
    c = src_.get();
  }
  fields.resize(count);
  return true;
}

bool parse_int64(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e;
}

bool parse_float(std::string_view s, float* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e;
}

int find_column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    std::string h = header[i];
    // A UTF-8 byte-order mark before the first column name is not part of the name.
    if (i == 0 && h.size() >= 3 && h.compare(0, 3, "\xEF\xBB\xBF") == 0) h = h.substr(3);
    if (h == name) return static_cast<int>(i);
  }
  return -1;
}

std::string join_columns(const std::vector<std::string>& header) {
  std::string s;
  for (std::size_t i = 0; i < header.size(); ++i) s += (i ? ", " : "") + ("'" + header[i] + "'");
  return s;
}

}  // namespace dpgnn::graph::import
