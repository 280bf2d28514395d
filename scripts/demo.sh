#!/usr/bin/env bash
# The quick-start demo: builds if needed, writes the King James Bible corpus and its config with
# python/prepare.py, then trains with one pipeline and two learners (6 ranks). Outputs go to trained/.
# Options through the environment: NP (ranks, default 6), BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/kjv_corpus.sh data/kjv.txt
if [ ! -s data/kjv/cfg.json ] || [ ! -s data/kjv_train.txt ]; then
  /usr/bin/python3 python/prepare.py data/kjv.txt --out data/kjv --train-out data/kjv_train.txt \
    --data-name kjv --vocab-size 5000 --min-count 5 --test-windows 1000 --seed 1 \
    --target 2.0 --max-rounds 300 --max-seconds 300
fi
mpiexec -n "${NP:-6}" "${BUILD_DIR:-build}/src/fedavg_mpi" --config data/kjv --out trained data/kjv_train.txt
echo "Nearest neighbours in trained/kjv.w2v.txt:"
/usr/bin/python3 python/evaluate.py trained/kjv.w2v.txt --neighbours god king water love
