from __future__ import annotations

import sys

from mcp_sidecar.entry import main

sys.exit(main())
