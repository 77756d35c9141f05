// Batch assembly, validation and sub-selection (see include/dpgnn/model/batch.h).
#include "dpgnn/model/batch.h"

#include <ATen/ATen.h>

#include <cstring>
#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

// One copy, no kernel (make_batch may run on a thread beside the step's OpenMP team).
at::Tensor host_int64(const std::vector<std::int64_t>& v) {
  at::Tensor t = at::empty({static_cast<std::int64_t>(v.size())}, at::TensorOptions().dtype(at::kLong));
  if (!v.empty()) std::memcpy(t.data_ptr<std::int64_t>(), v.data(), v.size() * sizeof(std::int64_t));
  return t;
}

[[noreturn]] void fail(const std::string& where, const std::string& problem) {
  throw DataError("batch", where, problem);
}

// Batch::validate's checks on make_batch's host vectors, with its messages: O(n + E) loops and
// no tensor kernel (the edges' range and self loops are make_block's).
void check_host(const at::Tensor& x, const std::vector<std::int64_t>& node_ptr, const std::vector<std::int64_t>& root,
                const std::vector<std::int64_t>& node_key, const std::vector<std::int64_t>& edge_dst,
                const std::vector<std::int64_t>& edge_src, bool multilabel, std::int64_t num_classes,
                const std::vector<std::int64_t>& y_single, const std::vector<float>& y_multi,
                const std::vector<std::int64_t>& loss_rows) {
  if (!x.defined() || x.dim() != 2 || !at::isFloatingType(x.scalar_type())) {
    fail("x", "must be a floating [n, F] tensor");
  }
  const std::int64_t n = x.size(0);
  if (node_ptr.empty()) fail("node_ptr", "must be an int64 [B+1] tensor");
  const auto B = static_cast<std::int64_t>(node_ptr.size()) - 1;
  if (static_cast<std::int64_t>(root.size()) != B) {
    fail("root", "must be an int64 [B] tensor with B = " + std::to_string(B));
  }
  if (static_cast<std::int64_t>(node_key.size()) != n) {
    fail("node_key", "must be an int64 [n] tensor with n = " + std::to_string(n));
  }
  const std::int64_t* p = node_ptr.data();
  if (p[0] != 0 || p[B] != n) {
    fail("node_ptr", "must start at 0 and end at n = " + std::to_string(n) + ", got " + std::to_string(p[0]) +
                         " .. " + std::to_string(p[B]));
  }
  for (std::int64_t s = 0; s < B; ++s) {
    if (p[s + 1] <= p[s]) fail("node_ptr", "subgraph " + std::to_string(s) + " is empty or reversed");
  }
  const std::int64_t K = loss_rows.empty() ? B : static_cast<std::int64_t>(loss_rows.size());
  for (std::int64_t r : loss_rows) {
    if (r < 0 || r >= n) fail("loss_rows", "a loss row is outside [0, " + std::to_string(n) + ")");
  }
  if (multilabel) {
    if (static_cast<std::int64_t>(y_multi.size()) != K * num_classes) {
      fail("y", "expected " + std::to_string(K * num_classes) + " multi-hot values, got " +
                    std::to_string(y_multi.size()));
    }
  } else {
    if (static_cast<std::int64_t>(y_single.size()) != K) {
      fail("y", "single-label targets must be an int64 [B] tensor ([K] with loss_rows)");
    }
    for (std::int64_t c : y_single) {
      if (c < 0 || c >= num_classes) fail("y", "a class label is outside [0, " + std::to_string(num_classes) + ")");
    }
  }
  for (std::int64_t s = 0; s < B; ++s) {
    if (root[static_cast<std::size_t>(s)] < p[s] || root[static_cast<std::size_t>(s)] >= p[s + 1]) {
      fail("root", "a root lies outside its subgraph's rows");
    }
  }
  if (edge_dst.empty()) return;
  std::vector<std::int64_t> seg(static_cast<std::size_t>(n));
  for (std::int64_t s = 0; s < B; ++s)
    for (std::int64_t r = p[s]; r < p[s + 1]; ++r) seg[static_cast<std::size_t>(r)] = s;
  for (std::size_t e = 0; e < edge_dst.size() && e < edge_src.size(); ++e) {
    const std::int64_t d = edge_dst[e], v = edge_src[e];
    if (d < 0 || d >= n || v < 0 || v >= n) continue;  // make_block names it
    if (seg[static_cast<std::size_t>(d)] != seg[static_cast<std::size_t>(v)]) {
      fail("block", "an edge connects two different subgraphs (subgraphs must be disjoint)");
    }
  }
}

}  // namespace

