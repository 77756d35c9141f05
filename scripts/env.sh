# Sourced by run.sh and test.sh: the environment dpgnn's scripts run in.
# OpenMPI refuses to run as root unless told; containers and CI often run as root.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# ranks x threads <= cores: the scripts start 2 ranks with 1 thread each on small machines;
# LibTorch's OpenMP and OpenBLAS's own threads must not both run free.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
export DPGNN_BUILD_DIR="${DPGNN_BUILD_DIR:-build}"
# ccache across builds of the same checkout (CI starts from a fresh clone).
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths relative to the checkout in ccache's hashes: another clone (CI's, a worktree) of the
# same sources reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
