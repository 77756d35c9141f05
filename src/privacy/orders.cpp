// The Rényi orders tracked by the accountant (see orders.h).
#include "dpgnn/privacy/orders.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include "format.h"

namespace dpgnn::privacy {

std::vector<double> default_orders() {
  std::vector<double> orders;
  // 1.1 ... 10.9 in steps of 0.1, computed as k/10 so each is the double nearest k/10.
  for (int k = 11; k <= 109; ++k) orders.push_back(k / 10.0);
  for (int a = 11; a <= 63; ++a) orders.push_back(a);
  for (double a : {128.0, 256.0, 512.0, 1024.0}) orders.push_back(a);
  return orders;
}

void validate_orders(const std::vector<double>& orders) {
  if (orders.empty()) throw std::invalid_argument("orders: the list of Rényi orders is empty");
  for (double a : orders)
    if (!std::isfinite(a) || !(a > 1.0) || a > kMaxOrder)
      throw std::invalid_argument("orders: every Rényi order must be in (1, 1e6], got " +
                                  detail::format_double(a));
}

std::vector<double> parse_orders(const std::string& text) {
  std::vector<double> orders;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    const std::string trimmed = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    errno = 0;
    char* end = nullptr;
    const double a = std::strtod(trimmed.c_str(), &end);
    if (trimmed.empty() || end != trimmed.c_str() + trimmed.size() || errno == ERANGE)
      throw std::invalid_argument("orders: '" + trimmed + "' is not a number (expected a "
                                  "comma-separated list such as 1.5,2,4,8,16)");
    orders.push_back(a);
  }
  validate_orders(orders);
  std::sort(orders.begin(), orders.end());
  orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
  return orders;
}

}  // namespace dpgnn::privacy
