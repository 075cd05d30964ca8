from __future__ import annotations

import sys

from mcp_sidecar.cli import main

sys.exit(main())
