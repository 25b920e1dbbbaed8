"""The one exception of ``strategies``."""
from __future__ import annotations

from fuzzfarm.errors import BadInput

__all__ = ["InvalidArgument"]


class InvalidArgument(BadInput):
    """An argument to a strategy, a recipe or the sampler is invalid.

    The message names the argument as ``name=value`` and says what would be valid.
    """