void Batch::validate(bool multilabel, std::int64_t num_classes) const {
  if (!x.defined() || x.dim() != 2 || !at::isFloatingType(x.scalar_type())) {
    fail("x", "must be a floating [n, F] tensor");
  }
  const std::int64_t n = x.size(0);
  if (!node_ptr.defined() || node_ptr.dim() != 1 || node_ptr.scalar_type() != at::kLong ||
      node_ptr.size(0) < 1) {
    fail("node_ptr", "must be an int64 [B+1] tensor");
  }
  const std::int64_t B = node_ptr.size(0) - 1;
  if (!root.defined() || root.dim() != 1 || root.size(0) != B || root.scalar_type() != at::kLong) {
    fail("root", "must be an int64 [B] tensor with B = " + std::to_string(B));
  }
  if (!node_key.defined() || node_key.dim() != 1 || node_key.size(0) != n ||
      node_key.scalar_type() != at::kLong) {
    fail("node_key", "must be an int64 [n] tensor with n = " + std::to_string(n));
  }
  const at::Tensor ptr = node_ptr.cpu();
  const auto* p = ptr.data_ptr<std::int64_t>();
  if (p[0] != 0 || p[B] != n) {
    fail("node_ptr", "must start at 0 and end at n = " + std::to_string(n) + ", got " +
                         std::to_string(p[0]) + " .. " + std::to_string(p[B]));
  }
  for (std::int64_t s = 0; s < B; ++s) {
    if (p[s + 1] <= p[s]) fail("node_ptr", "subgraph " + std::to_string(s) + " is empty or reversed");
  }
  std::int64_t K = B;  // loss entries
  if (loss_rows.defined()) {
    if (loss_rows.dim() != 1 || loss_rows.scalar_type() != at::kLong) fail("loss_rows", "must be an int64 [K] tensor");
    K = loss_rows.size(0);
    if (K > 0 && (loss_rows.min().item<std::int64_t>() < 0 || loss_rows.max().item<std::int64_t>() >= n))
      fail("loss_rows", "a loss row is outside [0, " + std::to_string(n) + ")");
  }
  if (multilabel) {
    if (!y.defined() || y.dim() != 2 || y.size(0) != K || y.size(1) != num_classes ||
        !at::isFloatingType(y.scalar_type())) {
      fail("y", "multi-label targets must be a floating [B, C] tensor with C = " +
                    std::to_string(num_classes));
    }
  } else {
    if (!y.defined() || y.dim() != 1 || y.size(0) != K || y.scalar_type() != at::kLong) {
      fail("y", "single-label targets must be an int64 [B] tensor ([K] with loss_rows)");
    }
    if (K > 0 && (y.min().item<std::int64_t>() < 0 || y.max().item<std::int64_t>() >= num_classes)) {
      fail("y", "a class label is outside [0, " + std::to_string(num_classes) + ")");
    }
  }
  block.validate();
  if (block.num_dst != n || block.num_src != n) {
    fail("block", "a training block must have num_dst == num_src == n");
  }
  if (B == 0) return;
  // Subgraph of every row; roots and edges must stay inside their subgraph.
  const at::Tensor sizes = node_ptr.slice(0, 1) - node_ptr.slice(0, 0, B);
  const at::Tensor seg = at::repeat_interleave(
      at::arange(B, node_ptr.options()), sizes);  // [n]
  const at::Tensor root_ok = (root >= node_ptr.slice(0, 0, B)) & (root < node_ptr.slice(0, 1));
  if (!root_ok.all().item<bool>()) fail("root", "a root lies outside its subgraph's rows");
  if (block.num_edges() > 0 &&
      !seg.index_select(0, block.dst).eq(seg.index_select(0, block.src)).all().item<bool>()) {
    fail("block", "an edge connects two different subgraphs (subgraphs must be disjoint)");
  }
}

