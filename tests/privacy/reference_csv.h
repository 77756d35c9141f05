// Reads the independent reference tables of ../shared/reference/accountant/ (computed with
// dp_accounting 0.6.0 and separate high-precision code, never with dpgnn) for the tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace dpgnn::privacy::testing {

inline std::string reference_dir() { return std::string(DPGNN_SHARED_DIR) + "/reference/accountant/"; }

inline bool reference_available() { return std::filesystem::is_directory(reference_dir()); }

// One row: column name -> value (all columns of these tables are numbers).
using Row = std::map<std::string, double>;

inline std::vector<Row> read_reference_csv(const std::string& name) {
  std::ifstream in(reference_dir() + name);
  EXPECT_TRUE(in.good()) << "cannot open " << reference_dir() + name;
  std::string line;
  std::getline(in, line);
  auto chomp = [](std::string& l) {  // the tables have CRLF line ends
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
  };
  chomp(line);
  std::vector<std::string> header;
  {
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) header.push_back(cell);
  }
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    chomp(line);
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string cell;
    Row row;
    std::size_t i = 0;
    while (std::getline(ss, cell, ',')) row[header.at(i++)] = std::stod(cell);
    EXPECT_EQ(i, header.size()) << name << ": " << line;
    rows.push_back(row);
  }
  EXPECT_FALSE(rows.empty()) << name << " has no rows";
  return rows;
}

#define DPGNN_REQUIRE_REFERENCE()                                                               \
  do {                                                                                          \
    if (!::dpgnn::privacy::testing::reference_available())                                      \
      DPGNN_SKIP_OR_FAIL_UNDER_CI("reference tables not found at " << ::dpgnn::privacy::testing::reference_dir()); \
  } while (0)

// Relative difference, for the README's tolerances (RDP 1e-6, epsilon 1e-4).
inline double relative_error(double got, double want) {
  return std::abs(got - want) / std::abs(want);
}

}  // namespace dpgnn::privacy::testing
