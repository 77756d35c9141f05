// The single definition of sigma = noise_multiplier * sensitivity (DESIGN.md decision 2);
// see noise_convention.h for the sensitivities and why they differ per scheme.
#include "dpgnn/privacy/noise_convention.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include "format.h"

namespace dpgnn::privacy {

double sensitivity(Scheme scheme, double clip, std::int64_t group_size) {
  if (!std::isfinite(clip) || !(clip > 0.0))
    throw std::invalid_argument("clip norm C must be a finite number > 0, got " +
                                detail::format_double(clip));
  if (group_size < 1)
    throw std::invalid_argument("group size (N(K, r) or g) must be >= 1, got " +
                                std::to_string(group_size));
  switch (scheme) {
    case Scheme::kWor: return 2.0 * clip;  // replace-one: |g - g'| <= 2C
    case Scheme::kPoisson:
    case Scheme::kGaussian: return clip;  // add/remove: |g| <= C
    case Scheme::kExponential:
    case Scheme::kLaplace:
    case Scheme::kRandomizedResponse:
      // `clip` is the sensitivity Delta itself: of each utility (exponential mechanism,
      // Gumbel scale beta = z Delta) or of the coordinate (Laplace scale b = z Delta).
      return clip;
    case Scheme::kGroupWor:
      // Daigavane et al., Theorem 1 with group size g: a unit changes at most g clipped
      // terms, each by at most 2C.
      return 2.0 * clip * static_cast<double>(group_size);
    case Scheme::kDpGnn:
      // Daigavane et al., Theorem 1: a node changes at most N(K, r) clipped terms, each by
      // at most 2C.
      return 2.0 * clip * static_cast<double>(group_size);
  }
  throw std::logic_error("sensitivity: unknown scheme");
}

double noise_std(Scheme scheme, double clip, double noise_multiplier, std::int64_t group_size) {
  if (!std::isfinite(noise_multiplier) || !(noise_multiplier > 0.0))
    throw std::invalid_argument("noise_multiplier must be a finite number > 0, got " +
                                detail::format_double(noise_multiplier));
  return noise_multiplier * sensitivity(scheme, clip, group_size);
}

double noise_multiplier_from_std(Scheme scheme, double clip, double sigma,
                                 std::int64_t group_size) {
  if (!std::isfinite(sigma) || !(sigma > 0.0))
    throw std::invalid_argument("noise std sigma must be a finite number > 0, got " +
                                detail::format_double(sigma));
  return sigma / sensitivity(scheme, clip, group_size);
}

double noise_std(const Mechanism& mechanism, double clip) {
  return noise_std(mechanism.scheme, clip, mechanism.noise_multiplier, mechanism.group_size());
}

}  // namespace dpgnn::privacy
