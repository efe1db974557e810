"""Structure-aware fuzzing of every reader and command (issue 13): seeds, mutators and a harness.

``TRTSTUDIO_FUZZ_LONG=1`` multiplies the number of generated cases (local mode); the default is the
CI budget (under 3 minutes on 2 cores for all ``tests/test_fuzz_*.py``).
"""

from __future__ import annotations

import os

LONG = os.environ.get("TRTSTUDIO_FUZZ_LONG", "") not in ("", "0")
# hypothesis examples per property: the CI part stays small, the long mode explores.
EXAMPLES = 400 if LONG else 60
