"""Soundness of the float64 screen: it never passes what the exact path fails.

Device results are planted at and around the bound (RN(reference) moved by whole ULP steps
up to bound + 1), so the screen's verdicts near the edge are compared with mpmath's.  The
exhaustive tier (issue 4) scales this to millions of inputs; this one keeps CI fast.
"""
import numpy as np
import pytest

from edgecases import catalogue
from fuzzfarm import formats
from fuzzfarm.formats import BINARY32
from fuzzfarm.oracle import Exact, reference, round_to_bits, ulp_error
from fuzzfarm.screen import SCREENS, screen_pass
from strategies import Recipe, expand

F = BINARY32


@pytest.mark.parametrize("name", sorted(SCREENS))
def test_screen_never_passes_what_exact_fails(name):
    fn = catalogue.function(name)
    b = catalogue.bound(name)
    recipe = Recipe(float_weights={"normal": 4, "subnormal": 1, "integer": 1, "half_integer": 1,
                                   "near_one": 2, "boundary": 1, "half_pi_multiple": 2},
                    int_weights={"small": 5, "exponent_landmark": 1}, seed=11)
    ins = expand(recipe, fn, 200, F)
    kinds = tuple(a.kind for a in fn.inputs)
    rows, refs = [], []
    for i in range(200):
        args = tuple(int(ins[a.name][i]) for a in fn.inputs)
        r = reference(name, args, kinds, F, 128)[0]
        if r is None or isinstance(r, Exact):
            continue
        rn = round_to_bits(r, F)
        if (rn & F.abs_mask) >= F.pos_inf or (rn & F.abs_mask) == 0:
            continue
        step = int(b.ulps) + 1
        for k in range(-step, step + 1):
            rows.append((args, (rn + k) & 0xFFFFFFFF))
            refs.append(r)
    assert rows, "no ordinary inputs drawn"
    args64 = []
    for j, a in enumerate(fn.inputs):
        col = np.asarray([r[0][j] for r in rows])
        args64.append(formats.to_float(col.astype(F.uint), F) if a.kind == "float"
                      else col.astype(np.int64))
    got = np.asarray([r[1] for r in rows], F.uint)
    passed, _ = screen_pass(name, args64, got, b.ulps, F)
    checked = 0
    for ok, (args, g), r in zip(passed, rows, refs):
        if not ok:
            continue
        checked += 1
        assert ulp_error(g, r, F) <= b.ulps, (name, args, hex(g))
    assert checked > len(rows) // 4, "the screen passed almost nothing"
