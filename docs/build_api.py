"""Build the API reference of trtstudio's public Python API (``trtstudio.api``, what ``import
trtstudio`` exports) from its docstrings with pdoc, warnings as errors (CI runs this).

    python docs/build_api.py [OUT_DIR]        # default: docs/_build/api (not committed)
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "_build" / "api"
    warnings.simplefilter("error")
    import pdoc  # the [dev] extra

    pdoc.render.configure(docformat="restructuredtext", footer_text="trtstudio public API")
    pdoc.pdoc("trtstudio.api", output_directory=out)
    page = out / "trtstudio" / "api.html"
    missing = [n for n in ("open_engine", "EnginePlan", "diff", "explain", "profile", "report") if n not in page.read_text()]
    if missing:
        print(f"error: {page}: the reference lacks {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