Batch make_batch(const at::Tensor& x, const std::vector<std::int64_t>& node_ptr,
                 const std::vector<std::int64_t>& root, const std::vector<std::int64_t>& node_key,
                 const std::vector<std::int64_t>& edge_dst, const std::vector<std::int64_t>& edge_src,
                 bool multilabel, std::int64_t num_classes,
                 const std::vector<std::int64_t>& y_single, const std::vector<float>& y_multi,
                 const std::vector<std::int64_t>& loss_rows) {
  check_host(x, node_ptr, root, node_key, edge_dst, edge_src, multilabel, num_classes, y_single, y_multi, loss_rows);
  const c10::Device device = x.device();
  const std::int64_t n = x.size(0);
  Batch b;
  b.x = x;
  b.node_ptr = host_int64(node_ptr).to(device);
  b.root = host_int64(root).to(device);
  b.node_key = host_int64(node_key).to(device);
  b.block = make_block(edge_dst, edge_src, n, n, device, x.scalar_type());
  if (!loss_rows.empty()) b.loss_rows = host_int64(loss_rows).to(device);
  const std::int64_t B = loss_rows.empty() ? static_cast<std::int64_t>(root.size())
                                           : static_cast<std::int64_t>(loss_rows.size());  // loss entries
  if (multilabel) {
    at::Tensor y = at::empty({B, num_classes}, at::TensorOptions().dtype(at::kFloat));
    if (!y_multi.empty()) std::memcpy(y.data_ptr<float>(), y_multi.data(), y_multi.size() * sizeof(float));
    b.y = y.to(device, x.scalar_type());
  } else {
    b.y = host_int64(y_single).to(device);
  }
  // Checked on the host vectors above (check_host: Batch::validate's checks, no kernel).
  return b;
}

Batch select_subgraphs(const Batch& batch, const std::vector<std::int64_t>& subgraphs) {
  const c10::Device device = batch.device();
  const at::Tensor ptr_host = batch.node_ptr.cpu();
  const auto* p = ptr_host.data_ptr<std::int64_t>();
  const std::int64_t B = batch.num_subgraphs();
  std::vector<std::int64_t> rows, new_ptr{0};
  for (std::int64_t s : subgraphs) {
    if (s < 0 || s >= B) fail("select_subgraphs", "subgraph " + std::to_string(s) + " out of range");
    for (std::int64_t r = p[s]; r < p[s + 1]; ++r) rows.push_back(r);
    new_ptr.push_back(static_cast<std::int64_t>(rows.size()));
  }
  const std::int64_t n_new = static_cast<std::int64_t>(rows.size());
  const at::Tensor rows_t = host_int64(rows).to(device);
  const at::Tensor sel = host_int64(subgraphs).to(device);
  at::Tensor old_to_new = at::full({batch.num_nodes()}, -1, batch.node_ptr.options());
  old_to_new.index_put_({rows_t}, at::arange(n_new, batch.node_ptr.options()));

  Batch out;
  out.x = batch.x.index_select(0, rows_t);
  out.node_key = batch.node_key.index_select(0, rows_t);
  out.node_ptr = host_int64(new_ptr).to(device);
  out.root = old_to_new.index_select(0, batch.root.index_select(0, sel));
  if (batch.loss_rows.defined()) {
    // Loss entries of the selected subgraphs, subgraph by subgraph in the given order.
    const at::Tensor lr = batch.loss_rows.cpu();
    const auto* l = lr.data_ptr<std::int64_t>();
    std::vector<std::int64_t> keep_entries;
    for (std::int64_t s : subgraphs)
      for (std::int64_t k = 0; k < lr.size(0); ++k)
        if (l[k] >= p[s] && l[k] < p[s + 1]) keep_entries.push_back(k);
    const at::Tensor entries = host_int64(keep_entries).to(device);
    out.loss_rows = old_to_new.index_select(0, batch.loss_rows.index_select(0, entries));
    out.y = batch.y.index_select(0, entries);
  } else {
    out.y = batch.y.index_select(0, sel);
  }
  GraphBlock& blk = out.block;
  const GraphBlock& old = batch.block;
  const at::Tensor new_dst = old_to_new.index_select(0, old.dst);
  const at::Tensor keep = new_dst >= 0;  // edges never cross subgraphs: src is kept with dst
  blk.dst = new_dst.masked_select(keep);
  blk.src = old_to_new.index_select(0, old.src).masked_select(keep);
  blk.num_dst = blk.num_src = n_new;
  blk.deg_dst = old.deg_dst.index_select(0, rows_t);
  blk.deg_src = old.deg_src.index_select(0, rows_t);
  return out;
}

}  // namespace dpgnn::model
