"""Shared setup for the Python tests: put python/ on sys.path, and the
built module fedavg_kernels (FEDAVG_BUILD_DIR, default build/) where it is
built, as the program does."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON_DIR = ROOT / "python"
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))
KERNELS_DIR = ROOT / os.environ.get("FEDAVG_BUILD_DIR", "build") / "src" \
    / "kernels"
if KERNELS_DIR.is_dir() and str(KERNELS_DIR) not in sys.path:
    sys.path.append(str(KERNELS_DIR))
