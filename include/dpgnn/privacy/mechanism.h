// One private training step, as the accountant sees it: how the batch was sampled, what a
// neighbouring dataset is, and how much Gaussian noise was added relative to the
// sensitivity (see noise_convention.h for the single definition of "noise multiplier").
//
// Seven schemes, each paired with the theorem that covers it (DESIGN.md decision 3):
//   kGaussian  no sampling: the plain Gaussian mechanism, RDP alpha / (2 z^2)
//              (Mironov 2017, Corollary 3).
//   kWor       uniform sampling WithOut Replacement of m of n, replace-one neighbours
//              (Wang, Balle & Kasiviswanathan 2019, Theorem 9 / Gaussian tightening) —
//              the DRW family.
//   kPoisson   Poisson sampling with rate q, add/remove neighbours (Mironov, Talwar &
//              Zhang 2019) — DP-MLP only, where one example is one node.
//   kDpGnn     the node-level DP-GNN step: m of N training nodes without replacement, one
//              node influencing at most N(K, r) gradient terms (Daigavane et al., Thm 1).
//   kGroupWor  the same bound for any group size g: m of n examples without replacement,
//              one privacy unit influencing at most g examples, each by at most 2C, noise
//              std z * 2C * g (Daigavane et al., Theorem 1, which holds for any bound g on
//              a node's occurrences; kDpGnn is the case g = N(K, r)).
//   kExponential  ONE selection of the exponential mechanism, realised as Gumbel-max noise
//              of scale beta on utilities of sensitivity Delta, z = beta / Delta. A one-shot
//              Gumbel top-K equals K peeled selections (Durfee & Rogers 2019), so it is K
//              events. eps-bounded range with eps = 2 / z (Dong, Durfee & Rogers 2020).
//   kLaplace   the Laplace mechanism on ONE coordinate of sensitivity Delta with scale b,
//              z = b / Delta (Mironov 2017, Proposition 6 / Table II).
//   kRandomizedResponse  k-ary randomized response on ONE categorical value (Warner 1965;
//              Kairouz, Oh & Viswanath 2016, "Extremal Mechanisms for Local Differential
//              Privacy", JMLR, the k-RR mechanism): the true value with probability
//              e^eps / (e^eps + k - 1), each other value with 1 / (e^eps + k - 1); z = 1 / eps
//              (the Gumbel-max scale over indicator utilities of sensitivity 1). Its exact RDP
//              is Mironov 2017 Table II's randomized-response row for k outputs (rdp_rr.cpp).
//              One event covers a release of many values when each privacy unit holds one of
//              them (DPAR's released training labels: a node is one label).
// Exponential, Laplace and randomized response are not DP-SGD steps: they are the pre-training releases of
// two-stage methods such as DPAR (Zhang et al., Algorithm 1), composed with the SGD steps by
// adding RDP (Mironov 2017, Proposition 1).
// A Mechanism is a validated value: the factories throw std::invalid_argument naming the
// parameter and its accepted range, so no accountant ever sees a NaN rate or zero noise.
#pragma once

#include <cstdint>
#include <string>

namespace dpgnn::privacy {

// New schemes are appended (the order is part of Mechanism::operator<, used by caches only).
enum class Scheme { kGaussian, kWor, kPoisson, kDpGnn, kExponential, kLaplace, kGroupWor, kRandomizedResponse };

// "gaussian", "wor", "poisson", "dpgnn", "exponential", "laplace", "groupwor", "rr".
std::string scheme_name(Scheme scheme);
// Inverse of scheme_name; throws std::invalid_argument for an unknown name.
Scheme parse_scheme(const std::string& name);

// N(K, r) = sum_{i=0}^{r} K^i, the most training nodes whose r-hop in-neighbourhood
// (in-degree capped at K) contains a given node (Daigavane et al., Sec. 4). Throws
// std::invalid_argument if K < 1, r < 0, or the value exceeds 2^53 (not exact in double).
std::int64_t neighbourhood_bound(std::int64_t max_degree, std::int64_t layers);

struct Mechanism {
  Scheme scheme = Scheme::kGaussian;
  double noise_multiplier = 0.0;    // noise scale / sensitivity, > 0 (noise_convention.h)
  std::int64_t dataset_size = 0;    // n (kWor, kGroupWor) or N training nodes (kDpGnn); else 0
  std::int64_t batch_size = 0;      // m (kWor, kDpGnn, kGroupWor); 0 otherwise
  double sampling_rate = 1.0;       // q (kPoisson); m / n for kWor/kDpGnn/kGroupWor; else 1
  std::int64_t max_degree = 0;      // K (kDpGnn); 0 otherwise
  std::int64_t layers = 0;          // r (kDpGnn); 0 otherwise
  std::int64_t group_bound = 0;     // g (kGroupWor); 0 otherwise
  std::int64_t categories = 0;      // k, the number of values (kRandomizedResponse); 0 otherwise

  static Mechanism gaussian(double noise_multiplier);
  static Mechanism wor(std::int64_t dataset_size, std::int64_t batch_size,
                       double noise_multiplier);
  static Mechanism poisson(double sampling_rate, double noise_multiplier);
  static Mechanism dpgnn(std::int64_t dataset_size, std::int64_t batch_size,
                         std::int64_t max_degree, std::int64_t layers, double noise_multiplier);
  // m of n without replacement, a unit in at most g examples: 1 <= m <= n, 1 <= g <= n.
  static Mechanism group_wor(std::int64_t dataset_size, std::int64_t batch_size,
                             std::int64_t group_bound, double noise_multiplier);
  // One exponential-mechanism selection, z = Gumbel scale / utility sensitivity.
  static Mechanism exponential(double noise_multiplier);
  // One Laplace-noised coordinate, z = Laplace scale / sensitivity.
  static Mechanism laplace(double noise_multiplier);
  // k-ary randomized response at eps = 1 / z: k >= 2.
  static Mechanism randomized_response(std::int64_t categories, double noise_multiplier);

  // The same sampling with another noise multiplier (used by calibration).
  Mechanism with_noise_multiplier(double noise_multiplier) const;
  // N(K, r) for kDpGnn, g for kGroupWor, 1 otherwise.
  std::int64_t group_size() const;

  // Compact, exact text form: "wor n=1000 m=10 z=1.0000000000000000" (doubles with %.17g,
  // so parse(to_string()) == *this bit for bit); "groupwor n=1000 m=10 g=5 z=1",
  // "exponential z=2", "laplace z=2", "rr k=7 z=0.25". parse throws std::invalid_argument.
  std::string to_string() const;
  static Mechanism parse(const std::string& text);

  bool operator==(const Mechanism& other) const;
  bool operator!=(const Mechanism& other) const { return !(*this == other); }
  bool operator<(const Mechanism& other) const;  // a strict order, for caches
};

}  // namespace dpgnn::privacy
