// The device screen of the geometric built-ins in binary32 and binary16 (BINARY16)
// (docs/device_screen.md, "Geometric built-ins"): length, distance, normalize and their
// fast_ forms within their ULP bounds (NORMALIZE: a vector result, lane by lane), dot (DOT)
// and cross (CROSS: lane by lane) within their absolute tolerances.  One work-item per
// vector of ``width`` lanes (the host defines DISTANCE for distance and fast_distance,
// REL_LO as for the element-wise screen, and the ground: LANE_E_LO .. LANE_E_HI, the biased
// exponents of its lanes, GROUND_LO .. GROUND_HI their magnitudes; ``c_pass`` is the bound
// less the margin times EPS, as the element-wise screen's C_PASS): err[i] is the result's
// error in ULPs (d / u_lo) where it is provably within the bound, else -1 (the host's).
// Only vectors whose every lane (and, for distance, every difference of lanes) is a normal
// number of magnitude in [GROUND_LO, GROUND_HI) -- binary32 [2**-60, 2**61), binary16
// [2**-7, 2**4) -- are judged: no rule of geometric.toml holds there (no zero, infinite,
// NaN or subnormal lane, sums of squares and products far from the format's overflow and
// underflow, no lane fast_* may flush), so the result is judged by the bound alone.  The
// references are binary64 values (binary64_ops.cl goes first); every binary16 and binary32
// number is one, every product of two of them exactly.

#ifdef BINARY16
#define LANE ushort
#define FRAC 10
#define EXP_ALL 0x1fu
#define SIGN_SHIFT 15
#define MIN_NORMAL 0x1p-14
#define EPS 0x1p-10
// the value of a normal binary16 pattern (exact)
inline double lane_value(uint h) {
    double v = (double)((h & 0x3ffu) | 0x400u) * pow2d((int)((h >> 10) & 0x1fu) - 25);
    return (h & 0x8000u) ? negd(v) : v;
}
#else
#define LANE uint
#define FRAC 23
#define EXP_ALL 0xffu
#define SIGN_SHIFT 31
#define MIN_NORMAL 0x1p-126
#define EPS 0x1p-23
inline double lane_value(uint b) { return (double)as_float(b); }
#endif

// a lane on the ground: normal, of a biased exponent in [LANE_E_LO, LANE_E_HI]
inline int lane_ok(uint b) {
    uint e = (b >> FRAC) & EXP_ALL;
    return e >= LANE_E_LO && e <= LANE_E_HI;
}

// sqrt(s) of s in [2**-120, 2**126) (the ground's sums of squares) by Newton's iteration
// in binary64 from an estimate within 7 % (the exponent halved, the significand's linear fit): six steps leave it within
// 2**-52 relatively (quadratic convergence: 0.07 -> 2.5e-3 -> 3e-6 -> 5e-12 -> 1e-23 ->
// below one rounding; each step's own rounding 2**-52 at most)
inline double gsqrt(double s) {
    ulong b = as_ulong(s);
    double y = as_double(((b >> 1) + 0x1ff8000000000000UL) & 0x7fffffffffffffffUL);
    for (int k = 0; k < 6; k++) y = 0.5 * (y + s / y);
    return y;
}

// Whether the result yb (binary32, or binary16), against r within E of f, is a normal
// number of r's sign provably within the bound: E <= 2**-46 |r| (so that the ULP estimate
// d / u_lo, *e, is the element-wise screen's within_bound's), and where tol = 0 yb is
// within c_pass (the bound less the margin, times EPS: the element-wise screen's C_PASS;
// at 0.5 ULP, yb is provably the nearest number to f), where tol > 0 |yb - f| <= d (1 +
// 2**-52) + E < tol (an absolute tolerance less 2**-50 of it: dot, a lane of cross).  The
// references within a ULP bound pass E = 0: their |r - f| < 2**-49 |f| is in the margin.
inline int result_within(double r, double E, double tol, uint yb, double c_pass, float *e) {
    uint ey = (yb >> FRAC) & EXP_ALL;
    if (ey == 0u || ey == EXP_ALL || (yb >> SIGN_SHIFT) != (uint)(as_ulong(r) >> 63)) return 0;
    double ar = absd(r);
    if (!(E <= ar * 0x1p-46)) return 0;
    double lo = ar * REL_LO;
    if (!(lo >= MIN_NORMAL)) return 0;
    double P = as_double(as_ulong(lo) & 0x7ff0000000000000UL);      // 2**floor(log2 lo)
    double d = absd(lane_value(yb) - r);
    if (!(tol > 0.0 ? d * 0x1.0000000000001p0 + E < tol : d + E < P * c_pass)) return 0;
    *e = (float)(d / (P * EPS));
    return 1;
}

