#!/usr/bin/env bash
# The quick-start demo: builds the program and its Python module if needed (not the tests: scripts/test.sh builds
# them), writes the King James Bible as plain text, then trains on it in one command with one pipeline and two
# learners (6 ranks): the job prepares its own config (vocabulary, held-out test lines) into trained/config and
# stops after 5 passes over the text. Running it again replaces the last demo run (--overwrite). Options through
# the environment: NP (ranks, default 6), BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --program  # the program and its Python module, not the tests
bash scripts/kjv_corpus.sh data/kjv.txt
mpiexec -n "${NP:-6}" "${BUILD_DIR:-build}/src/fedavg_mpi" --out trained --overwrite --vocab-size 5000 data/kjv.txt
echo "Nearest neighbours in trained/kjv.w2v.txt:"
/usr/bin/python3 python/evaluate.py trained/kjv.w2v.txt --neighbours god king water love
