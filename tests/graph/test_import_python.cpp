// The Python-converter formats on tiny inputs generated in the test with Debian's numpy /
// scipy (GraphSAINT single- and multi-label, npz variants), and the converter's error
// paths: a missing interpreter, a missing module, a bad input file. The expected graphs
// are worked out by hand in the comments.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dpgnn/graph/validate.h"
#include "import_test_util.h"
#include "test_support.h"

namespace dpgnn::graph {
namespace {

const char* kPython = "/usr/bin/python3";

struct RunResult {
  int code = -1;
  std::string err;
};

RunResult run(const std::string& env, const std::vector<std::string>& args, const test::TempDir& tmp) {
  std::string cmd = env + " '" + std::string(DPGNN_BINARY) + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " >/dev/null 2>'" + tmp.file("stderr.txt") + "'";
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(tmp.file("stderr.txt"));
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

bool python_has_numpy() {
  const std::string cmd = std::string(kPython) + " -c 'import numpy, scipy, h5py' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Runs a Python snippet (numpy as np, scipy.sparse as sp, json, os imported; D = the dir).
void python(const std::string& code, const test::TempDir& tmp) {
  const std::string script = test::write_text(
      tmp.file("gen.py"), "import json, os\nimport numpy as np\nimport scipy.sparse as sp\nD = '" +
                              tmp.path().string() + "'\n" + code);
  ASSERT_EQ(std::system((std::string(kPython) + " '" + script + "'").c_str()), 0) << code;
}

// The converters need Debian's python3-numpy/scipy/h5py, which scripts/install-deps.sh
// installs: their absence is a broken set-up, not a reason to skip.
#define REQUIRE_PYTHON() \
  ASSERT_TRUE(python_has_numpy()) << kPython << " with numpy, scipy and h5py is not available: run scripts/install-deps.sh"

// 12 nodes so that the string keys "10" and "11" sort before "2" in string order.
const char* kSaintGraph = R"(
os.makedirs(D + '/saint', exist_ok=True)
n = 12
rows = [0, 1, 1, 2, 3, 10, 11, 5, 5]
cols = [1, 0, 2, 1, 3, 11, 10, 6, 6]   # (3,3) a self-loop; (5,6) stored twice (sums to 2)
A = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, n))
sp.save_npz(D + '/saint/adj_full.npz', A)
np.save(D + '/saint/feats.npy', np.arange(n * 3, dtype=np.float64).reshape(n, 3))
json.dump({'tr': [0, 1, 2, 3, 10, 11], 'va': [4, 5], 'te': [6, 7, 8, 9]}, open(D + '/saint/role.json', 'w'))
tr = np.zeros(n, dtype=bool); tr[[0, 1, 2, 3, 10, 11]] = True
At = A.multiply(tr[:, None]).multiply(tr[None, :]).tocsr()
sp.save_npz(D + '/saint/adj_train.npz', At)
)";

TEST(ImportGraphSaint, ClassMapKeysAreMappedByIntegerValue) {
  REQUIRE_PYTHON();
  test::TempDir tmp;
  // Node v has class v % 4; keys written in sorted *string* order ("0", "1", "10", "11", "2", ...).
  python(std::string(kSaintGraph) +
             "json.dump({str(v): v % 4 for v in sorted(range(12), key=str)}, open(D + '/saint/class_map.json', 'w'))\n",
         tmp);
  const RunResult r = run("", {"import", "graphsaint", "--dir", tmp.file("saint"), "--out", tmp.file("s.h5")}, tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  DatasetStats s;
  const Dataset d = load_and_validate(tmp.file("s.h5"), &s);
  EXPECT_EQ(d.meta.setting, Setting::inductive);
  EXPECT_EQ(d.meta.name, "saint");
  EXPECT_EQ(d.meta.num_classes, 4);
  for (int v = 0; v < 12; ++v) EXPECT_EQ(d.labels[v], v % 4) << "node " << v;
  // {0,1}, {1,2}, {10,11}, {5,6}; the self-loop (3,3) removed.
  EXPECT_EQ(s.undirected_edges, 4);
  EXPECT_EQ(s.train, 6);
  EXPECT_EQ(s.val, 2);
  EXPECT_EQ(s.test, 4);
  ASSERT_EQ(d.meta.num_features, 3);
  EXPECT_EQ(d.features[11 * 3 + 2], 35.0f);  // row 11 of arange(36).reshape(12, 3)
  EXPECT_NE(r.err.find("adj_train.npz = adj_full restricted to the training nodes (checked)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("removed 0 duplicate edge entries and 1 self-loops"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("values: 1, 2"), std::string::npos) << "the summed (5,6) entry is reported: " << r.err;
}

TEST(ImportGraphSaint, ListLabelsBecomeAMultiHotMatrix) {
  REQUIRE_PYTHON();
  test::TempDir tmp;
  // PPI-style: node v has label list [v % 2, 1, v % 3 == 0].
  python(std::string(kSaintGraph) +
             "json.dump({str(v): [v % 2, 1, int(v % 3 == 0)] for v in range(12)}, open(D + '/saint/class_map.json', "
             "'w'))\n",
         tmp);
  const RunResult r = run("", {"import", "graphsaint", "--dir", tmp.file("saint"), "--out", tmp.file("m.h5")}, tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  const Dataset d = load_and_validate(tmp.file("m.h5"), nullptr);
  ASSERT_TRUE(d.meta.multilabel);
  ASSERT_EQ(d.meta.num_classes, 3);
  for (int v = 0; v < 12; ++v) {
    EXPECT_EQ(d.label_matrix[v * 3 + 0], v % 2);
    EXPECT_EQ(d.label_matrix[v * 3 + 1], 1);
    EXPECT_EQ(d.label_matrix[v * 3 + 2], v % 3 == 0 ? 1 : 0);
  }
}

TEST(ImportGraphSaint, MissingRoleFileIsAnIoErrorNamingIt) {
  REQUIRE_PYTHON();
  test::TempDir tmp;
  python(std::string(kSaintGraph) + "json.dump({str(v): 0 for v in range(12)}, open(D + '/saint/class_map.json', 'w'))\n"
                                    "os.remove(D + '/saint/role.json')\n",
         tmp);
  const RunResult r = run("", {"import", "graphsaint", "--dir", tmp.file("saint"), "--out", tmp.file("x.h5")}, tmp);
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find("role.json"), std::string::npos) << r.err;
}

TEST(ImportNpz, DenseOneBasedLabelsAreShiftedAndPrinted) {
  REQUIRE_PYTHON();
  test::TempDir tmp;
  // 40 nodes on a path, 2 classes given as 1/2, dense attribute matrix.
  python("n = 40\nA = sp.csr_matrix((np.ones(n - 1), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))\n"
         "np.savez(D + '/g.npz', adj_data=A.data, adj_indices=A.indices, adj_indptr=A.indptr, adj_shape=A.shape,\n"
         "         attr_matrix=np.eye(n, 5, dtype=np.float32), labels=1 + (np.arange(n) % 2))\n",
         tmp);
  const RunResult r = run("", {"import", "npz", "--file", tmp.file("g.npz"), "--train-per-class", "5",
                               "--val-per-class", "5", "--out", tmp.file("g.h5")},
                          tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("labels are 1-based (1..2, no 0): shifted to 0-based (0..1)"), std::string::npos) << r.err;
  DatasetStats s;
  const Dataset d = load_and_validate(tmp.file("g.h5"), &s);
  for (int v = 0; v < 40; ++v) EXPECT_EQ(d.labels[v], v % 2);
  EXPECT_EQ(s.undirected_edges, 39);
  EXPECT_EQ(s.train, 10);
  EXPECT_EQ(s.val, 10);
  EXPECT_EQ(s.test, 20);
  EXPECT_EQ(d.meta.num_features, 5);
}

TEST(ImportNpz, ANonNpzFileIsADataError) {
  REQUIRE_PYTHON();
  test::TempDir tmp;
  const auto p = test::write_text(tmp.file("broken.npz"), "this is not a zip archive");
  const RunResult r = run("", {"import", "npz", "--file", p, "--out", tmp.file("o.h5")}, tmp);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("broken.npz"), std::string::npos) << r.err;
}

TEST(PythonConverter, AMissingInterpreterNamesTheDebianPackages) {
  DPGNN_NEED_SHARED_DATA();
  test::TempDir tmp;
  const RunResult r = run("DPGNN_PYTHON=/nonexistent/python3",
                          {"import", "npz", "--file", std::string(DPGNN_SHARED_DIR) + "/data/polblogs/polblogs.npz",
                           "--out", tmp.file("o.h5")},
                          tmp);
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find("/nonexistent/python3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("python3-numpy"), std::string::npos) << r.err;
}

TEST(PythonConverter, AMissingModuleNamesTheDebianPackages) {
  REQUIRE_PYTHON();
  test::TempDir tmp;
  // A numpy that cannot be imported shadows the real one.
  test::write_text(tmp.file("shadow/numpy.py"), "raise ImportError(\"No module named 'numpy'\")\n");
  const RunResult r = run("PYTHONPATH='" + tmp.file("shadow") + "'",
                          {"import", "npz", "--file", tmp.file("any.npz"), "--out", tmp.file("o.h5")}, tmp);
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find("numpy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("python3-scipy"), std::string::npos) << r.err;
}

TEST(PythonConverter, AMissingToolsDirIsReported) {
  test::TempDir tmp;
  const RunResult r = run("DPGNN_TOOLS_DIR=/nonexistent/tools",
                          {"import", "npz", "--file", tmp.file("x.npz"), "--out", tmp.file("o.h5")}, tmp);
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find("DPGNN_TOOLS_DIR"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dpgnn::graph