__kernel void fuzzfarm_geometric_screen(__global const LANE *p0, __global const LANE *p1,
                                        __global const LANE *y, __global float *err,
                                        uint nvec, uint width, double c_pass) {
    uint i = get_global_id(0);
    if (i >= nvec) return;
    int ok = 1;
#ifdef DOT
    double r = 0.0, S = 0.0, mx = 0.0;
    for (uint k = 0; k < width; k++) {
        uint a = p0[i * width + k], b = p1[i * width + k];
        ok &= lane_ok(a) & lane_ok(b);
        double pa = lane_value(a), pb = lane_value(b);
        double p = pa * pb;                        // exact: 24-bit significands
        r += p;
        S += absd(p);
        mx = fmax(mx, fmax(absd(pa), absd(pb)));
    }
    // r is within E = 2**-51 S (1 + 2**-50) of f, S the sum of the products' magnitudes
    // (three roundings of partial sums of at most S); at width 1 (the table's tolerance 0:
    // CL.dot.width1_correctly_rounded) the correctly rounded test, else OpenCL SPIR-V Env
    // Table 1's max**2 2 (n - 1) EPS, max the largest lane magnitude of both
    float ed = -1.0f;
    double tol = width == 1u ? 0.0
        : mx * mx * (double)(2u * (width - 1u)) * EPS * 0x1.ffffffffffff8p-1;
    if (!ok || !result_within(r, S * 0x1p-51 * 0x1.0000000000004p0, tol, y[i], c_pass, &ed))
        ed = -1.0f;
    err[i] = ed;
    return;
#endif
#ifdef CROSS
    // cross(p0, p1): lane k = a_i b_j - a_j b_i ((i, j) = (1, 2), (2, 0), (0, 1)) of the
    // first three lanes, two exact products and one rounding (fused or not): within
    // 2**-53 |r_k| (1 + 2**-50) of f_k; each passed within max**2 3 EPS (max over
    // the six lanes used, as the checker's); a float4's w lane must be +0 (CL.cross.w_zero,
    // .w_positive_zero), else the host judges it
    double A[3], B[3], mx = 0.0;
    for (uint k = 0; k < 3u; k++) {
        uint a = p0[i * width + k], b = p1[i * width + k];
        ok &= lane_ok(a) & lane_ok(b);
        A[k] = lane_value(a);
        B[k] = lane_value(b);
        mx = fmax(mx, fmax(absd(A[k]), absd(B[k])));
    }
    for (uint k = 3u; k < width; k++)              // a float4's w lanes: on the ground too
        ok &= lane_ok(p0[i * width + k]) & lane_ok(p1[i * width + k]);
    float worst = -1.0f;
    if (ok && (width == 3u || y[i * width + 3u] == 0u)) {
        double tol = mx * mx * 3.0 * EPS * 0x1.ffffffffffff8p-1;
        worst = 0.0f;
        for (uint k = 0; k < 3u && worst >= 0.0f; k++) {
            uint u = (k + 1u) % 3u, v = (k + 2u) % 3u;
            double r = A[u] * B[v] - A[v] * B[u];
            float ek;
            if (result_within(r, absd(r) * 0x1.0000000000004p-53, tol, y[i * width + k],
                              c_pass, &ek))
                worst = fmax(worst, ek);
            else
                worst = -1.0f;
        }
    }
    err[i] = worst;
    return;
#endif
    double s = 0.0;
    for (uint k = 0; k < width; k++) {
        uint a = p0[i * width + k];
        ok &= lane_ok(a);
        double v = lane_value(a);
#ifdef DISTANCE
        uint b = p1[i * width + k];
        ok &= lane_ok(b);
        v = v - lane_value(b);                     // rounded once (2**-53 relatively)
        double av = absd(v);
        ok &= av >= GROUND_LO && av < GROUND_HI;
#endif
        s += v * v;
    }
    float e = -1.0f;
    // r = sqrt(s): the squares are exact (length) or within 3 2**-53 (distance: a rounded
    // difference, squared and rounded), the sum of at most four positive terms adds 3
    // 2**-53, the square root halves it and adds 2**-52: |r - f| < 2**-49 |f| < REL |f|
    if (ok) {
        double len = gsqrt(s);
#ifdef NORMALIZE
        // each lane p_k / len: the quotient adds 2**-53, |r - f| < 2**-49 |f|; every lane
        // of magnitude 2**-60 / 2**62 or more, a normal result; the vector passes where
        // every lane does, its error the largest
        float worst = 0.0f;
        for (uint k = 0; k < width && worst >= 0.0f; k++) {
            float ek;
            if (result_within(lane_value(p0[i * width + k]) / len, 0.0, 0.0,
                              y[i * width + k], c_pass, &ek))
                worst = fmax(worst, ek);
            else
                worst = -1.0f;
        }
        e = worst;
#else
        float ek;
        if (result_within(len, 0.0, 0.0, y[i], c_pass, &ek)) e = ek;
#endif
    }
    err[i] = e;
}
