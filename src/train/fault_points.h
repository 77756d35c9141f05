// Fault injection for the kill-and-resume tests (tests/train/test_run_lifecycle_cli.cpp):
// the process dies abruptly (std::_Exit(86), no clean-up) at a named point of a run.
//   DPGNN_FAULT_EXIT_AFTER_STEP=t   right after step t is recorded in the ledger, before it
//                                   is applied (the ledger then holds a step not yet taken);
//   DPGNN_FAULT_EXIT_AT=point       before-release | after-release-record (recorded, not yet
//                                   stored) | after-release | after-checkpoint-N. The release
//                                   points fire at the first release, and with ":NAME" appended
//                                   (after-release:labels-rr) at the release called NAME.
// Unset, they cost one getenv at the first call.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace dpgnn::train {

inline void fault_point(const std::string& name) {
  static const char* at = std::getenv("DPGNN_FAULT_EXIT_AT");
  if (at != nullptr && name == at) std::_Exit(86);
}

inline void fault_point_after_step(std::int64_t step) {
  static const char* at = std::getenv("DPGNN_FAULT_EXIT_AFTER_STEP");
  if (at != nullptr && std::to_string(step) == at) std::_Exit(86);
}

}  // namespace dpgnn::train
