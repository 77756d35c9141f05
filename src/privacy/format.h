// Number formatting for error messages (internal header): "%.17g" shows the exact double a
// user passed (std::to_string would print 1e-30 as "0.000000").
#pragma once

#include <cstdio>
#include <string>

namespace dpgnn::privacy::detail {

inline std::string format_double(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace dpgnn::privacy::detail
