// The device screen of the geometric built-ins in binary64 (docs/device_screen.md,
// "Geometric built-ins"): length, distance, normalize within their ULP bounds (NORMALIZE: a
// vector result, lane by lane), dot (DOT) and cross (CROSS: lane by lane) within their
// absolute tolerances -- geometric_screen.cl's screen with double-double references
// (binary64_ops.cl goes first).  One work-item per vector of ``width`` lanes (the host
// defines DISTANCE, R_LO as for the element-wise binary64 screen, and the ground:
// LANE_E_LO .. LANE_E_HI, the biased exponents of its lanes, GROUND_LO .. GROUND_HI their
// magnitudes, [2**-400, 2**400); ``c_pass`` is the bound less the margin times 2**-52, as
// the element-wise screen's C_PASS64 times 2**-52): err[i] is the result's error in ULPs
// where it is provably within the bound, else -1 (the host's).  On the ground no rule of
// geometric.toml holds (no zero, infinite, NaN or subnormal lane; squares, products and
// their sums within [2**-800, 2**806), far from binary64's overflow and underflow, so no
// partial product of the double-double arithmetic underflows to a subnormal number that
// matters: below 2**-1074 absolutely, 2**-270 of the result).

// a lane on the ground: normal, of a biased exponent in [LANE_E_LO, LANE_E_HI]
inline int lane_ok64(ulong b) {
    uint e = (uint)((b >> 52) & 0x7ffUL);
    return e >= LANE_E_LO && e <= LANE_E_HI;
}
inline dd_t dd_of(double v) { dd_t r = { v, 0.0 }; return r; }
inline dd_t dd_neg(dd_t a) { dd_t r = { negd(a.hi), negd(a.lo) }; return r; }

// sqrt(s) of a double-double s (s.hi in [2**-800, 2**806)): y within 2**-51 of sqrt(s) by
// Newton's iteration in binary64 (six steps from the exponent halved: 2**-52 of
// sqrt(s.hi), which is within 2**-54 of sqrt(s)), then one Newton step in double-double,
// y + (s - y**2) / (2 y): exactly it would leave delta**2 / 2 <= 2**-103; y**2 = p + pe
// exactly (fma), s.hi - p exactly (p within a factor 2 of s.hi), the two further additions
// and the quotient add 2**-102 -- within 2**-101 relatively
inline dd_t dd_sqrt(dd_t s) {
    ulong b = as_ulong(s.hi);
    double y = as_double(((b >> 1) + 0x1ff8000000000000UL) & 0x7fffffffffffffffUL);
    for (int k = 0; k < 6; k++) y = 0.5 * (y + s.hi / y);
    double p = y * y, pe = fma(y, y, -p);
    double rem = ((s.hi - p) - pe) + s.lo;
    return dd_fast(y, rem / (2.0 * y));
}

// x / b of a double and a double-double: q1 = x / b.hi, the remainder x - q1 b (q1 b.hi =
// p + pe exactly, x - p exactly: p within 2**-52 of x) to 2**-103 of x, divided by b.hi --
// within 2**-102 relatively
inline dd_t dd_div(double x, dd_t b) {
    double q1 = x / b.hi;
    double p = q1 * b.hi, pe = fma(q1, b.hi, -p);
    double rr = ((x - p) - pe) - q1 * b.lo;
    return dd_fast(q1, rr / b.hi);
}

// Whether the binary64 result yb, against r within E of f (E <= 2**-92 |r.hi|), is a normal
// number of r's sign provably within the bound: lo = |r.hi| R_LO (R_LO = 1 - 2**-50) is
// below |f|, so u_lo = P 2**-52 <= ulp(f), P = 2**floor(log2 lo); d = |(y - r.hi) - r.lo|,
// two roundings at most; where tol = 0, d + E < P c_pass (the bound less the margin of the
// element-wise binary64 screen, whose reference error REL64 = 2**-90 covers E; at 0.5 ULP,
// yb is provably the nearest binary64 number to f), where tol > 0, d (1 + 2**-50) + E < tol
// (an absolute tolerance less 2**-50 of it: dot, a lane of cross).  *e: d / u_lo.
inline int result_within64(dd_t r, double E, double tol, ulong yb, double c_pass, float *e) {
    uint ey = (uint)((yb >> 52) & 0x7ffUL);
    if (ey == 0u || ey == 0x7ffu || (yb >> 63) != (as_ulong(r.hi) >> 63)) return 0;
    double ar = absd(r.hi);
    if (!(E <= ar * 0x1p-92)) return 0;
    double lo = ar * R_LO;
    if (!(lo >= 0x1p-1022)) return 0;
    double P = pow2d(exponent_of(lo));
    double d = absd((as_double(yb) - r.hi) - r.lo);
    if (!(tol > 0.0 ? d * 0x1.0000000000004p0 + E < tol : d + E < P * c_pass)) return 0;
    *e = (float)(d / (P * 0x1p-52));
    return 1;
}

