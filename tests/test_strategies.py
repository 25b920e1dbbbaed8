"""Fast tier (no device): the strategies reach every class they claim, the sampler expands
recipes into the same classes deterministically, and recipes round-trip and replay."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from edgecases.catalogue import functions
from fuzzfarm import formats
from fuzzfarm.formats import (
    BINARY16, BINARY32, BINARY64, INPUT_CLASSES, INT_CLASSES, classify, classify_int,
)
from strategies import (
    FLOAT_CLASSES, INT_VALUE_CLASSES, NAN_PAYLOADS, InvalidArgument, Recipe, args_for,
    boundary_table, draw_recipes, expand, float_bits, input_class_counts, int_bits, recipes,
)
from strategies._internal import recipes as recipes_module
from strategies._internal.classes import FLOAT_BY_NAME, INT_BY_NAME
from strategies._internal.elements import labelled_float_bits, labelled_int_bits

FNS = functions()
SIN, POWN, POW, LDEXP = FNS["sin"], FNS["pown"], FNS["pow"], FNS["ldexp"]
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

QUICK = settings(max_examples=40, database=None, deadline=None,
                 suppress_health_check=list(HealthCheck))


def find_any(strategy, condition, max_examples=3000):
    """The first generated example satisfying ``condition`` (no shrinking): proves the
    strategy reaches it (Hypothesis's own ``find_any`` test helper, docs/design.md, decision 13)."""
    return find(strategy, condition, settings=settings(
        max_examples=max_examples, database=None, deadline=None, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck)))


def collect(strategy, n):
    """``n`` generated examples (a @given that records)."""
    seen = []

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def record(x):
        seen.append(x)

    record()
    return seen


def ieee(bits, fmt=BINARY32) -> str:
    return INPUT_CLASSES[int(classify(np.array([bits], dtype=fmt.uint), fmt)[0])]


def payload(bits: np.ndarray, fmt=BINARY32) -> np.ndarray:
    return np.asarray(bits).astype(np.uint64) & np.uint64(fmt.quiet_bit - 1)


def contains(cls: str, bits, fmt=BINARY32) -> bool:
    return bool(FLOAT_BY_NAME[cls].contains(np.array([bits], dtype=fmt.uint), fmt)[0])


# ------------------------------------------------------------- element strategies

@pytest.mark.parametrize("cls", FLOAT_CLASSES)
def test_float_bits_reaches_each_class(cls):
    label, bits = find_any(labelled_float_bits(),
                           lambda t: t[0] == cls and contains(cls, t[1]))
    assert label == cls


@pytest.mark.parametrize("cls", FLOAT_CLASSES)
def test_float_bits_restricted_to_a_class_stays_in_it(cls):
    @QUICK
    @given(float_bits(classes=[cls]))
    def check(bits):
        assert 0 <= bits < 1 << 32
        assert contains(cls, bits), f"{cls}: 0x{bits:08x}"
    check()


@pytest.mark.parametrize("fmt", [BINARY16, BINARY64], ids=lambda f: f.name)
def test_float_bits_other_formats(fmt):
    @QUICK
    @given(labelled_float_bits(fmt))
    def check(t):
        cls, bits = t
        assert 0 <= bits < 1 << fmt.bits
        assert bool(FLOAT_BY_NAME[cls].contains(np.array([bits], dtype=fmt.uint), fmt)[0])
    check()


@pytest.mark.parametrize("target", INPUT_CLASSES)
def test_float_bits_reaches_each_ieee_class(target):
    find_any(float_bits(), lambda b: ieee(b) == target)


@pytest.mark.parametrize("sign", [0, 1], ids=["pos", "neg"])
@pytest.mark.parametrize("nan", ["snan", "qnan"])
def test_float_bits_reaches_nans_of_both_signs(nan, sign):
    find_any(float_bits(), lambda b: ieee(b) == nan and (b >> 31) == sign)


def test_float_bits_qnan_payloads_are_varied():
    bits = np.array(collect(float_bits(), 1500), dtype=np.uint32)
    q = bits[classify(bits, BINARY32) == INPUT_CLASSES.index("qnan")]
    assert len(set(payload(q).tolist())) >= 50


