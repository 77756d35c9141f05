#!/usr/bin/env bash
# README.md's "Using it" block, run as written (one bash, `set -e`: every line must exit 0)
# from a scratch copy of the checkout: configs/, scripts/, launch/ and tools/ linked, build/
# holding this build's dpgnn, ../shared linked to the shared folder, and nothing else (no
# data/ or runs/ yet, as in a fresh clone after ./run.sh).
#   tests/readme/readme_block.sh SOURCE_DIR BUILD_DIR SHARED_DIR
set -euo pipefail
src=$(realpath "$1") build=$(realpath "$2") shared=$(realpath "$3")
if [[ ! -d $shared/data ]]; then
  echo "SKIP: $shared/data not present (the block uses Cora and Coauthor CS)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo/build/src/cli"
ln -s "$shared" "$tmp/shared"
for d in configs scripts launch tools; do ln -s "$src/$d" "$tmp/repo/$d"; done
ln -s "$build/src/cli/dpgnn" "$tmp/repo/build/src/cli/dpgnn"
# The block: the first ```sh fence after "## Using it", up to its closing fence.
awk '/^## Using it/{f=1} f&&/^```sh/{b=1;next} b&&/^```/{exit} b' "$src/README.md" > "$tmp/block.sh"
[[ -s $tmp/block.sh ]] || { echo "README.md has no \`\`\`sh block under '## Using it'"; exit 1; }
echo "--- the block ($(wc -l < "$tmp/block.sh") lines)"
cat "$tmp/block.sh"
echo "--- running it in $tmp/repo"
cd "$tmp/repo"
env -u DPGNN_BUILD_DIR DPGNN_PROGRESS=0 bash -euo pipefail -x "$tmp/block.sh"
echo "--- every line exited 0"