__kernel void fuzzfarm_geometric_screen(__global const ulong *p0, __global const ulong *p1,
                                        __global const ulong *y, __global float *err,
                                        uint nvec, uint width, double c_pass) {
    uint i = get_global_id(0);
    if (i >= nvec) return;
    int ok = 1;
#ifdef DOT
    // the products exactly (two-product), summed in double-double: each addition within
    // 2**-104 of its operands' magnitudes, at most 2 S (S the sum of the products'
    // magnitudes): r within 15 2**-103 S < 2**-99 S of f, E = 2**-98 S covering S's own
    // rounding; at width 1 the correctly rounded test (CL.dot.width1_correctly_rounded),
    // else Table 1's max**2 2 (n - 1) EPS, EPS = 2**-52
    dd_t r = dd_of(0.0);
    double S = 0.0, mx = 0.0;
    for (uint k = 0; k < width; k++) {
        ulong a = p0[i * width + k], b = p1[i * width + k];
        ok &= lane_ok64(a) & lane_ok64(b);
        double pa = as_double(a), pb = as_double(b);
        dd_t p = dd_mul(dd_of(pa), dd_of(pb));
        r = dd_add(r, p);
        S += absd(p.hi);
        mx = fmax(mx, fmax(absd(pa), absd(pb)));
    }
    float ed = -1.0f;
    double tol = width == 1u ? 0.0
        : mx * mx * (double)(2u * (width - 1u)) * 0x1p-52 * 0x1.ffffffffffff8p-1;
    if (!ok || !result_within64(r, S * 0x1p-98, tol, y[i], c_pass, &ed))
        ed = -1.0f;
    err[i] = ed;
    return;
#endif
#ifdef CROSS
    // lane k = a_u b_v - a_v b_u of the first three lanes: two exact products, their
    // double-double difference within 2**-104 (|p1| + |p2|) of f_k (E = 2**-103 (|p1| +
    // |p2|)); each passed within max**2 3 EPS; a double4's w lane must be +0
    // (CL.cross.w_zero, .w_positive_zero), else the host judges it
    double A[3], B[3], mx = 0.0;
    for (uint k = 0; k < 3u; k++) {
        ulong a = p0[i * width + k], b = p1[i * width + k];
        ok &= lane_ok64(a) & lane_ok64(b);
        A[k] = as_double(a);
        B[k] = as_double(b);
        mx = fmax(mx, fmax(absd(A[k]), absd(B[k])));
    }
    for (uint k = 3u; k < width; k++)              // a double4's w lanes: on the ground too
        ok &= lane_ok64(p0[i * width + k]) & lane_ok64(p1[i * width + k]);
    float worst = -1.0f;
    if (ok && (width == 3u || y[i * width + 3u] == 0UL)) {
        double tol = mx * mx * 3.0 * 0x1p-52 * 0x1.ffffffffffff8p-1;
        worst = 0.0f;
        for (uint k = 0; k < 3u && worst >= 0.0f; k++) {
            uint u = (k + 1u) % 3u, v = (k + 2u) % 3u;
            dd_t q1 = dd_mul(dd_of(A[u]), dd_of(B[v])), q2 = dd_mul(dd_of(A[v]), dd_of(B[u]));
            dd_t r = dd_add(q1, dd_neg(q2));
            float ek;
            if (result_within64(r, (absd(q1.hi) + absd(q2.hi)) * 0x1p-103, tol,
                                y[i * width + k], c_pass, &ek))
                worst = fmax(worst, ek);
            else
                worst = -1.0f;
        }
    }
    err[i] = worst;
    return;
#endif
    // s = the sum of squares in double-double: each square exact (length) or within
    // 2**-103 (distance: the difference exact by two-sum, squared in double-double), each
    // addition of positive terms 2**-104 -- s within 2**-99 relatively, its root (dd_sqrt)
    // within 2**-100, a lane of normalize (dd_div) within 2**-99: below REL64 = 2**-90
    dd_t s = dd_of(0.0);
    for (uint k = 0; k < width; k++) {
        ulong a = p0[i * width + k];
        ok &= lane_ok64(a);
        dd_t v = dd_of(as_double(a));
#ifdef DISTANCE
        ulong b = p1[i * width + k];
        ok &= lane_ok64(b);
        v = dd_sum(v.hi, negd(as_double(b)));
        double av = absd(v.hi);
        ok &= av >= GROUND_LO && av < GROUND_HI;
#endif
        s = dd_add(s, dd_mul(v, v));
    }
    float e = -1.0f;
    if (ok) {
        dd_t len = dd_sqrt(s);
#ifdef NORMALIZE
        // each lane p_k / len, of magnitude 2**-400 / 2**402 or more: a normal result; the
        // vector passes where every lane does, its error the largest
        float worst = 0.0f;
        for (uint k = 0; k < width && worst >= 0.0f; k++) {
            float ek;
            if (result_within64(dd_div(as_double(p0[i * width + k]), len), 0.0, 0.0,
                                y[i * width + k], c_pass, &ek))
                worst = fmax(worst, ek);
            else
                worst = -1.0f;
        }
        e = worst;
#else
        float ek;
        if (result_within64(len, 0.0, 0.0, y[i], c_pass, &ek)) e = ek;
#endif
    }
    err[i] = e;
}