def test_float_bits_pins_nan_payload_and_exponent_window():
    @QUICK
    @given(float_bits(classes=["qnan", "snan"], nan_payload="one"))
    def nans(bits):
        assert ieee(bits) in ("qnan", "snan") and payload(bits) == 1
    nans()

    @QUICK
    @given(float_bits(classes=["normal"], exponent_window=(-3, 5)))
    def window(bits):
        assert -3 <= ((bits >> 23) & 0xFF) - 127 <= 5
    window()


@pytest.mark.parametrize("value", [INT32_MIN, INT32_MAX, 0, 1, -1, 2, -2])
def test_int_bits_reaches_extremes(value):
    find_any(int_bits(), lambda v: v == value)


@pytest.mark.parametrize("cls", INT_VALUE_CLASSES)
def test_int_bits_reaches_each_class(cls):
    find_any(labelled_int_bits(), lambda t: t[0] == cls and bool(
        INT_BY_NAME[cls].contains(np.array([t[1]]), BINARY32)[0]))


@pytest.mark.parametrize("target", INT_CLASSES)
def test_int_bits_reaches_each_int_class(target):
    find_any(int_bits(), lambda v: INT_CLASSES[int(classify_int(np.array([v]))[0])] == target)


@pytest.mark.parametrize("value", [126, -126, 149, -149, 254, -254, 300, -300])
def test_int_bits_reaches_exponent_landmarks(value):
    find_any(int_bits(), lambda v: v == value)


