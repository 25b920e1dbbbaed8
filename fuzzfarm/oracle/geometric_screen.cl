// The device screen of the geometric built-ins (docs/device_screen.md, "Geometric
// built-ins"): length, distance, normalize (and, in binary32, their fast_ forms) within
// their ULP bounds (NORMALIZE: a vector result, lane by lane), dot (DOT) and cross (CROSS:
// lane by lane) within their absolute tolerances, in binary32, binary16 (BINARY16) and
// binary64 (BINARY64).  One work-item per vector of ``width`` lanes (the host defines
// DISTANCE for distance and fast_distance, REL_LO (binary16, binary32) and R_LO (binary64)
// as for the element-wise screens, and the ground: LANE_E_LO .. LANE_E_HI, the biased
// exponents of its lanes, GROUND_LO .. GROUND_HI their magnitudes; ``c_pass`` is the bound
// less the margin times EPS, as the element-wise screen's C_PASS, and ``tie`` its TIE):
// err[i] is the result's error in ULPs (d / u_lo) where it is provably within the bound,
// else -1 (the host's).
// Only vectors whose every lane (and, for distance, every difference of lanes) is a normal
// number of magnitude in [GROUND_LO, GROUND_HI) -- binary32 [2**-60, 2**61), binary16
// [2**-7, 2**4), binary64 [2**-400, 2**400) -- are judged: no rule of geometric.toml holds
// there (no zero, infinite, NaN or subnormal lane, sums of squares and products far from
// the format's overflow and underflow, no lane fast_* may flush), so the result is judged
// by the bound alone.  The references (ref_t) are binary64 values for binary16 and
// binary32 results -- every binary16 and binary32 number is one, every product of two of
// them exactly -- and double-double values for binary64 results (binary64_ops.cl goes
// first); the kernel is written once over ref_t's operations.

#if defined(BINARY64)
#define LANE ulong
#define FRAC 52
#define EXP_ALL 0x7ffu
#define EPS 0x1p-52
inline double lane_value(ulong b) { return as_double(b); }
#elif defined(BINARY16)
#define LANE ushort
#define FRAC 10
#define EXP_ALL 0x1fu
#define SIGN_SHIFT 15
#define EPS 0x1p-10
#define MIN_NORMAL 0x1p-14
inline double lane_value(ulong h) { return half_value((uint)h); }     // exact
#else
#define LANE uint
#define FRAC 23
#define EXP_ALL 0xffu
#define SIGN_SHIFT 31
#define EPS 0x1p-23
#define MIN_NORMAL 0x1p-126
inline double lane_value(ulong b) { return (double)as_float((uint)b); }
#endif

// a lane on the ground: normal, of a biased exponent in [LANE_E_LO, LANE_E_HI]
inline int lane_ok(ulong b) {
    uint e = (uint)((b >> FRAC) & EXP_ALL);
    return e >= LANE_E_LO && e <= LANE_E_HI;
}

// sqrt(s) of s in [2**-800, 2**806) (the grounds' sums of squares) by Newton's iteration in
// binary64 from an estimate within 7 % (the exponent halved, the significand's linear
// fit): six steps leave it within 2**-52 relatively (quadratic convergence: 0.07 ->
// 2.5e-3 -> 3e-6 -> 5e-12 -> 1e-23 -> below one rounding; each step's own rounding 2**-52
// at most)
inline double gsqrt(double s) {
    ulong b = as_ulong(s);
    double y = as_double(((b >> 1) + 0x1ff8000000000000UL) & 0x7fffffffffffffffUL);
    for (int k = 0; k < 6; k++) y = 0.5 * (y + s / y);
    return y;
}

