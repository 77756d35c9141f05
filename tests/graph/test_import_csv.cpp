// The RFC 4180 CSV reader and the plain/gzip text source used by every text importer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dpgnn/graph/import/csv.h"
#include "dpgnn/util/error.h"
#include "import_test_util.h"

namespace dpgnn::graph::import {
namespace {

using test::TempDir;
using test::write_gzip;
using test::write_text;
using Rows = std::vector<std::vector<std::string>>;

Rows read_all(const std::string& path, std::vector<std::int64_t>* lines = nullptr) {
  CsvReader csv(path);
  Rows rows;
  std::vector<std::string> f;
  while (csv.next(f)) {
    rows.push_back(f);
    if (lines) lines->push_back(csv.line());
  }
  return rows;
}

TEST(CsvReader, QuotedFieldsKeepCommasQuotesAndLineBreaks) {
  TempDir t;
  const auto p = write_text(t.file("a.csv"),
                            "id,name,type\n"
                            "0,\"Doe, John\",x\n"
                            "1,\"He said \"\"hi\"\"\",y\n"
                            "2,\"two\nlines\",z\n"
                            "3,plain,w\n");
  std::vector<std::int64_t> lines;
  const Rows rows = read_all(p, &lines);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"0", "Doe, John", "x"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"1", "He said \"hi\"", "y"}));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"2", "two\nlines", "z"}));
  EXPECT_EQ(rows[4], (std::vector<std::string>{"3", "plain", "w"}));
  // The record after a two-line field starts on line 6 of the file.
  EXPECT_EQ(lines, (std::vector<std::int64_t>{1, 2, 3, 4, 6}));
}

TEST(CsvReader, NonAsciiBytesPassThroughUnchanged) {
  TempDir t;
  const std::string name = "Ch\xC3\xA2teau \xE2\x80\x9C" "Caf\xC3\xA9\xE2\x80\x9D";  // UTF-8
  const auto p = write_text(t.file("u.csv"), "a,b\n\"" + name + "\",\xE6\x97\xA5\n");
  const Rows rows = read_all(p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], name);
  EXPECT_EQ(rows[1][1], "\xE6\x97\xA5");
}

TEST(CsvReader, CrlfLineEndsAreNotPartOfTheLastField) {
  TempDir t;
  const auto p = write_text(t.file("c.csv"), "a,b\r\n1,\"x\"\r\n2,y\r\n");
  const Rows rows = read_all(p);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "x"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"2", "y"}));
}

TEST(CsvReader, EmptyFieldsAndAMissingFinalLineEnd) {
  TempDir t;
  const auto p = write_text(t.file("e.csv"), ",,\n\"\",a,");
  const Rows rows = read_all(p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"", "a", ""}));
}

TEST(CsvReader, UnterminatedQuoteNamesFileAndLine) {
  TempDir t;
  const auto p = write_text(t.file("bad.csv"), "a,b\n1,2\n3,\"open\n4,5\n");
  try {
    read_all(p);
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad.csv"), std::string::npos) << m;
    EXPECT_NE(m.find("line 3"), std::string::npos) << m;
    EXPECT_NE(m.find("unterminated"), std::string::npos) << m;
  }
}

TEST(CsvReader, TextAfterAClosingQuoteIsAnError) {
  TempDir t;
  const auto p = write_text(t.file("bad2.csv"), "a,b\n\"x\"y,2\n");
  try {
    read_all(p);
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad2.csv, line 2"), std::string::npos) << m;
  }
}

TEST(CsvReader, ReadsGzipAndPlainFilesAlike) {
  TempDir t;
  const std::string content = "1,2\n3,4\n";
  EXPECT_EQ(read_all(write_gzip(t.file("x.csv.gz"), content)), read_all(write_text(t.file("x.csv"), content)));
  EXPECT_EQ(read_all(t.file("x.csv.gz")).size(), 2u);
}

TEST(CsvReader, TruncatedGzipIsAnIoError) {
  TempDir t;
  std::string big;
  for (int i = 0; i < 20000; ++i) big += std::to_string(i) + "," + std::to_string(i * 7) + "\n";
  const auto p = write_gzip(t.file("t.csv.gz"), big);
  const auto size = std::filesystem::file_size(p);
  std::filesystem::resize_file(p, size / 2);
  EXPECT_THROW(read_all(p), IoError);
}

TEST(CsvReader, MissingFileIsAnIoErrorNamingIt) {
  try {
    CsvReader csv("/nonexistent/dir/edges.csv");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/edges.csv"), std::string::npos);
  }
}

TEST(NumberParsing, AcceptsWholeFieldsOnly) {
  std::int64_t i = 0;
  float f = 0;
  EXPECT_TRUE(parse_int64("42", &i));
  EXPECT_EQ(i, 42);
  EXPECT_TRUE(parse_int64("-7", &i));
  EXPECT_EQ(i, -7);
  EXPECT_FALSE(parse_int64("4 2", &i));
  EXPECT_FALSE(parse_int64("12abc", &i));
  EXPECT_FALSE(parse_int64("", &i));
  EXPECT_FALSE(parse_int64("99999999999999999999", &i));
  EXPECT_TRUE(parse_float("-0.057943", &f));
  EXPECT_FLOAT_EQ(f, -0.057943f);
  EXPECT_TRUE(parse_float("1e-3", &f));
  EXPECT_FLOAT_EQ(f, 0.001f);
  EXPECT_FALSE(parse_float("1.5x", &f));
}

TEST(FindColumn, IgnoresAUtf8ByteOrderMarkOnTheFirstName) {
  EXPECT_EQ(find_column({"\xEF\xBB\xBFid", "label"}, "id"), 0);
  EXPECT_EQ(find_column({"id", "label"}, "label"), 1);
  EXPECT_EQ(find_column({"id", "label"}, "x"), -1);
}

}  // namespace
}  // namespace dpgnn::graph::import
