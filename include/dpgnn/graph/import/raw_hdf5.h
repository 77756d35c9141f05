// The "dpgnn-raw" intermediate HDF5 file that the Python converters in tools/ write
// (Planetoid pickles, npz, GraphSAINT) and the C++ side reads into a RawGraph.
//
//   /                attributes: format="dpgnn-raw", format_version=1, name, source,
//                    setting, num_nodes, num_features, num_classes, multilabel (0|1)
//   /edges/src, /edges/dst          int [E]  edge records as stored (COO)
//   /features                       float [N, F] dense, or
//   /features_csr/{indptr,indices,data}      CSR [N, F] (absent when F = 0)
//   /labels                         int [N] (-1 unlabelled)   or
//   /label_matrix                   uint8 [N, C] multi-hot
//   /label_names                    strings [C] (optional)
//   /masks/{train,val,test}         uint8 [N] (optional: the source's split)
//   /notes                          strings (optional): what the converter changed, printed
// The layout is deliberately simple so that a converter is a few lines of h5py.
#pragma once

#include <string>

#include "dpgnn/graph/import/raw_graph.h"

namespace dpgnn::graph::import {

constexpr const char* kRawFormat = "dpgnn-raw";
constexpr std::int64_t kRawFormatVersion = 1;

// Reads a dpgnn-raw file; DataError naming the file and dataset path on any problem.
// The notes it holds are logged at info level.
RawGraph read_raw_hdf5(const std::string& path);

// Writes a RawGraph as dpgnn-raw (dense features); used by tests and for debugging.
void write_raw_hdf5(const RawGraph& raw, const std::string& path);

}  // namespace dpgnn::graph::import