#ifdef BINARY64
// ---- binary64 results: double-double references
typedef dd_t ref_t;
inline ref_t ref_of(double v) { return dd_d(v); }
inline double ref_hi(ref_t r) { return r.hi; }
inline ref_t ref_mul(ref_t a, ref_t b) { return dd_mul(a, b); }     // 2**-103; exact on
inline ref_t ref_add(ref_t a, ref_t b) { return dd_add(a, b); }     // two doubles
inline ref_t ref_neg(ref_t a) { return dd_neg(a); }
inline ref_t ref_sub(double a, double b) { return dd_sum(a, negd(b)); }   // exact
// sqrt of a double-double s: y = gsqrt(s.hi), within 2**-51 of sqrt(s) (2**-52 of
// sqrt(s.hi), itself within 2**-54 of sqrt(s)), then one Newton step in double-double,
// y + (s - y**2) / (2 y): exactly it would leave delta**2 / 2 <= 2**-103; y**2 = p + pe
// exactly (fma), s.hi - p exactly (p within a factor 2 of s.hi), the two further
// additions and the quotient add 2**-102 -- within 2**-101 relatively
inline ref_t ref_sqrt(ref_t s) {
    double y = gsqrt(s.hi);
    double p = y * y, pe = fma(y, y, -p);
    double rem = ((s.hi - p) - pe) + s.lo;
    return dd_fast(y, rem / (2.0 * y));
}
inline ref_t ref_div(double x, ref_t b) { return dd_div(dd_d(x), b); }     // 2**-101
// dot: each double-double addition within 2**-104 of at most 2 S (S the sum of the
// products' magnitudes): within 15 2**-103 S < 2**-99 S of f; cross: a difference of two
// exact products within 2**-104 (|p1| + |p2|)
#define DOT_E(S) ((S) * 0x1p-98)
#define CROSS_E(p1, p2, r) ((absd((p1).hi) + absd((p2).hi)) * 0x1p-103)

// Whether the binary64 result yb, against r within E of f, is a normal number of r's sign
// provably within the bound: E <= 2**-92 |r.hi| (so that binade64 gives P = 2**ep with
// u = P 2**-52 <= ulp(f)); d = |(y - r.hi) -
// r.lo|, two roundings at most; where tol = 0, d + E < P c_pass (the bound less the margin
// of the element-wise binary64 screen, whose reference error REL64 = 2**-90 covers the
// references' 2**-98 and E; at 0.5 ULP, yb is provably the nearest binary64 number to f),
// where tol > 0, d (1 + 2**-50) + E < tol (an absolute tolerance less 2**-50 of it: dot, a
// lane of cross).  *e: d / u, u = P 2**-52 <= ulp(f), f's binade read off the
// double-double (binade64, binary64_ops.cl); where it is uncertain *e may be twice the
// error, and the result passes only within ``tie``.
inline int result_within(ref_t r, double E, double tol, ulong yb, double c_pass,
                         double tie, float *e) {
    uint ey = (uint)((yb >> 52) & 0x7ffUL);
    if (ey == 0u || ey == 0x7ffu || (yb >> 63) != (as_ulong(r.hi) >> 63)) return 0;
    double ar = absd(r.hi);
    if (!(E <= ar * 0x1p-92)) return 0;
    if (!(ar * R_LO >= 0x1p-1022)) return 0;
    int uncertain;
    double P = pow2d(binade64(r, &uncertain));
    double d = absd((as_double(yb) - r.hi) - r.lo);
    if (!(tol > 0.0 ? d * 0x1.0000000000004p0 + E < tol : d + E < P * c_pass)) return 0;
    *e = (float)(d / (P * EPS));
    return !uncertain || *e <= tie;
}
#else
// ---- binary16 and binary32 results: binary64 references (each operation one rounding)
typedef double ref_t;
inline ref_t ref_of(double v) { return v; }
inline double ref_hi(ref_t r) { return r; }
inline ref_t ref_mul(ref_t a, ref_t b) { return a * b; }    // exact on two lanes
inline ref_t ref_add(ref_t a, ref_t b) { return a + b; }
inline ref_t ref_neg(ref_t a) { return -a; }
inline ref_t ref_sub(double a, double b) { return a - b; }  // rounded once (2**-53)
inline ref_t ref_sqrt(ref_t s) { return gsqrt(s); }
inline ref_t ref_div(double x, ref_t b) { return x / b; }
// dot: three roundings of partial sums of at most S; cross: one rounding of the
// difference of two exact products
#define DOT_E(S) ((S) * 0x1p-51 * 0x1.0000000000004p0)
#define CROSS_E(p1, p2, r) (absd(r) * 0x1.0000000000004p-53)

