// Label values -> class ids (see labels.h).
#include "labels.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "dpgnn/graph/import/csv.h"
#include "dpgnn/util/error.h"

namespace dpgnn::graph::import {

namespace {
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

LabelMapping map_labels(const std::vector<std::string>& values, const std::string& context) {
  LabelMapping m;
  m.ids.assign(values.size(), -1);
  bool all_bool = true, all_int = true, any = false;
  for (const auto& v : values) {
    if (v.empty()) continue;
    any = true;
    const std::string l = lower(v);
    if (l != "true" && l != "false") all_bool = false;
    std::int64_t x = 0;
    if (!parse_int64(v, &x) || x < -1) all_int = false;
  }
  if (!any) throw DataError(context, "", "no labels: every label value is empty");
  if (all_bool) {
    m.kind = "boolean";
    m.num_classes = 2;
    m.names = {"False", "True"};
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!values[i].empty()) m.ids[i] = lower(values[i]) == "true" ? 1 : 0;
  } else if (all_int) {
    m.kind = "integer";
    std::int64_t max_id = -1;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!values[i].empty()) {
        parse_int64(values[i], &m.ids[i]);
        max_id = std::max(max_id, m.ids[i]);
      }
    if (max_id < 0) throw DataError(context, "", "no labels: every label is -1 (unlabelled)");
    m.num_classes = max_id + 1;
    for (std::int64_t c = 0; c < m.num_classes; ++c) m.names.push_back(std::to_string(c));
  } else {
    m.kind = "string";
    std::map<std::string, std::int64_t> classes;  // sorted by byte order
    for (const auto& v : values)
      if (!v.empty()) classes.emplace(v, 0);
    std::int64_t next = 0;
    for (auto& [name, id] : classes) {
      id = next++;
      m.names.push_back(name);
    }
    m.num_classes = next;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!values[i].empty()) m.ids[i] = classes.at(values[i]);
  }
  std::string mapping;
  for (std::int64_t c = 0; c < m.num_classes && c < 20; ++c)
    mapping += (c ? ", " : "") + std::to_string(c) + "=" + m.names[c];
  if (m.num_classes > 20) mapping += ", ...";
  spdlog::info("{}: {} labels, {} classes ({})", context, m.kind, m.num_classes, mapping);
  return m;
}

}  // namespace dpgnn::graph::import
