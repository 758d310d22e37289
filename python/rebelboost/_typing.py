"""Type aliases of the public API's annotations (mypy --strict checks a user script against them:
tests/typing/user_script.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Callback"]

# A callback of fit: called after every iteration with that iteration's record (a dict); a true result
# stops training (docs/guide/training.md).
Callback = Callable[[dict[str, Any]], object]
