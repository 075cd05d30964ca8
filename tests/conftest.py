from __future__ import annotations

import sys
from pathlib import Path

# `support` is importable as a top-level package from every test directory.
sys.path.insert(0, str(Path(__file__).resolve().parent))
