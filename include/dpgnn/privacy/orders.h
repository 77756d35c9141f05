// The Rényi orders alpha at which the accountant tracks RDP.
//
// RDP composes additively at each order; the (epsilon, delta) conversion then picks the
// best order. The default set is dp_accounting's (and the reference tables'): 1.1, 1.2,
// ..., 10.9, 11, 12, ..., 63, 128, 256, 512, 1024 — 156 orders, dense where small budgets
// are optimal and sparse at the large orders that only matter for tiny rates/big noise.
#pragma once

#include <string>
#include <vector>

namespace dpgnn::privacy {

// The 156 default orders, increasing.
std::vector<double> default_orders();

// The largest order accepted: the bounds cost O(alpha) terms (or quadrature over a range of
// length alpha), and orders beyond a few thousand never give the best epsilon in practice.
constexpr double kMaxOrder = 1e6;

// Throws std::invalid_argument unless `orders` is non-empty and every order is in
// (1, kMaxOrder].
void validate_orders(const std::vector<double>& orders);

// Parses a comma-separated list ("2,4.5,8,32") into validated orders, sorted and
// de-duplicated. Throws std::invalid_argument naming the bad item.
std::vector<double> parse_orders(const std::string& text);

}  // namespace dpgnn::privacy
