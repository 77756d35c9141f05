// Reading delimited text: plain or gzip-compressed files, RFC 4180 CSV records, numbers.
//
// TextSource reads through zlib's gz* interface, which reads gzip files and passes plain
// files through unchanged, so every importer accepts `x.csv` and `x.csv.gz` alike (OGB
// ships .csv.gz). CsvReader implements RFC 4180: fields separated by a delimiter, a field
// may be enclosed in double quotes, inside which the delimiter, CR, LF and "" (an escaped
// quote) are data; records end at LF or CRLF. MUSAE's facebook_target.csv needs this
// (page names with commas and quotes). Bytes are passed through unchanged (UTF-8 stays
// UTF-8). Every error names the file and the line where the record starts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dpgnn::graph::import {

// A byte stream from a plain or gzip file. IoError when it cannot be opened or a gzip
// stream is corrupt.
class TextSource {
 public:
  explicit TextSource(const std::string& path);
  ~TextSource();
  TextSource(const TextSource&) = delete;
  TextSource& operator=(const TextSource&) = delete;
  // Next byte, or -1 at the end of the file.
  int get() {
    if (pos_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(buf_[pos_++]);
  }
  int peek() {
    if (pos_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  const std::string& path() const { return path_; }

 private:
  bool refill();
  std::string path_;
  void* gz_ = nullptr;  // gzFile
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
};

class CsvReader {
 public:
  explicit CsvReader(const std::string& path, char delimiter = ',');
  // Reads the next record into `fields` (reusing its strings); false at the end of the
  // file. An empty line is a record with one empty field. DataError on an unterminated
  // quoted field or text after a closing quote.
  bool next(std::vector<std::string>& fields);
  // Line number (1-based) where the last record returned by next() starts.
  std::int64_t line() const { return record_line_; }
  const std::string& path() const { return src_.path(); }
  // "FILE, line N" of the last record, for error messages.
  std::string where() const;

 private:
  TextSource src_;
  char delim_;
  std::int64_t next_line_ = 1, record_line_ = 0;
};

// Strict number parsing of a whole field (no spaces, no trailing text). Return false on
// failure so callers can name the file, line and column in their error.
bool parse_int64(std::string_view s, std::int64_t* out);
bool parse_float(std::string_view s, float* out);

// Index of `name` in a header record, or -1.
int find_column(const std::vector<std::string>& header, const std::string& name);

// The header's columns as "a, b, c" (for "column X not found; columns are ...").
std::string join_columns(const std::vector<std::string>& header);

}  // namespace dpgnn::graph::import