@pytest.mark.parametrize("fn", FNS.values(), ids=FNS.keys())
def test_args_for_every_function(fn):
    @settings(max_examples=8, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(args_for(fn))
    def check(args):
        assert len(args) == fn.arity
        for a, v in zip(fn.inputs, args):
            if a.kind != "int":          # float and ugentype arguments are bit patterns
                assert 0 <= v < 1 << 32
            else:
                assert INT32_MIN <= v <= INT32_MAX
    check()


def test_args_for_int_arguments_are_int_bits():
    # only an int argument goes negative; a float one never does (it is a bit pattern)
    find_any(args_for(LDEXP), lambda t: t[1] < 0)
    find_any(args_for(LDEXP), lambda t: t[0] >= 1 << 31)


def test_invalid_arguments_say_what_to_do():
    with pytest.raises(InvalidArgument, match="classes=.*bogus.*choose from"):
        float_bits(classes=["bogus"])
    with pytest.raises(InvalidArgument, match="nan_payload="):
        float_bits(nan_payload="loud")
    with pytest.raises(InvalidArgument, match="exponent_window="):
        float_bits(exponent_window=(5, -5))
    with pytest.raises(InvalidArgument, match="fn="):
        args_for("sin")
    with pytest.raises(InvalidArgument, match="n="):
        expand(Recipe(), SIN, -1)


# ------------------------------------------------------------- sampler

def _capacity(cls: str, fmt, kind: str = "float") -> int:
    """Members (field tuples) of a class under the default params: what a batch can take
    before it spills."""
    from strategies._internal.classes import Params, variants_for
    from strategies._internal.distinct import variant_size
    table = FLOAT_BY_NAME if kind == "float" else INT_BY_NAME
    return sum(variant_size(v, fmt, Params()) for v in variants_for(table[cls], Params()))


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
@pytest.mark.parametrize("cls", FLOAT_CLASSES)
def test_expand_single_class_recipe_takes_the_class_then_spills(cls, fmt):
    """Version 2: a one-class recipe takes min(n, the class's members) rows from the class
    (each variant's members once) and spills the rest into random bit patterns."""
    n = 4000
    x = expand(Recipe(float_weights={cls: 1}, seed=5), SIN, n, fmt)["x"]
    assert x.dtype == fmt.uint and x.shape == (n,)
    inside = FLOAT_BY_NAME[cls].contains(x, fmt)
    want = min(n, _capacity(cls, fmt))
    if cls == "random_bits":
        assert inside.all() and np.unique(x).size == n
    else:       # spilled random patterns may land in the class too (a zero: 2**-15)
        assert want <= inside.sum() <= want + (n - want) // 8


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
@pytest.mark.parametrize("cls", FLOAT_CLASSES)
def test_expand_version_1_single_class_recipe_stays_in_class(cls, fmt):
    """Recipes stored by older runs (version 1) expand as they did: with replacement,
    every row in the class."""
    x = expand(Recipe(float_weights={cls: 1}, seed=5, version=1), SIN, 4000, fmt)["x"]
    assert x.dtype == fmt.uint and x.shape == (4000,)
    assert FLOAT_BY_NAME[cls].contains(x, fmt).all()


@pytest.mark.parametrize("cls", INT_VALUE_CLASSES)
def test_expand_single_int_class_recipe_takes_the_class_then_spills(cls):
    y = expand(Recipe(int_weights={cls: 1}, seed=5), POWN, 4000)["y"]
    assert y.dtype == np.int32
    inside = INT_BY_NAME[cls].contains(y, BINARY32)
    want = min(4000, _capacity(cls, BINARY32, "int"))
    assert want - 8 <= inside.sum() <= want + 64    # +-2**k+d clipped: a few coincide
    y1 = expand(Recipe(int_weights={cls: 1}, seed=5, version=1), POWN, 4000)["y"]
    assert INT_BY_NAME[cls].contains(y1, BINARY32).all()


def test_small_classes_are_covered_once_per_batch_and_lane():
    """Issue 17 item 4: +-0 and +-inf are taken once per lane position however large the
    batch, and a class of 602 members (half_integer 'small') appears whole, each once."""
    n, lanes = 40_000, 4
    x = expand(Recipe(seed=3), SIN, n, lanes=lanes)["x"]
    for lane in range(lanes):
        col = x[lane::lanes]
        for v in (0, 0x80000000, 0x7F800000, 0xFF800000):
            assert np.count_nonzero(col == v) == 1, (lane, hex(v))
    r = Recipe(float_weights={"half_integer": 1}, seed=8)
    from strategies._internal.distinct import sample_distinct, Stream
    from strategies._internal.classes import Params
    h = sample_distinct("float", (("half_integer", 1.0),), 20_000, np.random.default_rng(1),
                        BINARY32, Params(), Stream(1), (0, 0))
    small = {int(np.float32(v).view(np.uint32)) | s for v in np.arange(0, 301) + 0.5
             for s in (0, 1 << 31)}
    got = h.tolist()
    assert small <= set(got)
    assert all(got.count(v) <= 2 for v in small)     # 'any' may also draw a small one
    assert expand(r, SIN, 100)["x"].size == 100


def test_members_of_a_variant_are_distinct_and_parts_of_a_unit_do_not_repeat():
    """A large variant drawn 100,000 times has no repeat; the parts of one unit (one
    Stream) continue each variant's numbering instead of starting again."""
    from strategies import Stream
    r = Recipe(float_weights={"normal": 1}, exponent_window=(0, 0), seed=2)
    x = expand(r, SIN, 100_000)["x"]           # 2 * 2**23 + binade-edge members
    assert np.unique(x).size == x.size
    stream = Stream(77)
    a = expand(Recipe(float_weights={"near_one": 1}, seed=1), SIN, 20_000, stream=stream)["x"]
    b = expand(Recipe(float_weights={"near_one": 1}, seed=2), SIN, 20_000, stream=stream)["x"]
    near = FLOAT_BY_NAME["near_one"]
    both = np.concatenate([a[near.contains(a, BINARY32)], b[near.contains(b, BINARY32)]])
    # 'close' (|d| <= 8) lies inside 'wide' (|d| <= 4096): the only repeats possible
    assert both.size - np.unique(both).size <= 2 * 17


@pytest.mark.parametrize("size", [1, 2, 3, 5, 1000, (1 << 20) + 3])
def test_permute_is_a_bijection(size):
    from strategies._internal.distinct import permute
    y = permute(np.arange(size, dtype=np.uint64), size, [5, 7, 11])
    assert np.array_equal(np.sort(y), np.arange(size, dtype=np.uint64))
    if size > 100:                             # and not the identity or a plain shift
        assert np.count_nonzero(np.diff(y.astype(np.int64)) == 1) < size // 50


@given(st.integers(0, 5000), st.lists(st.integers(0, 3000), min_size=1, max_size=8),
       st.integers(0, 2**32))
@QUICK
def test_allocate_caps_and_fills(n, sizes, seed):
    from strategies._internal.distinct import allocate
    sizes = np.array(sizes)
    probs = np.ones(len(sizes))
    c = allocate(n, probs, sizes, np.random.default_rng(seed))
    assert (c >= 0).all() and (c <= sizes).all()
    assert c.sum() == min(n, sizes.sum())


def test_expand_and_float_bits_share_finite_classes():
    """Classes of finite support yield exactly the same set from both consumers."""
    for cls in ("zero", "inf", "boundary"):
        x = expand(Recipe(float_weights={cls: 1}), SIN, 20000)["x"]
        from_np = set(x[FLOAT_BY_NAME[cls].contains(x, BINARY32)].tolist())
        from_hyp = set(collect(float_bits(classes=[cls]), 400))
        assert from_hyp == from_np, cls
    table = {m for _, m in boundary_table(BINARY32)}
    assert from_np == table | {m | 1 << 31 for m in table}


def test_expand_mixed_recipe_reaches_every_ieee_and_int_class():
    out = expand(Recipe(seed=11), POWN, 20000)
    x, y = out["x"], out["y"]
    codes = classify(x, BINARY32)
    assert set(codes.tolist()) == set(range(len(INPUT_CLASSES)))
    snan = x[codes == INPUT_CLASSES.index("snan")]
    assert {0, 1} <= set((snan >> 31).tolist())
    qnan = x[codes == INPUT_CLASSES.index("qnan")]
    assert {0, 1} <= set((qnan >> 31).tolist())
    assert len(set(payload(qnan).tolist())) >= 50
    assert set(classify_int(y).tolist()) == set(range(len(INT_CLASSES)))
    assert {INT32_MIN, INT32_MAX, 0, 1, -1} <= set(y.tolist())


def test_expand_follows_class_weights():
    n = 100_000
    for version in (1, 2):      # variants far larger than their shares: no cap binds
        x = expand(Recipe(float_weights={"snan": 3, "qnan": 1}, nan_payload="random", seed=2,
                          version=version), SIN, n)["x"]
        n_snan = int(FLOAT_BY_NAME["snan"].contains(x, BINARY32).sum())
        assert abs(n_snan / n - 0.75) < 0.01
        assert int(FLOAT_BY_NAME["qnan"].contains(x, BINARY32).sum()) + n_snan == n
    # a class smaller than its share gives the rest to the others
    x = expand(Recipe(float_weights={"snan": 3, "zero": 1}, seed=2), SIN, n)["x"]
    assert int(FLOAT_BY_NAME["zero"].contains(x, BINARY32).sum()) == 2
    assert int(FLOAT_BY_NAME["snan"].contains(x, BINARY32).sum()) == n - 2


def test_expand_pins_nan_payload_and_exponent_window():
    r = Recipe(float_weights={"qnan": 1, "snan": 1, "normal": 1}, nan_payload="all_ones",
               exponent_window=(-3, 5), seed=4)
    x = expand(r, SIN, 10000)["x"]
    nan = (x & 0x7FFFFFFF) > 0x7F800000
    assert (payload(x[nan]) == (1 << 22) - 1).all()
    e = ((x[~nan] >> 23) & 0xFF).astype(int) - 127
    assert ((e >= -3) & (e <= 5)).all()


@pytest.mark.parametrize("version", [2, 3])
def test_expand_ties_copy_the_first_float_argument(version):
    out = expand(Recipe(tie_rate=0.5, seed=9, version=version), POW, 20000)
    x, y = out["x"], out["y"]
    same, negated = (x == y).mean(), (x == (y ^ np.uint32(1 << 31))).mean()
    assert 0.2 < same < 0.3 and 0.2 < negated < 0.3


def test_version_2_ties_are_still_numpys_and_version_3_ties_a_hash_of_the_row():
    """A stored version-2 recipe regenerates its ties bit for bit (numpy's PCG64 over the
    rows, as it always did); version 3 ties the rows ``tie_masks`` picks, each row's
    alone, at the rate asked for (a third argument by its own key)."""
    from strategies._internal.sampler import _rng, tie_masks
    fma = FNS["fma"]
    n = 50_000
    v2 = Recipe(tie_rate=0.1, seed=31, version=2)
    got = expand(v2, fma, n)
    untied = expand(Recipe(tie_rate=0.0, seed=31, version=2), fma, n)
    rng = _rng(31, 1)
    for name in ("b", "c"):
        u = rng.random(n)
        want = untied[name].copy()
        want[u < 0.1] = untied["a"][u < 0.1]
        want[u < 0.05] ^= np.uint32(1 << 31)
        np.testing.assert_array_equal(got[name], want)
    v3 = Recipe(tie_rate=0.1, seed=31)
    assert v3.version == 3
    got = expand(v3, fma, n)
    untied = expand(Recipe(tie_rate=0.0, seed=31), fma, n)
    rows = np.arange(n)
    masks = {}
    for later, name in enumerate(("b", "c"), 1):
        tie, flip = masks[name] = tie_masks(v3, later, rows)
        assert not (flip & ~tie).any() and abs(tie.mean() - 0.1) < 0.01
        assert abs(flip.mean() - 0.05) < 0.01
        want = untied[name].copy()
        want[tie] = untied["a"][tie]
        want[flip] ^= np.uint32(1 << 31)
        np.testing.assert_array_equal(got[name], want)
        some = rows[::7]
        np.testing.assert_array_equal(tie_masks(v3, later, some)[0], tie[some])
    assert not np.array_equal(masks["b"][0], masks["c"][0])
    for rate, share in ((0.0, 0.0), (1.0, 1.0)):
        tie, flip = tie_masks(Recipe(tie_rate=rate, seed=2), 1, rows)
        assert tie.mean() == share and abs(flip.mean() - share / 2) < 0.01


def test_expand_is_deterministic_per_seed_and_differs_across_seeds():
    a = expand(Recipe(seed=123), POWN, 5000)
    b = expand(Recipe(seed=123), POWN, 5000)
    c = expand(Recipe(seed=124), POWN, 5000)
    for name in ("x", "y"):
        np.testing.assert_array_equal(a[name], b[name])
        assert not np.array_equal(a[name], c[name])
    assert not np.array_equal(a["x"].view(np.int32), a["y"])   # independent streams


@pytest.mark.parametrize("fn", FNS.values(), ids=FNS.keys())
def test_expand_every_function(fn):
    out = expand(Recipe(seed=1), fn, 257)
    assert list(out) == list(fn.arg_names)
    for a in fn.inputs:
        assert out[a.name].shape == (257,)
        assert out[a.name].dtype == (np.int32 if a.kind == "int" else np.uint32)


def test_expand_zero_rows():
    assert expand(Recipe(), POWN, 0)["x"].shape == (0,)


def test_input_class_counts():
    x = np.array([0, 0x80000000, 1, 0x3F800000, 0xBF800000, 0x7F800000, 0x7FC00000,
                  0xFF800001], dtype=np.uint32)
    y = np.array([0, 5, -5, INT32_MIN, INT32_MAX, INT32_MAX, 1, 2], dtype=np.int32)
    counts = input_class_counts({"x": x, "y": y}, POWN, BINARY32)
    assert set(counts) == {f"x:{c}" for c in INPUT_CLASSES} | {f"y:{c}" for c in INT_CLASSES}
    assert counts["x:pos_normal"] == 1 and counts["x:neg_normal"] == 1
    assert counts["x:snan"] == 1 and counts["x:qnan"] == 1 and counts["x:neg_subnormal"] == 0
    assert counts["y:int_min"] == 1 and counts["y:int_max"] == 2 and counts["y:int_pos"] == 3
    assert sum(v for k, v in counts.items() if k.startswith("x:")) == len(x)
    batch = expand(Recipe(seed=3), POWN, 1000)
    assert all(isinstance(v, int) for v in input_class_counts(batch, POWN).values())


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
def test_classify_agrees_with_the_definition(fmt):
    """formats.classify (a table lookup on the top bits plus a fix-up) against the IEEE
    classes spelled out element by element, on specials, random patterns and patterns
    whose significand is all zero (zeros and infinities) or all zero below the quiet bit."""
    def one(v):
        neg, mag = v >> (fmt.bits - 1), v & fmt.abs_mask
        if mag > fmt.exp_mask:
            return 8 if mag & fmt.quiet_bit else 9
        c = 0 if mag == 0 else 2 if mag < fmt.min_normal else 6 if mag == fmt.exp_mask else 4
        return c + neg
    rng = np.random.default_rng(3)
    sp = [0, fmt.sign_mask, 1, fmt.min_normal - 1, fmt.min_normal, fmt.max_finite,
          fmt.pos_inf, fmt.pos_inf | fmt.sign_mask, fmt.pos_inf | 1, fmt.quiet_bit,
          fmt.pos_inf | fmt.quiet_bit, fmt.sign_mask | fmt.pos_inf | 1, fmt.quiet_bit >> 1]
    b = np.concatenate([np.array(sp, np.uint64),
                        rng.integers(0, 1 << min(fmt.bits, 63), 5000, dtype=np.uint64)])
    b = b.astype(fmt.uint)
    b = np.concatenate([b, b & ~fmt.uint(fmt.frac_mask), b & ~fmt.uint(fmt.quiet_bit - 1)])
    assert formats.classify(b, fmt).tolist() == [one(int(v)) for v in b]


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
def test_input_class_counts_agree_with_classify(fmt):
    """The vectorized tally (a histogram of the top bits plus four equality counts) gives
    exactly bincount(classify) on random patterns salted with every special class."""
    rng = np.random.default_rng(11)
    specials = np.array([0, fmt.sign_mask, 1, fmt.sign_mask | 1, fmt.min_normal - 1,
                         fmt.min_normal, fmt.max_finite, fmt.pos_inf,
                         fmt.pos_inf | fmt.sign_mask, fmt.pos_inf | 1,
                         fmt.sign_mask | fmt.pos_inf | 1, fmt.default_qnan,
                         fmt.default_qnan | fmt.sign_mask], dtype=np.uint64).astype(fmt.uint)
    for trial in range(8):
        bits = rng.integers(0, 1 << fmt.bits, size=5000, dtype=np.uint64, endpoint=False)
        x = np.concatenate([bits.astype(fmt.uint),
                            np.repeat(specials, rng.integers(0, 40, specials.size))])
        counts = input_class_counts({"x": x}, SIN, fmt)
        want = np.bincount(classify(x, fmt), minlength=len(INPUT_CLASSES))
        assert [counts[f"x:{c}"] for c in INPUT_CLASSES] == want.tolist()
    n = np.concatenate([rng.integers(INT32_MIN, INT32_MAX, 5000, endpoint=True),
                        [0, 0, INT32_MIN, INT32_MAX, INT32_MAX, -1, 1]]).astype(np.int32)
    counts = input_class_counts({"x": np.zeros(n.size, np.uint32), "y": n}, FNS["rootn"])
    want = np.bincount(classify_int(n), minlength=len(INT_CLASSES))
    assert [counts[f"y:{c}"] for c in INT_CLASSES] == want.tolist()


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
def test_class_tally_counts_and_distinct_counts(fmt):
    """class_tally's counts equal input_class_counts and its distinct counts equal
    np.unique per class; distinct rows of a two-argument batch equal np.unique of rows."""
    from strategies import class_tally
    rng = np.random.default_rng(5)
    specials = np.array([0, fmt.sign_mask, 1, fmt.min_normal, fmt.pos_inf, fmt.pos_inf | 1,
                         fmt.default_qnan, fmt.sign_mask | fmt.default_qnan],
                        dtype=np.uint64).astype(fmt.uint)
    bits = rng.integers(0, 1 << min(fmt.bits, 20), size=3000, dtype=np.uint64)
    x = np.concatenate([bits.astype(fmt.uint), np.repeat(specials, 7),
                        (bits[:500] << np.uint64(fmt.bits - 20 if fmt.bits > 20 else 0))
                        .astype(fmt.uint)])
    counts, distinct, rows = class_tally({"x": x}, SIN, fmt)
    assert counts == input_class_counts({"x": x}, SIN, fmt)
    codes = classify(x, fmt)
    for i, c in enumerate(INPUT_CLASSES):
        assert distinct[f"x:{c}"] == np.unique(x[codes == i]).size, c
    assert rows == np.unique(x).size
    y = rng.integers(-3, 3, size=x.size).astype(np.int32)
    y[:5] = [INT32_MIN, INT32_MIN, INT32_MAX, 0, 0]
    counts, distinct, rows = class_tally({"x": x, "y": y}, FNS["rootn"], fmt)
    icodes = classify_int(y)
    for i, c in enumerate(INT_CLASSES):
        assert distinct[f"y:{c}"] == np.unique(y[icodes == i]).size, c
    assert rows == np.unique(np.stack([x.astype(np.int64), y.astype(np.int64)], 1), axis=0).shape[0]


# ------------------------------------------------------------- recipes

@pytest.mark.parametrize("fn", [SIN, POWN, POW], ids=lambda f: f.name)
def test_recipes_round_trip(fn):
    @QUICK
    @given(recipes(fn))
    def check(r):
        assert Recipe.from_dict(r.to_dict()) == r
        assert Recipe.from_dict(json.loads(json.dumps(r.to_dict()))) == r
        assert Recipe.from_json(r.to_json()) == r
        assert Recipe.from_dict(r.to_dict()).to_dict() == r.to_dict()
    check()


def test_recipes_focus_or_mix():
    def nonzero(r):
        return sum(w > 0 for _, w in r.float_weights)
    find_any(recipes(SIN), lambda r: nonzero(r) == 1)
    find_any(recipes(SIN), lambda r: nonzero(r) == 2)
    find_any(recipes(SIN), lambda r: nonzero(r) >= 10 and len({w for _, w in r.float_weights}) > 2)
    find_any(recipes(POWN), lambda r: sum(w > 0 for _, w in r.int_weights) == 1)
    find_any(recipes(POW), lambda r: r.tie_rate > 0)
    find_any(recipes(SIN), lambda r: r.exponent_window is not None)
    for p in NAN_PAYLOADS:
        find_any(recipes(SIN), lambda r: r.nan_payload == p)


def test_recipe_validation():
    with pytest.raises(InvalidArgument, match="unknown class"):
        Recipe(float_weights={"zeros": 1})
    with pytest.raises(InvalidArgument, match=">= 0"):
        Recipe(float_weights={"zero": -1})
    with pytest.raises(InvalidArgument, match="every class 0"):
        Recipe(float_weights={"zero": 0})
    with pytest.raises(InvalidArgument, match="sampler version"):
        Recipe.from_dict({**Recipe().to_dict(), "version": 0})
    with pytest.raises(InvalidArgument, match="unknown key"):
        Recipe.from_dict({**Recipe().to_dict(), "colour": "red"})
    assert Recipe(float_weights=(("zero", 1),)) == Recipe(float_weights={"zero": 1.0})


def test_draw_recipes_reproducible_and_distinct():
    t0 = time.perf_counter()
    a = draw_recipes(POWN, 42, 8)
    elapsed = time.perf_counter() - t0
    assert a == draw_recipes(POWN, 42, 8)
    assert len(a) == 8 and len(set(a)) == 8
    b = draw_recipes(POWN, 43, 8)
    assert {r.seed for r in a}.isdisjoint({r.seed for r in b})
    assert draw_recipes(POWN, 42, 3) == a[:3]
    assert elapsed < 5  # ~0.1 s; generous for loaded machines


def test_draw_recipes_reproducible_across_processes():
    code = ("import json; from strategies import draw_recipes; "
            "from edgecases.catalogue import function; "
            "print(json.dumps([r.to_dict() for r in draw_recipes(function('pow'), 7, 6)]))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120)
    here = [r.to_dict() for r in draw_recipes(POW, 7, 6)]
    assert json.loads(res.stdout) == here


def test_draw_recipes_pads_when_hypothesis_runs_dry(monkeypatch):
    monkeypatch.setattr(recipes_module, "recipes", lambda fn, fmt: st.just(Recipe()))
    out = draw_recipes(SIN, 5, 4)
    assert len(out) == 4 and len(set(out)) == 4
    assert {r.float_weights for r in out} == {Recipe().float_weights}
    assert out == draw_recipes(SIN, 5, 4)


@pytest.mark.parametrize("size", [5, 1000, (1 << 63) + 12345, (1 << 64) - 3, 1 << 64])
def test_stream_takes_distinct_members_below_the_size(size):
    """Stream.take numbers members below ``size`` and never twice, however close to 2**64
    the space is (binary64 variants) and wherever its start falls."""
    from strategies import Stream
    for seed in range(20):
        s = Stream(seed)
        n = min(size, 64)
        a = s.take(("v",), size, n // 2)
        b = s.take(("v",), size, n - n // 2)
        both = np.concatenate([a, b])
        assert both.dtype == np.uint64 and np.unique(both).size == n
        if size < 1 << 64:
            assert (both < np.uint64(size)).all()
