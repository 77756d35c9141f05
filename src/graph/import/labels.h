// Turning label values read from text (CSV cells) into class ids, shared by the MUSAE and
// generic CSV importers. Internal to src/graph/import.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpgnn::graph::import {

struct LabelMapping {
  std::vector<std::int64_t> ids;   // one per input value, -1 = unlabelled
  std::int64_t num_classes = 0;
  std::vector<std::string> names;  // [num_classes]: the original value of each class id
  std::string kind;                // "boolean", "integer" or "string", for the log
};

// All values True/False (any case) -> False = 0, True = 1. All integers >= -1 -> used as
// they are (-1 = unlabelled), names "0".."C-1". Otherwise each distinct string is a class,
// ids in sorted byte order. An empty value is unlabelled. `context` names the column.
LabelMapping map_labels(const std::vector<std::string>& values, const std::string& context);

}  // namespace dpgnn::graph::import
