// Cryptographic digests of what a run records (libsodium's crypto_generichash, BLAKE2b-256;
// Aumasson et al., RFC 7693): the bound config, a stored pre-training release, and keyed
// fingerprints of the run's secrets. Unlike util/checksum.h (XXH3, against mistakes), these
// stand against an edited file: a changed byte changes the digest.
#pragma once

#include <string>

#include "dpgnn/util/secure_rng.h"

namespace dpgnn {

// "blake2b:" and 64 lowercase hex digits of BLAKE2b-256 over `bytes`.
std::string blake2b_digest(const std::string& bytes);

// A fingerprint of `secret` that reveals nothing about it: BLAKE2b-256 keyed by the secret
// over a fixed public label (a PRF of the label; without the key, indistinguishable from
// random). Equal secrets give equal fingerprints, so a resume can tell whether it holds the
// run's secrets without the ledger holding them. First 16 bytes, hex.
std::string secret_fingerprint(const Secret& secret, const std::string& label);

}  // namespace dpgnn
