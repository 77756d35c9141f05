// Sparse-dense products over a rank's CSR rows, the aggregation of full-neighbourhood
// inference (evaluation, `dpgnn predict`).
//
// A CsrAdjacency holds the rank's rows (its own nodes) with columns numbered "local nodes
// first, then the halo": a column c < n_local is local row c, a column c >= n_local is row
// c - n_local of the halo matrix received from the other ranks. The product never builds a
// per-entry message (that would be O(entries x width) memory): each output row is
// accumulated directly from the rows it reads, so memory is the output [rows, d] plus the
// inputs, whatever the number of entries.
//
//   out[i, :] = row_scale[i] * sum_{c in row i} col_scale[c] * X[c, :]
//
// with either scale optional (1). CPU: a kernel threaded over row blocks (at::parallel_for),
// summing each row's entries in CSR order, so the result does not depend on how rows are
// split among threads or ranks. Other devices: LibTorch's sparse matmul (a coalesced COO
// block, cuSPARSE on CUDA), one row block at a time so that a block never holds more than
// `max_block_entries` entries.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace dpgnn::model {

struct CsrAdjacency {
  at::Tensor indptr;   // [num_rows + 1] int64, CPU, indptr[0] == 0
  at::Tensor indices;  // [entries] int32 column ids in [0, num_cols), CPU
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::int64_t num_entries() const { return indices.defined() ? indices.numel() : 0; }
  // Throws DataError naming the problem (shapes, dtypes, monotone indptr, column range).
  void validate() const;
};

enum class SpmmBackend {
  kAuto,             // kCpuKernel on CPU tensors, kLibTorchSparse elsewhere
  kCpuKernel,        // the threaded row kernel (CPU only)
  kLibTorchSparse,   // at::mm on a sparse COO row block (any device; cuSPARSE on CUDA)
};

// out [num_rows, d] = row_scale . (A (col_scale . [local; halo])). local [n_local, d] with
// n_local >= num_rows (the first num_rows local rows are the CSR rows), halo [num_cols -
// n_local, d] (may be undefined when num_cols == n_local); col_scale [num_cols] and
// row_scale [num_rows] may be undefined. All dense tensors share device and dtype.
at::Tensor csr_spmm(const CsrAdjacency& adj, const at::Tensor& local, const at::Tensor& halo,
                    const at::Tensor& col_scale, const at::Tensor& row_scale,
                    SpmmBackend backend = SpmmBackend::kAuto,
                    std::int64_t max_block_entries = std::int64_t{1} << 24);

}  // namespace dpgnn::model
