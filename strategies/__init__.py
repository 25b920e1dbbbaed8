"""Hypothesis strategies and a vectorized batch sampler for the inputs of OpenCL built-ins.

Every value is a **bit pattern** (docs/design.md, decision 1): a float argument is an int in
``0 .. 2**fmt.bits - 1`` (Python int from a strategy, ``fmt.uint`` array from the
sampler), an int argument an int32.  Nothing is drawn through ``st.floats()``, which never
yields binary32 signaling NaNs and few NaN payloads.

Two ways to draw, one definition of what is interesting (``_internal/classes.py``: each
class of ``FLOAT_CLASSES`` / ``INT_VALUE_CLASSES`` is a table of weighted variants with
integer fields and a vectorized builder, read by both):

* element strategies for ``@given`` tests and shrinking: ``float_bits``, ``int_bits``,
  ``args_for``;
* batches: hypothesis draws a ``Recipe`` (class weights, exponent
  window, NaN payload pattern, seed) with ``recipes``/``draw_recipes``; ``expand`` turns
  it into millions of inputs with numpy; ``input_class_counts`` tallies the IEEE classes
  of a batch for the stats.

Example::

    from edgecases.catalogue import function
    from strategies import draw_recipes, expand
    fn = function("pown")
    for recipe in draw_recipes(fn, seed=7, count=8):
        batch = expand(recipe, fn, 1_000_000)   # {'x': uint32[1e6], 'y': int32[1e6]}
"""
from strategies._internal.classes import (
    FLOAT_CLASSES, INT_VALUE_CLASSES, NAN_PAYLOADS, boundary_table, int_landmarks, special_float_bits, special_int_values,
)
from strategies._internal.errors import InvalidArgument
from strategies._internal.recipe import (
    DEFAULT_FLOAT_WEIGHTS, DEFAULT_INT_WEIGHTS, SAMPLER_VERSION, SAMPLER_VERSIONS, Recipe,
)
from strategies._internal.pool import SPECIAL_POOL_LIMIT, special_inputs
from strategies._internal.distinct import Stream
from strategies._internal.space import MAX_SPACE_BITS, Space, SpaceError, space_of
from strategies._internal.sampler import (
    class_tally, distinct_count, expand, expand_plans, input_class_counts,
)

__all__ = [
    "special_float_bits", "special_int_values", "special_inputs", "SPECIAL_POOL_LIMIT",
    "FLOAT_CLASSES", "INT_VALUE_CLASSES", "NAN_PAYLOADS", "boundary_table", "int_landmarks",
    "float_bits", "int_bits", "args_for",
    "Recipe", "recipes", "draw_recipes", "expand", "expand_plans", "input_class_counts", "class_tally", "distinct_count",
    "Stream", "SAMPLER_VERSIONS", "Space", "SpaceError", "space_of", "MAX_SPACE_BITS",
    "DEFAULT_FLOAT_WEIGHTS", "DEFAULT_INT_WEIGHTS", "SAMPLER_VERSION", "InvalidArgument",
]

#: Names whose modules import hypothesis, loaded on first use: a device sweep or the check
#: of a stored unit reads Space, Recipe and the sampler and never pays hypothesis's import.
_HYPOTHESIS_NAMES = {
    "args_for": "elements", "float_bits": "elements", "int_bits": "elements",
    "recipes": "recipes", "draw_recipes": "recipes",
}


def __getattr__(name: str):
    module = _HYPOTHESIS_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'strategies' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"strategies._internal.{module}"), name)
    globals()[name] = value
    return value