// Whether the result yb (binary32, or binary16), against r within E of f, is a normal
// number of r's sign provably within the bound: E <= 2**-46 |r| (so that the ULP estimate
// d / u_lo, *e, is the element-wise screen's within_bound's), and where tol = 0 yb is
// within c_pass (the bound less the margin, times EPS: the element-wise screen's C_PASS;
// at 0.5 ULP, yb is provably the nearest number to f), where tol > 0 |yb - f| <= d (1 +
// 2**-52) + E < tol (an absolute tolerance less 2**-50 of it: dot, a lane of cross).  The
// references within a ULP bound pass E = 0: their |r - f| < 2**-49 |f| is in the margin.
// Where |f| may reach 2P (|r| (2 - REL_LO) does) *e may be twice the error, and the result
// passes only within ``tie`` (binade_known).
inline int result_within(ref_t r, double E, double tol, ulong yb, double c_pass,
                         double tie, float *e) {
    uint ey = (uint)((yb >> FRAC) & EXP_ALL);
    if (ey == 0u || ey == EXP_ALL || (uint)(yb >> SIGN_SHIFT) != (uint)(as_ulong(r) >> 63))
        return 0;
    double ar = absd(r);
    if (!(E <= ar * 0x1p-46)) return 0;
    double lo = ar * REL_LO;
    if (!(lo >= MIN_NORMAL)) return 0;
    double P = as_double(as_ulong(lo) & 0x7ff0000000000000UL);      // 2**floor(log2 lo)
    double d = absd(lane_value(yb) - r);
    if (!(tol > 0.0 ? d * 0x1.0000000000001p0 + E < tol : d + E < P * c_pass)) return 0;
    *e = (float)(d / (P * EPS));
    return binade_known(ar * (2.0 - REL_LO), P, *e, tie);
}
#endif

