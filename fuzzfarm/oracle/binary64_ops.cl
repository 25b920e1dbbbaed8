// Exact operations on binary64 values (a binary16 pattern's value among them) and
// double-double arithmetic: the device references' building blocks (every screen kernel
// and the geometric screens put this file first; the argument in docs/device_screen.md).
// IEEE basic operations only, never contracted.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

inline double absd(double v) { return as_double(as_ulong(v) & 0x7fffffffffffffffUL); }
inline double negd(double v) { return as_double(as_ulong(v) ^ 0x8000000000000000UL); }
inline double copysignd(double v, double s) {
    return as_double((as_ulong(v) & 0x7fffffffffffffffUL) | (as_ulong(s) & 0x8000000000000000UL));
}
// 2**e for -1022 <= e <= 1023, exact
inline double pow2d(int e) { return as_double((ulong)(e + 1023) << 52); }
// round to the nearest integer, ties to even, for |v| < 2**51 (one addition and one
// subtraction in round to nearest); larger v are integers already
inline double rintd(double v) {
    if (absd(v) >= 0x1p51) return v;
    double big = copysignd(0x1.8p52, v);
    return (v + big) - big;
}

// the value of a finite binary16 pattern, exactly (a subnormal m 2**-24)
inline double half_value(uint h) {
    uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    double v = e ? (double)(m | 0x400u) * pow2d((int)e - 25) : (double)m * 0x1p-24;
    return (h & 0x8000u) ? negd(v) : v;
}

// The unbiased exponent of a normal binary64 number v (|v| = m 2**e, m in [1, 2))
inline int exponent_of(double v) { return (int)((as_ulong(v) >> 52) & 0x7ffUL) - 1023; }

// Double-double arithmetic: a dd_t is hi + lo with |lo| <= ulp(hi) / 2; the product's
// error terms are exact by fma (binary64 fma is correctly rounded), so dd_mul is within
// 2**-103 of the product of its operands' values (where no partial product underflows).
typedef struct { double hi, lo; } dd_t;

// Whether a passed result's error estimate e = d / u_lo (u_lo = P 2**-p) ranks it as its
// error does, given ``top`` >= |f|: where |f| may reach 2P f's ULP may be 2 u_lo and e twice
// the error, an estimate that can outrank the unit's true maximum; such a result passes
// only within ``tie`` (two margins, ULPs), else the host measures it ("Exact maxima",
// docs/device_screen.md).  The binary32 and binary16 screens' and the geometric screen's.
inline int binade_known(double top, double P, float e, double tie) {
    return !(top >= 2.0 * P) || e <= tie;
}

// The binade of f whose ULP a binary64 result is measured in, read off a reference r of f
// (r.hi finite nonzero, |r.hi + r.lo - f| <= 2**-84 |f|, |r.lo| <= 2**-51 |r.hi|):
// returns ep, the exponent of u = 2**(ep - 52) <= ulp(f) (ep >= -1022: every ULP below
// the normal range is 2**-1074's).  With P = 2**floor(log2 |r.hi|), t = (|r.hi| - P) + r.lo'
// and t2 = (|r.hi| - 2P) + r.lo' (r.lo' = r.lo in |r|'s direction; the differences exact,
// the sums rounded once) are |f| - P and |f| - 2P within 2**-84 |f| and 2**-53 of
// themselves: t > 2**-80 P puts |f| at or above P (ep = log2 P, u is f's ULP); otherwise
// ep is one less (|f| >= |r.hi| (1 - 2**-50) > P / 2).  *uncertain: 1 where t or t2 is
// within 2**-80 P of zero: |f| may then reach 2**(ep + 1), u be half f's ULP and an error
// measured in u twice the error.
inline int binade64(dd_t r, int *uncertain) {
    double ar = absd(r.hi);
    double al = (as_ulong(r.hi) >> 63) ? -r.lo : r.lo;
    int ep = ar >= 0x1p-1022 ? exponent_of(ar) : -1022;
    double P = pow2d(ep);
    double t = (ar - P) + al, t2 = (ar - 2.0 * P) + al;
    int below = ep > -1022 && !(t > 0x1p-80 * P);
    *uncertain = (below && t >= -0x1p-80 * P) || (ep < 1023 && t2 >= -0x1p-80 * 2.0 * P);
    return ep - below;
}
inline dd_t dd_fast(double h, double l) {           // |h| >= |l| (or h = 0): exact
    double s = h + l;
    dd_t r = { s, l - (s - h) };
    return r;
}
inline dd_t dd_sum(double a, double b) {            // a + b exactly (Knuth's two-sum)
    double s = a + b;
    double bb = s - a;
    dd_t r = { s, (a - (s - bb)) + (b - bb) };
    return r;
}
inline dd_t dd_mul(dd_t a, dd_t b) {
    double p = a.hi * b.hi;
    double e = fma(a.hi, b.hi, -p);
    e = fma(a.hi, b.lo, e);
    e = fma(a.lo, b.hi, e);
    return dd_fast(p, e);
}

inline dd_t dd_add(dd_t a, dd_t b) {                // within 2**-104 of |a| + |b|
    dd_t s = dd_sum(a.hi, b.hi);
    return dd_fast(s.hi, s.lo + (a.lo + b.lo));
}
inline dd_t dd_d(double v) { dd_t r = { v, 0.0 }; return r; }
inline dd_t dd_neg(dd_t a) { a.hi = negd(a.hi); a.lo = negd(a.lo); return a; }
// a / b within 2**-101 of the quotient of a's and b's values (where no partial result
// underflows): q1 = a.hi / b.hi (2**-52), the remainder a - q1 b within 2**-102 |a| (q1 b
// by dd_mul, the difference exact in its high parts by Sterbenz), q2 its quotient rounded
// once (2**-52 of 2**-51 |a / b|)
inline dd_t dd_div(dd_t a, dd_t b) {
    double q1 = a.hi / b.hi;
    dd_t rem = dd_add(a, dd_neg(dd_mul(dd_d(q1), b)));
    return dd_fast(q1, rem.hi / b.hi);
}
