// Runs a Python converter of tools/ (tools/dpgnn_convert.py) for the formats that need
// numpy/scipy (Planetoid pickles, npz, GraphSAINT) and reads its dpgnn-raw output.
//
// The tools folder is DPGNN_TOOLS_DIR when set, else PREFIX/share/dpgnn/tools beside an
// installed PREFIX/bin/dpgnn, else <source dir>/tools (compiled in);
// the interpreter is DPGNN_PYTHON when set, else /usr/bin/python3 (Debian's, which has
// python3-numpy, python3-scipy and python3-h5py). The converter writes into a temporary
// directory that is removed afterwards, also on error.
#pragma once

#include <string>
#include <vector>

#include "dpgnn/graph/import/raw_graph.h"

namespace dpgnn::graph::import {

std::string tools_dir();
std::string python_interpreter();

// A Python script of tools/ and the interpreter to run it with, both checked to exist.
struct PythonTool {
  std::string python;
  std::string script;
};
// Finds tools/SCRIPT_NAME (DPGNN_TOOLS_DIR) and the interpreter (DPGNN_PYTHON); an IoError
// naming `description` and `install_hint` (what to install or set) when either is missing.
PythonTool locate_python_tool(const std::string& script_name, const std::string& description,
                              const std::string& install_hint);

// Runs `python tools/dpgnn_convert.py FORMAT ARGS... --out TMP.h5` and returns the
// RawGraph it wrote. The converter's exit code maps to the error types (2 UsageError,
// 3 DataError, 4 IoError) and its last stderr line is the message. A missing interpreter
// or module is an IoError that names the Debian packages to install.
RawGraph run_converter(const std::string& format, const std::vector<std::string>& args);

}  // namespace dpgnn::graph::import