__kernel void fuzzfarm_geometric_screen(__global const LANE *p0, __global const LANE *p1,
                                        __global const LANE *y, __global float *err,
                                        uint nvec, uint width, double c_pass,
                                        double tie) {
    uint i = get_global_id(0);
    if (i >= nvec) return;
    int ok = 1;
#ifdef DOT
    // r: the sum of the exact products, within DOT_E(S) of f; at width 1 (the table's
    // tolerance 0: CL.dot.width1_correctly_rounded) the correctly rounded test, else
    // OpenCL SPIR-V Env Table 1's max**2 2 (n - 1) EPS, max the largest lane magnitude of
    // both
    ref_t r = ref_of(0.0);
    double S = 0.0, mx = 0.0;
    for (uint k = 0; k < width; k++) {
        LANE a = p0[i * width + k], b = p1[i * width + k];
        ok &= lane_ok(a) & lane_ok(b);
        double pa = lane_value(a), pb = lane_value(b);
        ref_t p = ref_mul(ref_of(pa), ref_of(pb));
        r = ref_add(r, p);
        S += absd(ref_hi(p));
        mx = fmax(mx, fmax(absd(pa), absd(pb)));
    }
    float ed = -1.0f;
    double tol = width == 1u ? 0.0
        : mx * mx * (double)(2u * (width - 1u)) * EPS * 0x1.ffffffffffff8p-1;
    if (!ok || !result_within(r, DOT_E(S), tol, y[i], c_pass, tie, &ed))
        ed = -1.0f;
    err[i] = ed;
    return;
#endif
#ifdef CROSS
    // cross(p0, p1): lane k = a_u b_v - a_v b_u ((u, v) = (1, 2), (2, 0), (0, 1)) of the
    // first three lanes, two exact products and their difference, within CROSS_E of f_k;
    // each passed within max**2 3 EPS (max over the six lanes used, as the checker's); a
    // 4-wide result's w lane must be +0 (CL.cross.w_zero, .w_positive_zero), else the
    // host judges it
    double A[3], B[3], mx = 0.0;
    for (uint k = 0; k < 3u; k++) {
        LANE a = p0[i * width + k], b = p1[i * width + k];
        ok &= lane_ok(a) & lane_ok(b);
        A[k] = lane_value(a);
        B[k] = lane_value(b);
        mx = fmax(mx, fmax(absd(A[k]), absd(B[k])));
    }
    for (uint k = 3u; k < width; k++)              // a 4-wide vector's w lanes: on the ground
        ok &= lane_ok(p0[i * width + k]) & lane_ok(p1[i * width + k]);
    float worst = -1.0f;
    if (ok && (width == 3u || y[i * width + 3u] == 0)) {
        double tol = mx * mx * 3.0 * EPS * 0x1.ffffffffffff8p-1;
        worst = 0.0f;
        for (uint k = 0; k < 3u && worst >= 0.0f; k++) {
            uint u = (k + 1u) % 3u, v = (k + 2u) % 3u;
            ref_t q1 = ref_mul(ref_of(A[u]), ref_of(B[v]));
            ref_t q2 = ref_mul(ref_of(A[v]), ref_of(B[u]));
            ref_t r = ref_add(q1, ref_neg(q2));
            float ek;
            if (result_within(r, CROSS_E(q1, q2, ref_hi(r)), tol, y[i * width + k], c_pass,
                              tie, &ek))
                worst = fmax(worst, ek);
            else
                worst = -1.0f;
        }
    }
    err[i] = worst;
    return;
#endif
    // r = sqrt(s), s the sum of squares.  binary16 and binary32: the squares are exact
    // (length) or within 3 2**-53 (distance: a rounded difference, squared and rounded),
    // the sum of at most four positive terms adds 3 2**-53, the square root halves it and
    // adds 2**-52: |r - f| < 2**-49 |f| < REL |f|; normalize's quotients add 2**-53.
    // binary64: the squares exact (two-product) or within 2**-103 (the difference exact,
    // squared in double-double), each addition of positive terms 2**-104: s within 2**-99,
    // its root 2**-101 more, a quotient 2**-101: within 2**-98 < REL64
    ref_t s = ref_of(0.0);
    for (uint k = 0; k < width; k++) {
        LANE a = p0[i * width + k];
        ok &= lane_ok(a);
        ref_t v = ref_of(lane_value(a));
#ifdef DISTANCE
        LANE b = p1[i * width + k];
        ok &= lane_ok(b);
        v = ref_sub(lane_value(a), lane_value(b));
        double av = absd(ref_hi(v));
        ok &= av >= GROUND_LO && av < GROUND_HI;
#endif
        s = ref_add(s, ref_mul(v, v));
    }
    float e = -1.0f;
    if (ok) {
        ref_t len = ref_sqrt(s);
#ifdef NORMALIZE
        // each lane p_k / len, of magnitude GROUND_LO / (2 GROUND_HI) or more: a normal
        // result; the vector passes where every lane does, its error the largest
        float worst = 0.0f;
        for (uint k = 0; k < width && worst >= 0.0f; k++) {
            float ek;
            if (result_within(ref_div(lane_value(p0[i * width + k]), len), 0.0, 0.0,
                              y[i * width + k], c_pass, tie, &ek))
                worst = fmax(worst, ek);
            else
                worst = -1.0f;
        }
        e = worst;
#else
        float ek;
        if (result_within(len, 0.0, 0.0, y[i], c_pass, tie, &ek)) e = ek;
#endif
    }
    err[i] = e;
}
