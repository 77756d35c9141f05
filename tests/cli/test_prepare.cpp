// `dpgnn prepare --config C` (cli/cmd_prepare.cpp): runs data.prepare in order, keeps files
// that exist and verify, remakes missing, damaged or stale ones (and all with --force), and
// refuses what it cannot run with the config's file, key and entry named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "dpgnn/util/hdf5.h"
#include "test_support.h"

namespace dpgnn {
namespace {

namespace fs = std::filesystem;
using testing::run_command;

struct Prepared {
  testing::TempDir tmp;
  std::string config = tmp.file("c.yaml");
  testing::CommandResult prepare(const std::string& extra = "") const {
    return run_command("cd " + tmp.path().string() + " && " + DPGNN_BINARY + " prepare --config " + config + " " +
                       extra + " 2>&1");
  }
};

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

const char* kGood =
    "method: drw\n"
    "data:\n"
    "  dataset: data/s.h5\n"
    "  partition: data/s.metis2.h5\n"
    "  prepare:\n"
    "  - synth --nodes 400 --avg-degree 6 --classes 3 --features 8 --homophily 0.8 --seed 2 --out data/s.h5\n"
    "  - partition --dataset data/s.h5 --parts 2 --seed 1 --out data/s.metis2.h5\n";

TEST(Prepare, RunsTheCommandsThenKeepsWhatVerifiesAndRemakesWhatDoesNot) {
  Prepared p;
  write(p.config, kGood);
  const auto first = p.prepare();
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string data = p.tmp.file("data/s.h5"), part = p.tmp.file("data/s.metis2.h5");
  ASSERT_TRUE(fs::exists(data) && fs::exists(part)) << first.output;
  const auto t_data = fs::last_write_time(data), t_part = fs::last_write_time(part);

  const auto again = p.prepare();
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("[1/2] data/s.h5: exists and verifies, kept"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("[2/2] data/s.metis2.h5: exists and verifies, kept"), std::string::npos) << again.output;
  EXPECT_EQ(fs::last_write_time(data), t_data);
  EXPECT_EQ(fs::last_write_time(part), t_part);

  // A damaged partition (bytes changed in the middle of its /graph/indices, located through
  // HDF5's chunk index: the middle of the file may be metadata or free space) is remade;
  // the dataset kept.
  {
    haddr_t addr = 0;
    hsize_t size = 0;
    {
      const auto h = h5::File::open_read(part);
      const auto ds = h.open_dataset("/graph/indices");
      const hsize_t origin[1] = {0};
      unsigned mask = 0;
      ASSERT_GE(H5Dget_chunk_info_by_coord(ds.id(), origin, &mask, &addr, &size), 0);
      ASSERT_GT(size, 128u);
    }
    std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(addr + size / 2));
    const std::string junk(64, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const auto repaired = p.prepare();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.output;
  EXPECT_NE(repaired.output.find("[1/2] data/s.h5: exists and verifies, kept"), std::string::npos) << repaired.output;
  EXPECT_NE(repaired.output.find("[2/2] data/s.metis2.h5 (it does not verify"), std::string::npos) << repaired.output;
  const auto check = run_command(std::string(DPGNN_BINARY) + " info " + part + " 2>&1");
  EXPECT_EQ(check.exit_code, 0) << check.output;

  // Another part count than the file has: remade.
  write(p.config, std::string(kGood).replace(std::string(kGood).find("--parts 2"), 9, "--parts 3"));
  const auto stale = p.prepare();
  ASSERT_EQ(stale.exit_code, 0) << stale.output;
  EXPECT_NE(stale.output.find("it has 2 parts, the command asks for 3"), std::string::npos) << stale.output;

  // --force remakes everything.
  const auto forced = p.prepare("--force");
  ASSERT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_EQ(forced.output.find("kept"), std::string::npos) << forced.output;
}

TEST(Prepare, RefusesWhatItCannotRunNamingTheEntry) {
  Prepared p;
  const std::string head = "method: drw\ndata:\n  dataset: data/s.h5\n";
  struct Case {
    std::string prepare, fragment;
    int code;
  };
  for (const Case& c : std::vector<Case>{
           {"", "data.prepare': is empty", 2},
           {"  prepare: [\"train --config x.yaml --out r\"]\n", "data.prepare[0]: 'train --config x.yaml --out r' is not", 2},
           {"  prepare: [\"import npz --file SRC/x.npz --out data/s.h5\"]\n", "names SRC/", 2},
           {"  prepare: [\"synth --nodes 10 --avg-degree 2 --classes 2 --features 2 --homophily 0.5\"]\n", "has no --out",
            2},
           {"  prepare: [\"import npz --file missing.npz --out data/s.h5\"]\n", "data.prepare[0]: 'dpgnn import npz", 4}}) {
    write(p.config, head + c.prepare);
    const auto r = p.prepare();
    EXPECT_EQ(r.exit_code, c.code) << c.prepare << r.output;
    EXPECT_NE(r.output.find(c.fragment), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace dpgnn
