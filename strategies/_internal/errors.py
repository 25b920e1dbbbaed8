"""The one exception of ``strategies``."""
from __future__ import annotations

__all__ = ["InvalidArgument"]


class InvalidArgument(ValueError):
    """An argument to a strategy, a recipe or the sampler is invalid.

    The message names the argument as ``name=value`` and says what would be valid.
    """
