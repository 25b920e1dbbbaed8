// fuzzfarm's device screen for binary64 results (fuzzfarm/oracle/device_screen.py; the
// argument in docs/device_screen.md, "Binary64 results").  References of binary64 built-ins
// made of IEEE basic operations (+ - * / fma) in double-double and integer arithmetic: no
// built-in math function of the device is called.  A reference of a binary64 pattern (and
// a second one, TWO_ARGS) returns a dd_t r and its kind (screen_common.cl's K_*): for
// K_VALUE, |r.hi + r.lo - f| <= REL64 |f| (REL64 = 2**-90, the written budgets below);
// for K_EXACT, f is r.hi exactly, bit for bit.  The host prepends its defines (REF,
// C_PASS64, TIE, R_LO, R_HI, the answers ANS_* at zeros, infinities and NaNs as 64-bit patterns,
// NBANDS ...), the constants (TWO_OVER_PI, the double-double coefficients) and
// screen_common.cl.

#define ABS64 0x7fffffffffffffffUL
#define SIGN64 0x8000000000000000UL
#define INF64 0x7ff0000000000000UL

// x finite and nonzero: x = m 2**k with the integer significand m (53 bits for a normal x,
// fewer for a subnormal)
inline ulong significand64(ulong ax, int *k) {
    int e = (int)(ax >> 52);
    *k = (e ? e : 1) - 1075;
    return e ? (ax & 0x000fffffffffffffUL) | 0x0010000000000000UL : ax;
}
// a finite nonzero x: m in [1, 2) with x's sign and e, x = m 2**e (exact)
inline double unit64(ulong xb, int *e) {
    int k;
    ulong sig = significand64(xb & ABS64, &k);
    int lz = (int)clz(sig) - 11;                       // sig 2**lz in [2**52, 2**53)
    *e = k - lz + 52;
    return copysignd((double)(sig << lz) * 0x1p-52, as_double(xb));
}
// a total order of finite binary64 patterns by value (+0 and -0 apart: never asked)
inline long order64(ulong b) { return (b >> 63) ? -(long)(b & ABS64) : (long)b; }

// ---- The exact built-ins, judged bit for bit: integer arithmetic on the patterns.
// x rounded toward zero to an integer, x's sign kept
inline ulong trunc64(ulong xb) {
    int e = (int)((xb >> 52) & 0x7ffUL);
    if (e >= 1075) return xb;                        // |x| >= 2**52: an integer already
    if (e < 1023) return xb & SIGN64;                // |x| < 1: a zero of x's sign
    return xb & ~((1UL << (1075 - e)) - 1UL);        // clear the fraction's bits
}
// the integer next away from zero of a non-integer t's magnitude: |t| + 1 as a pattern
// (t = trunc(x) != x; |t| < 2**52): the exact sum of an integer below 2**52 and 1
inline ulong away64(ulong tb) {
    double a = as_double(tb & ABS64) + 1.0;          // exact: integers below 2**53
    return as_ulong(a) | (tb & SIGN64);
}
#define EXACT(v) do { *kind = K_EXACT; dd_t r_ = { as_double(v), 0.0 }; return r_; } while (0)
inline dd_t ref64_fabs(ulong xb, int *kind) { EXACT(xb & ABS64); }
inline dd_t ref64_trunc(ulong xb, int *kind) { EXACT(trunc64(xb)); }
inline ulong floor64(ulong xb) {
    ulong t = trunc64(xb);
    return ((xb >> 63) && t != xb) ? away64(t) : t;  // floor(-0.5) = -1
}
inline dd_t ref64_floor(ulong xb, int *kind) { EXACT(floor64(xb)); }
inline dd_t ref64_ceil(ulong xb, int *kind) {
    ulong t = trunc64(xb);
    EXACT((!(xb >> 63) && t != xb) ? away64(t) : t); // ceil(-0.5) = -0
}
// to the nearest integer, ties to even (rint) or away from zero (round), x's sign kept:
// from the fraction's bits (f: the bits below the units bit, h: the half)
inline ulong round64(ulong xb, int even) {
    ulong ax = xb & ABS64;
    int e = (int)(ax >> 52);
    if (e >= 1075) return xb;
    if (e < 1022) return xb & SIGN64;                // |x| < 1/2
    ulong t = trunc64(xb);
    if (e == 1022) {                                 // 1/2 <= |x| < 1
        int up = ax != 0x3fe0000000000000UL || !even;
        return up ? (0x3ff0000000000000UL | (xb & SIGN64)) : (xb & SIGN64);
    }
    ulong f = ax & ((1UL << (1075 - e)) - 1UL), h = 1UL << (1074 - e);
    int odd = (int)((ax >> (1075 - e)) & 1UL);
    int up = f > h || (f == h && (!even || odd));
    return up ? away64(t) : t;
}
inline dd_t ref64_rint(ulong xb, int *kind) { EXACT(round64(xb, 1)); }
inline dd_t ref64_round(ulong xb, int *kind) { EXACT(round64(xb, 0)); }
// floor(log2 |x|): the unbiased exponent, a subnormal's as if normalized (-1023 .. -1074)
inline dd_t ref64_logb(ulong xb, int *kind) {
    ulong ax = xb & ABS64;
    int e = (int)(ax >> 52);
    *kind = K_EXACT;
    dd_t r = { (double)(e ? e - 1023 : -1011 - (int)clz(ax)), 0.0 };
    return r;
}
inline dd_t ref64_sign(ulong xb, int *kind) { EXACT((xb & SIGN64) | 0x3ff0000000000000UL); }
// ilogb's int result, as a binary64 value (RESULT_INT: compared with y as an int32)
inline dd_t ref64_ilogb(ulong xb, int *kind) { return ref64_logb(xb, kind); }

// ---- Built-ins of a second output (OUT2(x, z, y2): whether the second output y2 -- an
// int, or a binary64 pattern -- is right; the first is judged by REF as always; every
// input with a zero, infinite or NaN argument the host's)
// frexp(x) = m 2**e, m in [1/2, 1) with x's sign, e an int (C99 7.12.6.4): from unit64
// (a subnormal normalized), exact
inline dd_t ref64_frexp(ulong xb, int *kind) {
    int e;
    double m = unit64(xb, &e);
    EXACT(as_ulong(m * 0.5));
}
inline int out2_frexp64(ulong xb, ulong zb, ulong y2b) {
    int e;
    unit64(xb, &e);
    return (int)y2b == e + 1;
}
// modf(x): the fraction x - trunc(x) with x's sign (a zero of x's sign for an integer x:
// F9.modf.1), trunc(x) in iptr (CL.modf.as_though_trunc); both exact
inline dd_t ref64_modf(ulong xb, int *kind) {
    double f = absd(as_double(xb) - as_double(trunc64(xb)));     // exact: x's low bits
    EXACT(as_ulong(f) | (xb & SIGN64));
}
inline int out2_modf64(ulong xb, ulong zb, ulong y2b) { return y2b == trunc64(xb); }
// fract(x) = fmin(x - floor(x), 0x1.fffffffffffffp-1) (OpenCL C 3.0 §6.15.2), floor(x) in
// iptr: the difference of two binary64 numbers rounded once by the device's subtraction
// (correctly rounded, as the table's 0 ULP prescribes: exact but where x < 0 and
// |x| < 1, whose 1 - |x| rounds -- to 1 where |x| <= 2**-54, which the fmin caps)
inline dd_t ref64_fract(ulong xb, int *kind) {
    double v = as_double(xb) - as_double(floor64(xb));
    EXACT(as_ulong(v < 0x1.fffffffffffffp-1 ? v : 0x1.fffffffffffffp-1));
}
inline int out2_fract64(ulong xb, ulong zb, ulong y2b) { return y2b == floor64(xb); }
inline dd_t ref64_copysign(ulong xb, ulong zb, int *kind) { EXACT((xb & ABS64) | (zb & SIGN64)); }
inline dd_t ref64_fmin(ulong xb, ulong zb, int *kind) {   // x == z: the same pattern
    EXACT(order64(zb) < order64(xb) ? zb : xb);
}
inline dd_t ref64_fmax(ulong xb, ulong zb, int *kind) {
    EXACT(order64(xb) < order64(zb) ? zb : xb);
}
// maxmag / minmag: the argument of the larger / smaller magnitude, fmax / fmin where the
// magnitudes are equal (OpenCL C 3.0 §6.15.2)
inline dd_t ref64_maxmag(ulong xb, ulong zb, int *kind) {
    ulong ax = xb & ABS64, az = zb & ABS64;
    if (ax != az) EXACT(ax > az ? xb : zb);
    return ref64_fmax(xb, zb, kind);
}
inline dd_t ref64_minmag(ulong xb, ulong zb, int *kind) {
    ulong ax = xb & ABS64, az = zb & ABS64;
    if (ax != az) EXACT(ax < az ? xb : zb);
    return ref64_fmin(xb, zb, kind);
}
// nextafter(x, z): z where x == z, else the next binary64 number from x toward z (its
// magnitude one pattern up or down: from the largest finite number up, the infinity; from
// the smallest subnormal down, the zero of x's sign)
inline dd_t ref64_nextafter(ulong xb, ulong zb, int *kind) {
    if (xb == zb) EXACT(zb);
    int up = (order64(xb) < order64(zb)) == !(xb >> 63);     // the magnitude grows
    EXACT(up ? xb + 1UL : xb - 1UL);
}
// step(edge, x) = 0.0 where x < edge, else 1.0
inline dd_t ref64_step(ulong xb, ulong zb, int *kind) {
    EXACT(order64(zb) < order64(xb) ? 0UL : 0x3ff0000000000000UL);
}

// ---- sqrt, correctly rounded (screened at 0.5 ULP).  x = m 2**(2q), m in [1, 4) (a
// subnormal x scaled by 2**108 first); y0 within 2**-50 of sqrt(m) by Newton's iterations
// from a linear start (within 10 %: five steps, each squaring the relative error, reach
// the rounding of the step, below 2**-51); then one step in double-double: the residual
// m - y0**2 is exact by fma up to one rounding (its magnitude is below 2**-48 m), so
// y0 + (m - y0**2) / (2 y0) is within (2**-50)**2 / 2 + 2**-100 < 2**-98 of sqrt(m).
// The scalings by powers of two are exact.  A negative x: a NaN (F9.sqrt.D3, K_NAN).
inline dd_t ref64_sqrt(ulong xb, int *kind) {
    dd_t r = { NAN, 0.0 };
    if (xb >> 63) { *kind = K_NAN; return r; }
    *kind = K_VALUE;
    int ex;
    double m = unit64(xb, &ex);                       // x = m 2**ex, m in [1, 2)
    if (ex & 1) { m *= 2.0; ex -= 1; }                // m in [1, 4), ex even
    double y = 1.0 + (m - 1.0) * 0.3333333333333333;
    for (int i = 0; i < 5; i++) y = 0.5 * (y + m / y);
    double res = fma(-y, y, m);                       // m - y**2, one rounding
    r = dd_fast(y, res / (2.0 * y));
    int h = ex / 2;                                   // sqrt(x) = sqrt(m) 2**h, |h| <= 537
    r.hi *= pow2d(h); r.lo *= pow2d(h);
    return r;
}

// a + a**3 / d for the small a of the odd series (|a| < 2**-30; the next term below
// 2**-117 relative): a alone below 2**-300, where a**3 would lose bits (a**2 / |d| < 2**-600)
inline dd_t cubic_term(double a, double d) {
    return dd_fast(a, absd(a) < 0x1p-300 ? 0.0 : (a * a * a) / d);
}

// ---- sin and cos: x reduced modulo pi/2 with exact integer arithmetic (Payne and Hanek)
// to z = t pi/2, |t| <= 1/2, t within 2**-169 (absolute) of the exact x 2/pi - (4 j + q)
// (eight words of 2/pi past those whose products with x are multiples of 4: the tail
// below m 2**(k - 32 (i0 + 8)) < 2**(87 - 256)); the closest binary64 number to a multiple
// of pi/2 leaves |t| >= 2**-62, so t's relative error is below 2**-106, its rounding to a
// double-double 2**-106, the product by pi/2 (PIO2 as a double-double, 2**-107) 2**-103:
// z within 2**-101.  Then sin(z) and cos(z) by their Taylor series in double-double
// (Horner, each step within 2**-103; the terms from z**17 (sin) and z**16 (cos) on, below
// 2**-50 relative together, in double (their rounding below 2**-100); truncation after
// z**25 and z**24 below 2**-96): below 2**-95 relative, and z's error moves sin(z) by at
// most |z cot z| <= 1 times it and cos(z) by |z tan z| <= pi/4 times it: within 2**-94 of
// sin(x) or cos(x).

// The bits of x 2/pi for |x| = m 2**k >= 1/2: *q = (the integer part) mod 4 and the
// fraction's two's complement t in [-1/2, 1/2) as a double-double
inline dd_t reduce64(ulong ax, int *q) {
    int k;
    ulong m = significand64(ax, &k);
    int i0 = k <= 33 ? 0 : (k - 2) / 32;             // words of 2/pi that reach below 2**2
    uint L[12];
    ulong carry = 0UL;
    for (int j = 3; j >= 0; j--) {                    // S = m * (W[i0] .. W[i0+7]), 64 bits a step
        ulong v = ((ulong)TWO_OVER_PI[i0 + 2 * j] << 32) | (ulong)TWO_OVER_PI[i0 + 2 * j + 1];
        ulong lo = m * v, hi = mul_hi(m, v);
        lo += carry;
        hi += lo < carry ? 1UL : 0UL;
        L[2 * (3 - j)] = (uint)lo; L[2 * (3 - j) + 1] = (uint)(lo >> 32);
        carry = hi;
    }
    L[8] = (uint)carry; L[9] = (uint)(carry >> 32); L[10] = 0u; L[11] = 0u;
    int p0 = 256 + 32 * i0 - k;                       // bit p0 of S is the units bit
    int quad = (int)(bits64(L, p0) & 3UL);
    ulong fh = bits64(L, p0 - 64), fm = bits64(L, p0 - 128), fl = bits64(L, p0 - 192);
    int neg = 0;
    if (fh >> 63) {                                   // t = fraction - 1: negate 192 bits
        fl = ~fl + 1UL;
        fm = ~fm + (fl == 0UL ? 1UL : 0UL);
        fh = ~fh + ((fl == 0UL && fm == 0UL) ? 1UL : 0UL);
        quad = (quad + 1) & 3;
        neg = 1;
    }
    *q = quad;
    int e = -64;                                      // t = (fh fm fl) 2**-64 (in units of fh)
    if (fh == 0UL) { fh = fm; fm = fl; fl = 0UL; e -= 64; }      // |t| >= 2**-62: fh != 0
    if (fh == 0UL) { dd_t nan = { NAN, 0.0 }; return nan; }        // never: the host's
    int lz = (int)clz(fh);
    ulong top = lz ? (fh << lz) | (fm >> (64 - lz)) : fh;
    ulong next = lz ? (fm << lz) | (fl >> (64 - lz)) : fm;
    // top's 64 bits then next's: hi takes top's first 53 bits (exactly: the conversion of
    // top >> 11), lo the following 64 (rounded once)
    double hi = (double)(top >> 11) * pow2d(e - lz + 11);
    double lo = ((double)(top & 0x7ffUL) * 0x1p64 + (double)next) * pow2d(e - lz - 64);
    dd_t t = dd_fast(hi, lo);
    if (neg) { t.hi = negd(t.hi); t.lo = negd(t.lo); }
    return t;
}

// sum_{first <= k <= top} C[k] s**(k - first) (C: double-double pairs, C[2 k] the high
// part, C[2 k + 1] the low): Horner in double for the terms above ``split`` (s.hi, the
// coefficients' high parts: used where those terms are small enough for their rounding,
// each caller's budget), then in double-double down to ``first``
inline dd_t dd_series(dd_t s, __constant const double *C, int top, int split, int first) {
    double p = C[2 * top];
    for (int k = top - 1; k > split; k--) p = fma(p, s.hi, C[2 * k]);
    dd_t q = { p, 0.0 };
    for (int k = split; k >= first; k--) {
        dd_t c = { C[2 * k], C[2 * k + 1] };
        q = dd_add(dd_mul(q, s), c);
    }
    return q;
}
// sin(z) = z + z**3 P(z**2), cos(z) = 1 + z**2 Q(z**2) for |z| <= pi/4 (SIN64_C[i], COS64_C[i]:
// the Taylor coefficients of z**(2 i + 3) and z**(2 i + 2), i <= 11; double-double to i = 6)
inline dd_t sin_dd(dd_t z) {
    dd_t s = dd_mul(z, z);
    return dd_add(z, dd_mul(dd_mul(z, s), dd_series(s, SIN64_C, 11, 6, 0)));
}
inline dd_t cos_dd(dd_t z) {
    dd_t s = dd_mul(z, z), one = { 1.0, 0.0 };
    return dd_add(one, dd_mul(s, dd_series(s, COS64_C, 11, 6, 0)));
}

// sin(x) (cosine 0) or cos(x) (cosine 1) of a finite nonzero x: no reduction below 1/2;
// sin(x) = x (1 - x**2 / 6 ...) for |x| < 2**-30, the rest below 2**-120 relative (x**3 / 6
// in double: normal for |x| >= 2**-300; below that sin(x) = x within 2**-600)
inline dd_t sin_or_cos64(ulong xb, int cosine) {
    ulong ax = xb & ABS64;
    dd_t r;
    if (ax < 0x3e10000000000000UL) {                  // |x| < 2**-30
        double a = as_double(ax);
        if (cosine) r = dd_fast(1.0, -0.5 * a * a);   // 1 - x**2/2, x**4/24 < 2**-122
        else r = cubic_term(a, -6.0);
    } else if (ax < 0x3fe0000000000000UL) {           // |x| < 1/2
        dd_t z = { as_double(ax), 0.0 };
        r = cosine ? cos_dd(z) : sin_dd(z);
    } else {
        int q;
        dd_t t = reduce64(ax, &q);
        dd_t pio2 = { PIO2_HI, PIO2_LO };
        dd_t z = dd_mul(t, pio2);
        q += cosine;
        r = (q & 1) ? cos_dd(z) : sin_dd(z);
        if (q & 2) { r.hi = negd(r.hi); r.lo = negd(r.lo); }
    }
    if (!cosine && (xb >> 63)) { r.hi = negd(r.hi); r.lo = negd(r.lo); }     // sin odd
    return r;
}
inline dd_t ref64_sin(ulong xb, int *kind) { *kind = K_VALUE; return sin_or_cos64(xb, 0); }
inline dd_t ref64_cos(ulong xb, int *kind) { *kind = K_VALUE; return sin_or_cos64(xb, 1); }

// ---- exp, exp2, exp10, expm1: f = e**u 2**n with n an integer and u a double-double,
// |u| <= ln 2 / 2 + 2**-40.  e**u by its Taylor series (EXP64_C[k] = 1/k! as double-doubles):
// Horner in double-double for k <= 11 (each step within 2**-103), the terms from k = 12
// on (below 2**-47 relative together) in double (their rounding below 2**-99),
// truncation after k = 22 below 2**-109: e**u within 2**-97.  The scaling by 2**n is exact
// where n >= -968 (the result and its low part normal); results that would be below
// 2**-968 are the host's (NaN), those provably below 2**-1075 K_UNDER (round to nearest
// gives a zero), those provably beyond the overflow threshold K_OVER.
inline dd_t dd_two_prod(double a, double b) {          // a b exactly (by fma)
    double p = a * b;
    dd_t r = { p, fma(a, b, -p) };
    return r;
}
// sum_{k >= first} u**(k - first) / k!  (first 0: e**u; first 1: (e**u - 1) / u)
inline dd_t exp_series(dd_t u, int first) { return dd_series(u, EXP64_C, 22, 11, first); }
// r 2**n in two exact steps (n <= 1024; the caller keeps n >= -968)
inline dd_t dd_scale(dd_t r, int n) {
    int h = n / 2;
    double a = pow2d(h), b = pow2d(n - h);
    dd_t s = { (r.hi * a) * b, (r.lo * a) * b };
    return s;
}
#define DD_NAN(kind) do { *kind = K_VALUE; dd_t n_ = { NAN, 0.0 }; return n_; } while (0)
#define DD_KIND(kind, k, v) do { *kind = (k); dd_t n_ = { (v), 0.0 }; return n_; } while (0)

// e**x - x = n ln 2 + t: n = rint(x / ln 2), t = x - n LN2_HI64 - n LN2_MID64 - n LN2_LO64
// (n LN2_HI64 and n LN2_MID64 exact: 42-bit constants, |n| < 2**11; the first difference
// an exact two-sum, the rest within 2**-104 of 0.35): t within 2**-104 (absolute)
inline dd_t ln2_reduce(double x, double n) {
    dd_t s = dd_sum(x, -n * LN2_HI64);
    dd_t m = { -n * LN2_MID64, -n * LN2_LO64 };
    return dd_add(s, m);
}
// e**x 2**-down, n = rint(x / ln 2) given (the scaling exact where n - down >= -968)
inline dd_t exp_n(double x, double n, int down) {
    return dd_scale(exp_series(ln2_reduce(x, n), 0), (int)n - down);
}
// e**x - 1 by the series of (e**x - 1) / x, |x| <= 0.35 (no cancellation)
inline dd_t expm1_small(double x) {
    dd_t xx = { x, 0.0 };
    return dd_mul(xx, exp_series(xx, 1));
}
inline dd_t ref64_exp(ulong xb, int *kind) {
    double x = as_double(xb);
    if (x > 709.79) DD_KIND(kind, K_OVER, 1.0);            // e**709.79 > 2**1024
    if (x < -745.14) DD_KIND(kind, K_UNDER, 0.0);          // e**-745.14 < 2**-1075
    double n = rintd(x * INV_LN2);
    if (n < -968.0) DD_NAN(kind);
    *kind = K_VALUE;
    return exp_n(x, n, 0);
}
// 2**x = 2**n e**(t ln 2), n = rint(x), t = x - n exact
inline dd_t ref64_exp2(ulong xb, int *kind) {
    double x = as_double(xb);
    if (x >= 1024.0) DD_KIND(kind, K_OVER, 1.0);
    if (x < -1075.0) DD_KIND(kind, K_UNDER, 0.0);
    double n = rintd(x);
    if (n < -968.0) DD_NAN(kind);
    *kind = K_VALUE;
    dd_t t = { x - n, 0.0 };
    dd_t ln2 = { LN2_DD_HI, LN2_DD_LO };
    return dd_scale(exp_series(dd_mul(t, ln2), 0), (int)n);
}
// 10**x = 2**(x log2 10): p = x LOG2_10 in double-double (within 2**-104 relative, so
// within 2**-93 absolute for |x| < 310), n = rint(p.hi), t = (p.hi - n) + p.lo
inline dd_t ref64_exp10(ulong xb, int *kind) {
    double x = as_double(xb);
    if (x > 308.26) DD_KIND(kind, K_OVER, 1.0);            // 10**308.26 > 2**1024
    if (x < -323.61) DD_KIND(kind, K_UNDER, 0.0);          // 10**-323.61 < 2**-1075
    dd_t xx = { x, 0.0 }, l = { LOG2_10_HI, LOG2_10_LO }, ln2 = { LN2_DD_HI, LN2_DD_LO };
    dd_t p = dd_mul(xx, l);
    double n = rintd(p.hi);
    if (n < -968.0) DD_NAN(kind);
    *kind = K_VALUE;
    dd_t t = dd_sum(p.hi - n, p.lo);
    return dd_scale(exp_series(dd_mul(t, ln2), 0), (int)n);
}
// e**x - 1: x (e**x - 1) / x by the series for |x| <= 0.35 (no cancellation); else e**x
// from ref64_exp's reduction minus 1 (|e**x + 1| <= 6 |e**x - 1| there: within 2**-100);
// -1 + e**x for x < -40 (e**x < 2**-57; below e**-700, 0 within 2**-1000)
inline dd_t ref64_expm1(ulong xb, int *kind) {
    double x = as_double(xb);
    if (x > 709.79) DD_KIND(kind, K_OVER, 1.0);
    *kind = K_VALUE;
    dd_t m1 = { -1.0, 0.0 };
    if (absd(x) <= 0.35) return expm1_small(x);
    double n = rintd(x * INV_LN2);
    if (x < -40.0) return dd_fast(-1.0, x > -700.0 ? exp_n(x, n, 0).hi : 0.0);
    return dd_add(exp_n(x, n, 0), m1);
}

// ---- log, log2, log10, log1p: x = m 2**e, m in [sqrt(1/2), sqrt(2)) (exact), ln m =
// 2 atanh(s), s = (m - 1) / (m + 1) (m - 1 exact, m + 1 an exact two-sum, the quotient
// refined by its remainder (exact by fma): s within 2**-104), |s| <= 0.1716; atanh(s) / s =
// sum s**(2k) / (2k + 1) (ATANH64_C): Horner in double-double for k <= 7, the terms from
// k = 8 on (below 2**-47 relative together) in double, truncation after k = 21 below
// 2**-104: ln m within 2**-99.  ln x = e (LN2_HI64 + LN2_MID64 + LN2_LO64) + ln m: where e
// != 0, |e ln 2| >= 2 |ln m|, so the sum is within 2**-97; where e = 0 it is ln m itself
// (0 exactly at x = 1: the host's, F9.log.2).
inline dd_t ln_m64(double m) {                   // m in [sqrt(1/2), sqrt(2))
    double num = m - 1.0;
    dd_t den = dd_sum(m, 1.0);
    double q = num / den.hi;
    double rem = fma(-q, den.hi, num) - q * den.lo;
    dd_t s = dd_fast(q, rem / den.hi);
    dd_t r = dd_mul(s, dd_series(dd_mul(s, s), ATANH64_C, 21, 7, 0));
    r.hi *= 2.0; r.lo *= 2.0;
    return r;
}
// a positive finite x: m and e (x = m 2**e, m in [sqrt(1/2), sqrt(2)))
inline double split64(ulong xb, int *e) {
    double m = unit64(xb & ABS64, e);                  // [1, 2), exact
    if (m > 0x1.6a09e667f3bcdp0) { m *= 0.5; *e += 1; }   // above sqrt(2): [0.707, 1)
    return m;
}
inline dd_t ln64(ulong xb) {
    int e;
    dd_t lm = ln_m64(split64(xb, &e));
    if (e == 0) return lm;
    double de = (double)e;
    dd_t el = dd_sum(de * LN2_HI64, de * LN2_MID64);   // both products exact
    el = dd_add(el, dd_two_prod(de, LN2_LO64));
    return dd_add(el, lm);
}
inline dd_t ref64_log(ulong xb, int *kind) {
    if (xb >> 63) DD_KIND(kind, K_NAN, NAN);             // F9.log.3: x < 0
    *kind = K_VALUE;
    return ln64(xb);
}
// log2 x = e + ln m / ln 2 (INV_LN2 as a double-double: within 2**-103); where e != 0,
// |e| >= 2 |ln m / ln 2|
inline dd_t ref64_log2(ulong xb, int *kind) {
    if (xb >> 63) DD_KIND(kind, K_NAN, NAN);             // F9.log2.3
    *kind = K_VALUE;
    int e;
    dd_t inv = { INV_LN2_HI, INV_LN2_LO }, de = { 0.0, 0.0 };
    dd_t l = dd_mul(ln_m64(split64(xb, &e)), inv);
    de.hi = (double)e;
    return e ? dd_add(de, l) : l;
}
inline dd_t ref64_log10(ulong xb, int *kind) {
    if (xb >> 63) DD_KIND(kind, K_NAN, NAN);             // F9.log10.3
    *kind = K_VALUE;
    dd_t inv = { INV_LN10_HI, INV_LN10_LO };
    return dd_mul(ln64(xb), inv);
}
// log1p(x) = x - x**2/2 + x**3/3 - x**4/4 for |x| < 2**-30 (x**2 exact by fma; the rest
// below 2**-119 relative); else 1 + x = hi + lo exactly (two-sum), ln hi + ln(1 + d),
// d = lo / hi as a double-double (|d| <= 2**-53: ln(1 + d) = d - d**2 / 2 within 2**-159),
// where |ln hi| is at most 1.5 times |log1p(x)| + 2**-53 (a cancellation by at most 3)
inline dd_t ref64_log1p(ulong xb, int *kind) {
    double x = as_double(xb);
    if (x < -1.0) DD_KIND(kind, K_NAN, NAN);             // F9.log1p.3
    if (x == -1.0) DD_NAN(kind);                          // F9.log1p.2 (-inf): the host's
    *kind = K_VALUE;
    if (absd(x) < 0x1p-30) {
        dd_t sq = dd_two_prod(x, x);
        dd_t t = { -0.5 * sq.hi, -0.5 * sq.lo + x * x * x * (1.0 / 3.0 - 0.25 * x) };
        dd_t xx = { x, 0.0 };
        return dd_add(xx, t);
    }
    dd_t hl = dd_sum(1.0, x);
    double d = hl.lo / hl.hi;
    dd_t dl = { d, fma(-d, hl.hi, hl.lo) / hl.hi - 0.5 * d * d };
    return dd_add(ln64(as_ulong(hl.hi)), dl);
}

// ---- Double-double roots and log1p of a double-double (the
// references below; dd_div: binary64_ops.cl).  Each is within the relative error written
// beside it where no partial result underflows: the callers leave results below 2**-968
// to the host.
// sqrt(a) for a double-double a > 0 (a.hi >= 2**-968): ref64_sqrt's root of a.hi (within
// 2**-98) times 1 + a.lo / (2 a.hi) (the next term, (a.lo / a.hi)**2 / 8, below 2**-109)
inline dd_t sqrt_dd(dd_t a) {
    int k;
    dd_t r = ref64_sqrt(as_ulong(a.hi), &k);
    return dd_add(r, dd_d(r.hi * (0.5 * (a.lo / a.hi))));
}
// ln(1 + u) for a double-double u >= 2**-31: 1 + u = h + l.hi + l.lo exactly (two two-sums),
// ln h by ln64 and ln(1 + d), d = (l.hi + l.lo) / h (|d| <= 2**-52; its quotient refined
// by the exact remainder), as d - d**2 / 2 (within 2**-155); ln h is at most 1.5 times
// ln(1 + u) + 2**-53 (log1p's argument in ref64_log1p): within 2**-96
inline dd_t log1p_dd(dd_t u) {
    dd_t hl = dd_sum(1.0, u.hi);
    dd_t l = dd_sum(hl.lo, u.lo);
    double d = l.hi / hl.hi;
    double dlo = (fma(-d, hl.hi, l.hi) + l.lo) / hl.hi;
    return dd_add(ln64(as_ulong(hl.hi)), dd_fast(d, dlo - 0.5 * d * d));
}
inline dd_t pio2_dd(void) { dd_t r = { PIO2_HI, PIO2_LO }; return r; }
inline dd_t pi_dd(void) { dd_t r = { 2.0 * PIO2_HI, 2.0 * PIO2_LO }; return r; }
#define DD_SIGN(xb, r) (((xb) >> 63) ? dd_neg(r) : (r))
// results below 2**-968 in magnitude: the host's (a double-double there loses bits)
#define TINY64 0x1p-968

// ---- tan: tan(z) = sin(z) / cos(z) of the reduced z of sin_or_cos64 (even quadrant), or
// -cos(z) / sin(z) (odd): each within 2**-95, z's error 2**-101 moved by 2 z / sin(2 z)
// <= pi/2, the quotient 2**-101: within 2**-93.  tan(x) = x + x**3/3 for |x| < 2**-30
// (2 x**5 / 15 below 2**-122 relative); odd in x.
inline dd_t ref64_tan(ulong xb, int *kind) {
    ulong ax = xb & ABS64;
    dd_t r;
    *kind = K_VALUE;
    if (ax < 0x3e10000000000000UL) {                  // |x| < 2**-30
        double a = as_double(ax);
        r = cubic_term(a, 3.0);
    } else if (ax < 0x3fe0000000000000UL) {           // |x| < 1/2
        dd_t z = dd_d(as_double(ax));
        r = dd_div(sin_dd(z), cos_dd(z));
    } else {
        int q;
        dd_t z = dd_mul(reduce64(ax, &q), pio2_dd());
        r = (q & 1) ? dd_neg(dd_div(cos_dd(z), sin_dd(z))) : dd_div(sin_dd(z), cos_dd(z));
    }
    return DD_SIGN(xb, r);
}

// ---- sinpi, cospi, tanpi: x = n + y, n = rint(x) (round64: integer arithmetic) and
// y = x - n exact, |y| <= 1/2; z = pi |y| (|y| <= 1/4) or pi (1/2 - |y|) (1/2 - |y| exact),
// a double times pi_dd() within 2**-103; sin_dd and cos_dd within 2**-95: within 2**-94
// (tanpi: the quotient, 2**-93).  The prescribed zeros and infinities at integers and
// halves (CL.sinpi.*_integer, CL.cospi.half_integer, CL.tanpi.*) are K_EXACT; |x| >= 2**52
// is an integer (y = 0); results below 2**-968 (|y| < 2**-970) are the host's.
inline double split_pi64(ulong xb, int *odd) {
    double x = as_double(xb), n = as_double(round64(xb, 1));
    double an = absd(n);
    *odd = an < 0x1p53 ? (int)((ulong)an & 1UL) : 0;
    return x - n;
}
inline dd_t sinpi_core(double ay) {                   // sin(pi ay), 0 < ay <= 1/2
    return ay <= 0.25 ? sin_dd(dd_mul(dd_d(ay), pi_dd()))
                      : cos_dd(dd_mul(dd_d(0.5 - ay), pi_dd()));
}
inline dd_t cospi_core(double ay) {                   // cos(pi ay), 0 <= ay < 1/2
    return ay <= 0.25 ? cos_dd(dd_mul(dd_d(ay), pi_dd()))
                      : sin_dd(dd_mul(dd_d(0.5 - ay), pi_dd()));
}
inline dd_t ref64_sinpi(ulong xb, int *kind) {
    int odd;
    double y = split_pi64(xb, &odd), ay = absd(y);
    if (ay == 0.0) DD_KIND(kind, K_EXACT, (xb >> 63) ? -0.0 : 0.0);  // CL.sinpi.*_integer
    if (ay < 0x1p-970) DD_NAN(kind);
    *kind = K_VALUE;
    dd_t s = sinpi_core(ay);
    return ((y < 0.0) != (odd != 0)) ? dd_neg(s) : s;
}
inline dd_t ref64_cospi(ulong xb, int *kind) {
    int odd;
    double y = split_pi64(xb, &odd), ay = absd(y);
    if (ay == 0.5) DD_KIND(kind, K_EXACT, 0.0);      // CL.cospi.half_integer: +0
    *kind = K_VALUE;
    dd_t c = cospi_core(ay);
    return odd ? dd_neg(c) : c;
}
inline dd_t ref64_tanpi(ulong xb, int *kind) {
    int odd;
    double y = split_pi64(xb, &odd), ay = absd(y);
    if (ay == 0.0)                                    // CL.tanpi.even_integer / odd_integer
        DD_KIND(kind, K_EXACT, ((int)(xb >> 63) != odd) ? -0.0 : 0.0);
    if (ay == 0.5)                                    // CL.tanpi.half_integer_even_n / odd_n
        DD_KIND(kind, K_EXACT, ((y > 0.0) != (odd != 0)) ? INFINITY : -INFINITY);
    if (ay < 0x1p-970) DD_NAN(kind);
    *kind = K_VALUE;
    dd_t t = dd_div(sinpi_core(ay), cospi_core(ay));
    return y < 0.0 ? dd_neg(t) : t;
}

// ---- rsqrt = 1 / sqrt(x) (ref64_sqrt's root, 2**-98, and dd_div: 2**-97); cbrt(x) =
// cbrt(m) 2**(e / 3), x = m 2**e, m in [1, 8) (exact scalings), cbrt(m) by Newton's
// iterations in double from a linear start (within 2**-50) and one correction in
// double-double: y + (m - y**3) / (3 y**2), the residual within 2**-104 m (y**2 exact by
// fma, y y**2's high product exact, m minus it exact by Sterbenz): within 2**-98; odd in x.
inline dd_t ref64_rsqrt(ulong xb, int *kind) {
    if (xb >> 63) DD_KIND(kind, K_NAN, NAN);         // F9.rsqrt.D4: x < 0
    dd_t r = ref64_sqrt(xb, kind);
    return dd_div(dd_d(1.0), r);
}
inline dd_t ref64_cbrt(ulong xb, int *kind) {
    *kind = K_VALUE;
    int ex;
    double m = unit64(xb & ABS64, &ex);               // |x| = m 2**ex, m in [1, 2)
    int rm = ((ex % 3) + 3) % 3;
    m *= pow2d(rm);                                   // [1, 8), ex a multiple of 3
    ex -= rm;
    double y = 0.75 + 0.18 * m;
    for (int i = 0; i < 7; i++) y = y - (y * y * y - m) / (3.0 * y * y);
    dd_t y2 = dd_two_prod(y, y);
    dd_t y3 = dd_two_prod(y, y2.hi);
    double res = ((m - y3.hi) - y3.lo) - y * y2.lo;
    dd_t r = dd_fast(y, res / (3.0 * y2.hi));
    r = dd_scale(r, ex / 3);
    return DD_SIGN(xb, r);
}

// ---- sinh, cosh, tanh from e**a, a = |x|: E = e**a as ref64_exp computes it (2**-97).
// sinh: a + a**3 / 6 below 2**-30; (m + m / (1 + m)) / 2 for a <= 0.35, m = e**a - 1 by
// expm1's series (every term positive); (E - 1 / E) / 2 up to 40 (the difference loses
// less than a factor 3 at a = 0.35: 2**-95); E / 2 beyond (e**-2a below 2**-115), with
// 2**(n - 1) so that no step overflows, K_OVER beyond 1025 ln 2 (710.4759).  cosh: (E +
// 1 / E) / 2, E / 2 beyond 40.  tanh: a - a**3 / 3 below 2**-30; sinh / cosh for a <= 0.35
// (both as above); (E2 - 1) / (E2 + 1), E2 = e**(2 a) (the subtraction: a factor 3 at most)
// up to 40; 1 beyond (1 - tanh(40) < 2**-114).  sinh and tanh odd, cosh even.
inline dd_t exp_pos(double a, int scale_down) {       // e**a 2**-scale_down, a <= 710.48
    return exp_n(a, rintd(a * INV_LN2), scale_down);
}
inline dd_t dd_half(dd_t r) { r.hi *= 0.5; r.lo *= 0.5; return r; }
inline dd_t sinh_small(double a) {                    // 2**-30 <= a <= 0.35
    dd_t m = expm1_small(a);
    return dd_half(dd_add(m, dd_div(m, dd_add(dd_d(1.0), m))));
}
inline dd_t cosh_pos(double a) {                      // a <= 40
    dd_t e = exp_pos(a, 0);
    return dd_half(dd_add(e, dd_div(dd_d(1.0), e)));
}
inline dd_t ref64_sinh(ulong xb, int *kind) {
    double a = absd(as_double(xb));
    dd_t r;
    if (a > 710.48) DD_KIND(kind, K_OVER, (xb >> 63) ? -1.0 : 1.0);
    *kind = K_VALUE;
    if (a < 0x1p-30) r = cubic_term(a, 6.0);
    else if (a <= 0.35) r = sinh_small(a);
    else if (a <= 40.0) {
        dd_t e = exp_pos(a, 0);
        r = dd_half(dd_add(e, dd_neg(dd_div(dd_d(1.0), e))));
    } else r = exp_pos(a, 1);
    return DD_SIGN(xb, r);
}
inline dd_t ref64_cosh(ulong xb, int *kind) {
    double a = absd(as_double(xb));
    if (a > 710.48) DD_KIND(kind, K_OVER, 1.0);
    *kind = K_VALUE;
    return a <= 40.0 ? cosh_pos(a) : exp_pos(a, 1);
}
inline dd_t ref64_tanh(ulong xb, int *kind) {
    double a = absd(as_double(xb));
    dd_t r;
    *kind = K_VALUE;
    if (a < 0x1p-30) r = cubic_term(a, -3.0);
    else if (a <= 0.35) r = dd_div(sinh_small(a), cosh_pos(a));
    else if (a <= 40.0) {
        dd_t e2 = exp_pos(a + a, 0), one = { 1.0, 0.0 };
        r = dd_div(dd_add(e2, dd_neg(one)), dd_add(e2, one));
    } else r = dd_d(1.0);
    return DD_SIGN(xb, r);
}

// ---- asinh, acosh, atanh by log1p_dd (its relative condition number u / ((1 + u)
// ln(1 + u)) is at most 1 for u > 0).  asinh(a) = log1p(a + a**2 / (1 + sqrt(1 + a**2))),
// a = |x| (every term positive; a**2 exact by fma) for 2**-30 <= a <= 2**28; a - a**3 / 6
// below (the next term below 2**-117 relative); ln a + ln 2 + 1 / (4 a**2) above (the next
// below 2**-117 relative).  acosh(x) = log1p(t + sqrt(t**2 + 2 t)), t = x - 1 exact, for
// 1 < x <= 2**28; ln x + ln 2 - 1 / (4 x**2) above; acosh(1) = +0 exactly (the host's,
// F9.acosh.1), a NaN for x < 1 (F9.acosh.2).  atanh(a) = a atanh(a)/a by the atanh series
// (ln_m64's, |a| <= 0.1716) and log1p(2 a / (1 - a)) / 2 (1 - a an exact two-sum) above;
// a + a**3 / 3 below 2**-30; a NaN for a > 1 (F9.atanh.3), the host's at 1 (F9.atanh.2).
// Each within 2**-95.
inline dd_t ln_big(double a, double corr) {           // ln a + ln 2 + corr, a > 2**28
    dd_t ln2 = { LN2_DD_HI, LN2_DD_LO };
    return dd_add(dd_add(ln64(as_ulong(a)), ln2), dd_d(corr));
}
inline dd_t ref64_asinh(ulong xb, int *kind) {
    double a = absd(as_double(xb));
    dd_t r;
    *kind = K_VALUE;
    if (a < 0x1p-30) r = cubic_term(a, -6.0);
    else if (a > 0x1p28) r = ln_big(a, 0.25 / a / a);
    else {
        dd_t a2 = dd_two_prod(a, a), one = { 1.0, 0.0 };
        dd_t den = dd_add(one, sqrt_dd(dd_add(one, a2)));
        r = log1p_dd(dd_add(dd_d(a), dd_div(a2, den)));
    }
    return DD_SIGN(xb, r);
}
inline dd_t ref64_acosh(ulong xb, int *kind) {
    double x = as_double(xb);
    if (!(x >= 1.0)) DD_KIND(kind, K_NAN, NAN);      // F9.acosh.2: x < 1
    *kind = K_VALUE;
    if (x == 1.0) return dd_d(0.0);                   // F9.acosh.1: +0, the host's
    if (x > 0x1p28) return ln_big(x, -0.25 / x / x);
    double t = x - 1.0;
    dd_t w = dd_add(dd_two_prod(t, t), dd_d(t + t));
    return log1p_dd(dd_add(dd_d(t), sqrt_dd(w)));
}
inline dd_t ref64_atanh(ulong xb, int *kind) {
    double a = absd(as_double(xb));
    dd_t r;
    if (a > 1.0) DD_KIND(kind, K_NAN, NAN);          // F9.atanh.3: |x| > 1
    if (a == 1.0) DD_NAN(kind);                       // F9.atanh.2 (inf): the host's
    *kind = K_VALUE;
    if (a < 0x1p-30) r = cubic_term(a, 3.0);
    else if (a <= 0.1716) {
        dd_t s = dd_d(a);
        r = dd_mul(s, dd_series(dd_mul(s, s), ATANH64_C, 21, 7, 0));
    } else {
        r = dd_half(log1p_dd(dd_div(dd_d(a + a), dd_sum(1.0, -a))));
    }
    return DD_SIGN(xb, r);
}

// ---- atan and the inverse sines and cosines.  atan_dd(v), v >= 0 a double-double:
// v - v**3 / 3 below 2**-30; beyond 1 by pi/2 - atan(1 / v); three halvings z -> z / (1 +
// sqrt(1 + z**2)) (relative condition number below 1; each within 2**-99) bring z <= 1 to
// z <= tan(pi/32) < 0.0985; then z times the series of atan(z)/z = atanh's at -z**2
// (ATANH64_C: truncation far below 2**-110 there) and 8: within 2**-96 (pi/2 minus a value
// at most pi/4: no cancellation).  asin(x) = atan(|x| / sqrt((1 - |x|)(1 + |x|))) (both
// factors exact two-sums), pi/2 at |x| = 1, |x| + |x|**3 / 6 below 2**-30; acos(x) =
// 2 atan(sqrt((1 - x) / (1 + x))), pi at -1, +0 at 1 (F9.acos.1: the host's); a NaN for
// |x| > 1 (F9.asin.2, F9.acos.2).  atanpi, asinpi, acospi: times 1/pi (INV_PI64 as a
// double-double, 2**-103); their results below 2**-968 are the host's.
inline dd_t atan_dd(dd_t v) {
    if (v.hi < 0x1p-30) {
        double a = v.hi;
        return dd_add(v, dd_d(a < 0x1p-300 ? 0.0 : -(a * a * a) / 3.0));
    }
    dd_t one = { 1.0, 0.0 };
    int inv = v.hi > 1.0;
    dd_t z = inv ? dd_div(one, v) : v;
    for (int i = 0; i < 3; i++)
        z = dd_div(z, dd_add(one, sqrt_dd(dd_add(one, dd_mul(z, z)))));
    dd_t r = dd_mul(z, dd_series(dd_neg(dd_mul(z, z)), ATANH64_C, 21, 7, 0));
    r.hi *= 8.0; r.lo *= 8.0;
    return inv ? dd_add(pio2_dd(), dd_neg(r)) : r;
}
inline dd_t asin_pos(double a, int *kind) {           // asin(a), a = |x| (kind: K_NAN)
    *kind = K_VALUE;
    if (a > 1.0) { *kind = K_NAN; return dd_d(NAN); }
    if (a == 1.0) return pio2_dd();
    if (a < 0x1p-30) return cubic_term(a, 6.0);
    dd_t c = dd_mul(dd_sum(1.0, -a), dd_sum(1.0, a));
    return atan_dd(dd_div(dd_d(a), sqrt_dd(c)));
}
inline dd_t acos_of(double x, int *kind) {            // acos(x) (kind: K_NAN)
    *kind = K_VALUE;
    if (absd(x) > 1.0) { *kind = K_NAN; return dd_d(NAN); }
    if (x == 1.0) return dd_d(0.0);                   // F9.acos.1, CL.acospi.one: the host's
    if (x == -1.0) return pi_dd();
    dd_t r = atan_dd(sqrt_dd(dd_div(dd_sum(1.0, -x), dd_sum(1.0, x))));
    r.hi *= 2.0; r.lo *= 2.0;
    return r;
}
inline dd_t over_pi(dd_t r, int *kind) {              // r / pi; below 2**-968: the host's
    if (*kind == K_VALUE && absd(r.hi) < 0x1p-966) DD_NAN(kind);
    dd_t inv = { INV_PI64_HI, INV_PI64_LO };
    return dd_mul(r, inv);
}
inline dd_t ref64_atan(ulong xb, int *kind) {
    *kind = K_VALUE;
    return DD_SIGN(xb, atan_dd(dd_d(absd(as_double(xb)))));
}
inline dd_t ref64_asin(ulong xb, int *kind) {
    return DD_SIGN(xb, asin_pos(absd(as_double(xb)), kind));
}
inline dd_t ref64_acos(ulong xb, int *kind) { return acos_of(as_double(xb), kind); }
inline dd_t ref64_atanpi(ulong xb, int *kind) {
    dd_t r = ref64_atan(xb, kind);
    return over_pi(r, kind);
}
inline dd_t ref64_asinpi(ulong xb, int *kind) {
    dd_t r = ref64_asin(xb, kind);
    return over_pi(r, kind);
}
inline dd_t ref64_acospi(ulong xb, int *kind) {
    dd_t r = ref64_acos(xb, kind);
    return over_pi(r, kind);
}

// ---- degrees, radians: x times 180/pi or pi/180 as a double-double (2**-103); results
// below 2**-968 the host's (an infinite product too, through within_bound64)
inline dd_t scaled64(ulong xb, dd_t c, int *kind) {
    dd_t r = dd_mul(dd_d(as_double(xb)), c);
    if (absd(r.hi) < TINY64) DD_NAN(kind);
    *kind = K_VALUE;
    return r;
}
inline dd_t ref64_degrees(ulong xb, int *kind) {
    dd_t c = { DEG64_HI, DEG64_LO };
    return scaled64(xb, c, kind);
}
inline dd_t ref64_radians(ulong xb, int *kind) {
    dd_t c = { RAD64_HI, RAD64_LO };
    return scaled64(xb, c, kind);
}

// ---- Two arguments (TWO_ARGS: both finite and nonzero, every other input the host's).
// x + z, x - z exactly (two-sum), x z exactly (two_prod, where x z >= 2**-968), x / z
// (dd_div, 2**-101), fdim: x - z where x > z, else +0 exactly; screened at their bound
// of 0.5 ULP (correctly rounded).  hypot(x, z): a = max(|x|, |z|), b = min: a + b (b / a) / 2
// where b < 2**-60 a (the next term below 2**-240 relative); else a 2**s sqrt((a 2**-s)**2 +
// (b 2**-s)**2) (scalings by 2**-s, s a's exponent, exact: b 2**-s >= 2**-61), the squares
// exact, their sum 2**-104, the root 2**-98.  atan2(y, x) (y the first argument):
// atan(|y| / |x|) where |y| <= |x|, else pi/2 - atan(|x| / |y|) (atan_dd, the quotient
// 2**-101 with a condition number at most 1), pi minus that where x < 0 (no
// cancellation: pi - a >= pi/2), y's sign; atan2pi: divided by pi.  Results below 2**-968
// are the host's.
inline dd_t ref64_add(ulong xb, ulong zb, int *kind) {
    *kind = K_VALUE;
    return dd_sum(as_double(xb), as_double(zb));
}
inline dd_t ref64_sub(ulong xb, ulong zb, int *kind) {
    *kind = K_VALUE;
    return dd_sum(as_double(xb), negd(as_double(zb)));
}
inline dd_t ref64_mul(ulong xb, ulong zb, int *kind) {
    dd_t r = dd_two_prod(as_double(xb), as_double(zb));
    if (absd(r.hi) < TINY64) DD_NAN(kind);
    *kind = K_VALUE;
    return r;
}
// x / z of finite nonzero x and z: the quotient of their significands (in [1, 2), exact
// scalings: no partial product of dd_div underflows) and *e, the power of two it is scaled by
inline dd_t quotient64(ulong xb, ulong zb, int *e) {
    int ex, ez;
    double mx = unit64(xb, &ex), mz = unit64(zb, &ez);
    *e = ex - ez;
    return dd_div(dd_d(mx), dd_d(mz));
}
inline dd_t ref64_divide(ulong xb, ulong zb, int *kind) {
    int e;
    dd_t q = quotient64(xb, zb, &e);
    if (e < -966 || e > 1024) DD_NAN(kind);          // below 2**-966, or beyond 2**1024
    dd_t r = dd_scale(q, e);
    if (absd(r.hi) < TINY64) DD_NAN(kind);
    *kind = K_VALUE;
    return r;
}
// recip (the operator 1/x in binary64): divide's quotient of 1 and x, correctly rounded
// from it; 1/x beyond 2**1024 (|x| below 2**-1024) the host's, as divide's
inline dd_t ref64_recip(ulong xb, int *kind) { return ref64_divide(0x3FF0000000000000UL, xb, kind); }
inline dd_t ref64_fdim(ulong xb, ulong zb, int *kind) {
    double x = as_double(xb), z = as_double(zb);
    if (!(x > z)) DD_KIND(kind, K_EXACT, 0.0);
    *kind = K_VALUE;
    return dd_sum(x, negd(z));
}
inline dd_t ref64_hypot(ulong xb, ulong zb, int *kind) {
    double x = absd(as_double(xb)), z = absd(as_double(zb));
    double a = x > z ? x : z, b = x > z ? z : x;
    if (a < TINY64) DD_NAN(kind);
    *kind = K_VALUE;
    if (b < a * 0x1p-60) return dd_fast(a, 0.5 * b * (b / a));
    int s = exponent_of(a);
    double d1 = pow2d(-(s / 2)), d2 = pow2d(-(s - s / 2));
    double sa = (a * d1) * d2, sb = (b * d1) * d2;
    dd_t q = dd_add(dd_two_prod(sa, sa), dd_two_prod(sb, sb));
    return dd_scale(sqrt_dd(q), s);
}
// the quotient of the smaller magnitude by the larger (<= 1): 0 where it is below 2**-966
inline dd_t ratio64(ulong sb, ulong bb) {
    int e;
    dd_t q = quotient64(sb & ABS64, bb & ABS64, &e);
    return e < -966 ? dd_d(0.0) : dd_scale(q, e);
}
inline dd_t atan2_dd(ulong yb, ulong xb) {
    double y = as_double(yb), x = as_double(xb);
    dd_t r = absd(y) <= absd(x) ? atan_dd(ratio64(yb, xb))
                                : dd_add(pio2_dd(), dd_neg(atan_dd(ratio64(xb, yb))));
    if (x < 0.0) r = dd_add(pi_dd(), dd_neg(r));
    return y < 0.0 ? dd_neg(r) : r;
}
inline dd_t ref64_atan2(ulong xb, ulong zb, int *kind) {
    dd_t r = atan2_dd(xb, zb);
    if (absd(r.hi) < TINY64) DD_NAN(kind);
    *kind = K_VALUE;
    return r;
}
inline dd_t ref64_atan2pi(ulong xb, ulong zb, int *kind) {
    dd_t r = atan2_dd(xb, zb);
    *kind = K_VALUE;
    return over_pi(r, kind);
}

// |x| mod |z| of finite nonzero binary64 magnitudes ax, az, exactly (a binary64 number:
// C99 7.12.10.1), by long division of the integer significands: x = mx 2**(ex - 1075),
// z = mz 2**(ez - 1075) (a subnormal's exponent field counted as 1); the remainder of
// mx 2**(ex - ez) by mz taken 11 bits at a time (r < 2**53, so r 2**11 < 2**64).  *q8:
// the integer quotient floor(|x| / |z|) modulo 8 (remainder's tie).  Where ex < ez,
// |x| < |z| (z is normal then, mz >= 2**52 > mx / 2): the quotient is 0 and the remainder
// |x|.  The result r 2**(ez - 1075), a multiple of 2**-1074 below |z|, is exact: scaled in
// two steps.
inline double mod_abs64(ulong ax, ulong az, int *q8) {
    int kx, kz;                                         // significand64: ex - 1075, ez - 1075
    ulong mx = significand64(ax, &kx), mz = significand64(az, &kz);
    *q8 = 0;
    if (kx < kz) return as_double(ax);
    ulong r = long_mod(mx, mz, kx - kz, 11, q8);
    int e = kz;                                         // exact: r < 2**53, r 2**e < |z|
    return e >= -1022 ? (double)r * pow2d(e) : ((double)r * pow2d(e + 52)) * 0x1p-52;
}
// fmod(x, z) = x - trunc(x / z) z: |x| mod |z| with x's sign (a zero of x's sign too);
// remainder(x, z) = x - n z, n the integer nearest x / z, ties to the even one (C99
// 7.12.10.2): the remainder r less |z| where 2 r > |z| or 2 r = |z| with an odd quotient
// (r - |z| exact), x's sign; both bit for bit (BIT_EXACT), as in binary32
inline dd_t ref64_fmod(ulong xb, ulong zb, int *kind) {
    int q8;
    double r = mod_abs64(xb & ABS64, zb & ABS64, &q8);
    EXACT(as_ulong(r) | (xb & SIGN64));
}
// (*n8: the magnitude of the rounded quotient n modulo 8, remquo's quo)
inline ulong remainder64_n8(ulong xb, ulong zb, int *n8) {
    double r = mod_abs64(xb & ABS64, zb & ABS64, n8);
    double a = as_double(zb & ABS64);
    if (2.0 * r > a || (2.0 * r == a && (*n8 & 1))) { r -= a; *n8 = (*n8 + 1) & 7; }
    return as_ulong(r) ^ (xb & SIGN64);
}
inline dd_t ref64_remainder(ulong xb, ulong zb, int *kind) {
    int n8;
    EXACT(remainder64_n8(xb, zb, &n8));
}
// remquo(x, z): remainder's result; in quo (an int) a value of the sign of x / z whose
// magnitude is congruent modulo 8 to that of the rounded quotient n (C99 7.12.10.3; 0
// passes where n is 0 modulo 8), as the checker judges (oracle.entries.Congruent): both
// bit for bit, as in binary32
inline dd_t ref64_remquo(ulong xb, ulong zb, int *kind) { return ref64_remainder(xb, zb, kind); }
inline int out2_remquo64(ulong xb, ulong zb, ulong y2b) {
    int n8;
    remainder64_n8(xb, zb, &n8);
    int g = (int)y2b;
    if (g == 0) return n8 == 0;
    if ((g < 0) != (int)((xb ^ zb) >> 63)) return 0;
    long ag = g < 0 ? -(long)g : (long)g;
    return (int)(ag & 7L) == n8;
}
// ldexp(x, k) = x 2**k (Z_INT: k an int, k = 0 the host's; correctly rounded, screened at
// 0.5 ULP): x = m 2**e (unit64, exact), E = e + k in a long (no overflow of k's range).
// A normal result (E >= -1022) is m 2**E exactly (K_VALUE, no error); E >= 1024 is beyond
// the overflow threshold (K_OVER); E <= -1076, below 2**-1075, rounds to the zero of x's
// sign, bit for bit (K_EXACT: the other zero is the host's, whose checker notes it,
// ieee.zero_sign, as for every correctly rounded result); a subnormal result, which
// rounds, the host's.
inline dd_t ref64_ldexp(ulong xb, ulong zb, int *kind) {
    int e;
    double m = unit64(xb, &e);
    long E = (long)e + (long)(int)zb;
    if (E >= 1024L) DD_KIND(kind, K_OVER, m);
    if (E <= -1076L) EXACT(xb & SIGN64);
    if (E < -1022L) DD_NAN(kind);
    *kind = K_VALUE;
    return dd_d(m * pow2d((int)E));
}

// ---- pow, powr, pown, rootn (16 ULP in binary64): |x|**y = e**t, t = y ln |x| (or
// ln |x| / n) as a double-double.  ln |x| within 2**-97 (ln64), its product with y within
// 2**-103 more (dd_mul; rootn's quotient by dd_div, 2**-101): t within 2**-96.8 |t|.  Where
// |t| <= 746 (else the result is provably beyond the overflow threshold or below 2**-1075:
// K_OVER, K_UNDER), that is 2**-87.3 absolute, and e**t = 2**n e**u, n = rint(t.hi / ln 2),
// u = (t.hi - n ln 2) + t.lo (ln2_reduce: 2**-104), e**u by exp's series (2**-97): the
// result within 2**-87 of f.  ``rel64``: these four at REL64_WIDE = 2**-84, the screen's
// margin from it.  A result below 2**-968 is the host's, as for exp.
inline dd_t exp_dd64(dd_t t, double sign, int *kind) {
    if (t.hi > 710.0) DD_KIND(kind, K_OVER, sign);         // e**710 > 2**1024 (1 + 2**-20)
    if (t.hi < -746.0) DD_KIND(kind, K_UNDER, 0.0);        // e**-746 < 2**-1075
    double n = rintd(t.hi * INV_LN2);
    if (n < -968.0) DD_NAN(kind);
    *kind = K_VALUE;
    dd_t u = dd_add(ln2_reduce(t.hi, n), dd_d(t.lo));
    dd_t r = dd_scale(exp_series(u, 0), (int)n);
    return sign < 0.0 ? dd_neg(r) : r;
}
// |x|**y (sign: the result's, +-1); a product y ln |x| far beyond the thresholds decided
// first (it may be infinite: its double-double would be a NaN)
inline dd_t pow_abs64(ulong xb, double y, double sign, int *kind) {
    dd_t L = ln64(xb & ABS64);
    double p = y * L.hi;                                   // within 2**-52 of t
    if (p > 720.0) DD_KIND(kind, K_OVER, sign);
    if (p < -760.0) DD_KIND(kind, K_UNDER, 0.0);
    return exp_dd64(dd_mul(dd_d(y), L), sign, kind);
}
// pow(x, y): x = 1 gives 1 exactly (F9.pow.6a); x < 0: a NaN where y is not an integer
// (F9.pow.8), else |x|**y with the sign of x where y is odd (a binary64 y of magnitude
// 2**53 or more is even)
inline dd_t ref64_pow(ulong xb, ulong zb, int *kind) {
    if (xb == 0x3ff0000000000000UL) EXACT(xb);
    double y = as_double(zb);
    double sign = 1.0;
    if ((xb >> 63) && absd(y) < 0x1p53) {
        if (rintd(y) != y) DD_KIND(kind, K_NAN, NAN);
        if (rintd(y * 0.5) != y * 0.5) sign = -1.0;
    }
    return pow_abs64(xb, y, sign, kind);
}
// powr(x, y) = e**(y ln x) for x >= 0 only: a NaN for x < 0 (CL.powr.negative_base), 1
// exactly at x = 1 (CL.powr.one_base_finite_exponent)
inline dd_t ref64_powr(ulong xb, ulong zb, int *kind) {
    if (xb >> 63) DD_KIND(kind, K_NAN, NAN);
    if (xb == 0x3ff0000000000000UL) EXACT(xb);
    return pow_abs64(xb, as_double(zb), 1.0, kind);
}
// pown(x, n) = x**n (n an int, Z_INT: n = 0 the host's; n exact in binary64), x's sign
// where n is odd
inline dd_t ref64_pown(ulong xb, ulong zb, int *kind) {
    int n = (int)zb;
    return pow_abs64(xb, (double)n, ((xb >> 63) && (n & 1)) ? -1.0 : 1.0, kind);
}
// rootn(x, n) = x**(1/n) (n an int, Z_INT): a NaN for x < 0 and n even
// (CL.rootn.negative_base_even); else e**(ln |x| / n) with x's sign (n odd there)
inline dd_t ref64_rootn(ulong xb, ulong zb, int *kind) {
    int n = (int)zb;
    if ((xb >> 63) && !(n & 1)) DD_KIND(kind, K_NAN, NAN);
    dd_t t = dd_div(ln64(xb & ABS64), dd_d((double)n));
    return exp_dd64(t, (xb >> 63) ? -1.0 : 1.0, kind);
}

// ---- erf, erfc (16 ULP in binary64), a = |x|.  Their references are within
// REL64_WIDE = 2**-84 (``rel64``): the budgets below.
// Kummer's series erf(a) = (2 a / sqrt(pi)) e**-a**2 sum_n (2 a**2)**n / (2n + 1)!!, every
// term positive (no cancellation): s_n = s_(n-1) q / (2n + 1), q = 2 a**2 exact (two_prod),
// each step 2**-100 (dd_mul, dd_div), so s_n within n 2**-100; the terms that matter have
// n <= 90 for a < 6 and the sum stops once a term is below 2**-106 of it (the rest, a
// geometric tail of ratio below 1/2 from there, below 2**-105): the sum within 2**-93;
// e**-a**2 by exp_dd64 (2**-96), the products 2**-103 each: within 2**-92 for
// 2**-960 <= a < 6.  Below 2**-960, (2 / sqrt(pi)) a exactly enough (a**2 < 2**-1900); a
// result below 2**-968 is the host's.
inline dd_t erf_kummer(double a, int *kind) {
    dd_t c = { TWO_OVER_SQRTPI_HI, TWO_OVER_SQRTPI_LO };
    if (a < 0x1p-960) {
        if (a < 0x1p-966) DD_NAN(kind);
        *kind = K_VALUE;
        return dd_mul(c, dd_d(a));
    }
    dd_t p = dd_two_prod(a, a);
    dd_t q = { 2.0 * p.hi, 2.0 * p.lo };
    dd_t term = dd_d(1.0), sum = dd_d(1.0);
    for (int n = 1; n < 400; n++) {
        term = dd_div(dd_mul(term, q), dd_d((double)(2 * n + 1)));
        sum = dd_add(sum, term);
        if (term.hi < sum.hi * 0x1p-106) break;
    }
    dd_t e = exp_dd64(dd_neg(p), 1.0, kind);          // e**-a**2 >= e**-36: K_VALUE
    return dd_mul(dd_mul(c, dd_d(a)), dd_mul(e, sum));
}
// erfc(a) for 2 <= a: (e**-a**2 / sqrt(pi)) / G, G = a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))
// (Laplace's continued fraction, a_j = j/2, b_j = a) by Lentz's method in double-double:
// every quantity positive, each step within 2**-99 (two dd_div, three dd_mul, two dd_add),
// at most 300 steps (a = 2 needs some 150): 2**-90.8; the successive convergents of this
// positive fraction bracket its value, so stopping at |delta - 1| < 2**-100 leaves at most
// 2**-100: G within 2**-90.7, the result within 2**-90 with e**-a**2 (2**-96) and 1/sqrt(pi)
// (2**-104).  *kind K_NAN where it did not converge (never seen: the host's then, below).
inline dd_t erfc_cf(double a, int *kind) {
    dd_t x = dd_d(a), f = dd_d(a), C = dd_d(a), D = dd_d(0.0);
    int done = 0;
    for (int j = 1; j <= 300; j++) {
        dd_t aj = dd_d(0.5 * (double)j);
        D = dd_div(dd_d(1.0), dd_add(x, dd_mul(aj, D)));
        C = dd_add(x, dd_div(aj, C));
        dd_t delta = dd_mul(C, D);
        f = dd_mul(f, delta);
        if (absd((delta.hi - 1.0) + delta.lo) < 0x1p-100) { done = 1; break; }
    }
    dd_t p = dd_two_prod(a, a);
    dd_t e = exp_dd64(dd_neg(p), 1.0, kind);
    if (!done) DD_NAN(kind);
    if (*kind != K_VALUE) return e;
    dd_t s = { INV_SQRTPI_HI, INV_SQRTPI_LO };
    return dd_div(dd_mul(e, s), f);
}
// erf(x): Kummer's series for a < 6; beyond, 1 - erfc(a) (erfc(6) < 2**-55: erfc's own
// error is 2**-90 of that), 1 beyond 25.5 (erfc(25.5) < e**-650 < 2**-930); x's sign.
inline dd_t ref64_erf(ulong xb, int *kind) {
    double a = as_double(xb & ABS64);
    dd_t r;
    if (a < 6.0) {
        r = erf_kummer(a, kind);
    } else if (a > 25.5) {
        *kind = K_VALUE;
        r = dd_d(1.0);
    } else {
        dd_t c = erfc_cf(a, kind);
        if (*kind != K_VALUE || !(c.hi == c.hi)) DD_NAN(kind);
        *kind = K_VALUE;
        r = dd_add(dd_d(1.0), dd_neg(c));
    }
    return (xb >> 63) ? dd_neg(r) : r;
}
// erfc(x): 1 + erf(a) for x < 0 (no cancellation; 2 - erfc(a) beyond 6, 2 beyond 25.5);
// 1 - erf(x) for 0 < x < 2 (erfc(2) > 2**-7.8: a cancellation by at most 2**7.8, 2**-84.2
// in all); the continued fraction from 2; below 2**-1075 (K_UNDER) from 27.25 (e**-742.6 /
// (27.25 sqrt(pi)) < e**-746); results below 2**-968 the host's (as exp's); below
// a = 2**-100, 1 -+ (2 / sqrt(pi)) a (the next term a**3 / 3 below 2**-300).
inline dd_t ref64_erfc(ulong xb, int *kind) {
    double a = as_double(xb & ABS64);
    if (a < 0x1p-100) {                                   // 1 -+ (2 / sqrt(pi)) a, 2**-200
        *kind = K_VALUE;
        double t = TWO_OVER_SQRTPI_HI * a;
        return dd_fast(1.0, (xb >> 63) ? t : negd(t));
    }
    if (xb >> 63) {
        *kind = K_VALUE;
        if (a > 25.5) return dd_d(2.0);
        if (a >= 6.0) {
            dd_t c = erfc_cf(a, kind);
            if (*kind != K_VALUE || !(c.hi == c.hi)) DD_NAN(kind);
            return dd_add(dd_d(2.0), dd_neg(c));
        }
        dd_t e = erf_kummer(a, kind);
        *kind = K_VALUE;
        return dd_add(dd_d(1.0), e);
    }
    if (a < 2.0) {
        dd_t e = erf_kummer(a, kind);
        *kind = K_VALUE;
        return dd_add(dd_d(1.0), dd_neg(e));
    }
    if (a > 27.25) DD_KIND(kind, K_UNDER, 0.0);
    dd_t r = erfc_cf(a, kind);
    if (*kind == K_VALUE && !(absd(r.hi) >= TINY64)) DD_NAN(kind);
    return r;
}

// ---- tgamma (16 ULP in binary64), within REL64_WIDE.
// ln |a| of a double-double a, |a.lo| <= ulp(a.hi)/2: ln64(a.hi) + a.lo / a.hi (the next
// term of ln(1 + d), d**2/2, below 2**-107)
inline dd_t ln_dd64(dd_t a) {
    return dd_add(ln64(as_ulong(a.hi) & ABS64), dd_d(a.lo / a.hi));
}
// e ln 2 for an integer |e| < 2**11 (ln64's three parts: the first two products exact)
inline dd_t e_ln2(double e) {
    return dd_add(dd_sum(e * LN2_HI64, e * LN2_MID64), dd_two_prod(e, LN2_LO64));
}
// ln Gamma(y) for y >= 20 (a double-double): Stirling's series (y - 1/2) ln y - y +
// ln(2 pi)/2 + sum_k B_2k / (2k (2k - 1) y**(2k - 1)), k = 1 .. 15 (STIRLING64_C; the next
// term below 2**-106 at y = 20), the first four terms in double-double (the rest below
// 2**-49 together, their rounding below 2**-102); ln y within 2**-97, so the sum within
// 2**-97 (|y ln y|, at most 710) + 2**-100 absolute.
inline dd_t lgamma_stirling64(dd_t y) {
    dd_t t = dd_add(dd_mul(dd_add(y, dd_d(-0.5)), ln_dd64(y)), dd_neg(y));
    dd_t h = { HALF_LN_2PI64_HI, HALF_LN_2PI64_LO };
    dd_t iy = dd_div(dd_d(1.0), y);
    dd_t sp = dd_mul(iy, dd_series(dd_mul(iy, iy), STIRLING64_C, 14, 3, 0));
    return dd_add(dd_add(t, h), sp);
}
// tgamma(x) = +-e**(ln Gamma(x + n) - ln |P|), P = x (x + 1) ... (x + n - 1), n the
// integers that bring y = x + n to 20 or beyond (none from 20 on): each factor x + k an
// exact two-sum, P kept as a double-double in [1, 2) times 2**E (no overflow for the 210
// factors below -190), its sign apart; ln |P| = ln P's significand + E ln 2.  The products
// within 210 2**-103, the logarithms 2**-97 relative: the exponent within 2**-86.4 absolute
// (|ln Gamma(y)| + |ln P| below 1,600), so the result within 2**-86 by exp_dd64.  A NaN at
// a negative integer (F9.tgamma.2; |x| >= 2**52 is one); below -190 |Gamma| < 2**-1116
// (K_UNDER: the binary64 numbers nearest a negative integer there are 2**-45 from it);
// beyond 171.7 above the overflow threshold (K_OVER); a result below 2**-968 the host's.
inline dd_t ref64_tgamma(ulong xb, int *kind) {
    double x = as_double(xb);
    if (x < 0.0) {
        if (x <= -0x1p52 || rintd(x) == x) DD_KIND(kind, K_NAN, NAN);
        if (x < -190.0) DD_KIND(kind, K_UNDER, 0.0);
    }
    if (x > 171.7) DD_KIND(kind, K_OVER, 1.0);
    dd_t y = dd_d(x), lnP = dd_d(0.0);
    double sign = 1.0;
    if (x < 20.0) {
        double n = rintd(20.0 - x);
        if (x + n < 20.0) n += 1.0;
        dd_t P = dd_d(1.0);
        double E = 0.0;
        for (double k = 0.0; k < n; k += 1.0) {
            dd_t f = dd_sum(x, k);
            if (f.hi < 0.0) { sign = -sign; f = dd_neg(f); }
            P = dd_mul(P, f);
            int e = exponent_of(P.hi);
            double sc = pow2d(-e);
            P.hi *= sc; P.lo *= sc;
            E += (double)e;
        }
        lnP = dd_add(ln_dd64(P), e_ln2(E));
        y = dd_sum(x, n);
    }
    dd_t r = exp_dd64(dd_add(lgamma_stirling64(y), dd_neg(lnP)), sign, kind);
    if (*kind == K_VALUE && !(absd(r.hi) >= TINY64)) DD_NAN(kind);
    return r;
}

// ---- Three arguments (THREE_ARGS, with TWO_ARGS: every argument finite and nonzero).
// fma(x, z, w): x z = p.hi + p.lo exactly (two_prod, where |x z| >= 2**-968), p.hi + w =
// s.hi + s.lo exactly, s.lo + p.lo = t.hi + t.lo exactly: f = s.hi + t.hi + t.lo, summed as
// a double-double (dd_add: 2**-104 of |s.hi| + |t|, and |t| <= 2**-52 |s.hi| unless
// p.hi + w cancels by more than a factor 2, where Sterbenz makes s.lo = 0 and t = p.lo
// exactly): within 2**-103; screened at 0.5 ULP (correctly rounded).  mad: the same
// reference, and its unfused value fl(fl(x z) + w) passes too (``unfused_mad64``).
// clamp(x, minval, maxval) = fmin(fmax(x, minval), maxval) by the patterns' order, bit for
// bit; undefined where minval > maxval (K_ANY: OpenCL C 3.0 §6.15.4).
inline dd_t ref64_fma(ulong xb, ulong zb, ulong wb, int *kind) {
    double w = as_double(wb);
    dd_t p = dd_two_prod(as_double(xb), as_double(zb));
    // a product below 2**-968 (p.lo rounded, by 2**-1075 at most) only beside |w| >=
    // 2**-900: then |f| > 2**-901 and the error is below 2**-174 of it
    if (absd(p.hi) < TINY64 && absd(w) < 0x1p-900) DD_NAN(kind);
    dd_t s = dd_sum(p.hi, w);
    dd_t r = dd_add(dd_d(s.hi), dd_sum(s.lo, p.lo));
    if (absd(r.hi) < TINY64) DD_NAN(kind);           // a zero or tiny f: the host's
    *kind = K_VALUE;
    return r;
}
inline dd_t ref64_clamp(ulong xb, ulong lob, ulong hib, int *kind) {
    if (order64(hib) < order64(lob)) DD_KIND(kind, K_ANY, 0.0);
    ulong m = order64(xb) < order64(lob) ? lob : xb;       // equal: the same pattern
    EXACT(order64(hib) < order64(m) ? hib : m);
}
// Implementation-defined accuracy (RULES_ONLY; ref_unjudged3 and ref_lgamma in binary32):
// mix and smoothstep pass any result of finite nonzero arguments; lgamma is +0 at 1 and 2,
// +inf at a negative integer (every binary64 of magnitude 2**52 or more is an integer),
// any result elsewhere
inline dd_t ref64_unjudged3(ulong xb, ulong zb, ulong wb, int *kind) { DD_KIND(kind, K_ANY, 0.0); }
inline dd_t ref64_nan(ulong xb, int *kind) { DD_KIND(kind, K_NAN, NAN); }    // ref_nan's
// lgamma_r's signp: 0 at a pole (a negative integer), any int elsewhere (out2_lgamma_r's)
inline int out2_lgamma_r64(ulong xb, ulong zb, ulong y2b) {
    return !((xb >> 63) && trunc64(xb) == xb) || (uint)y2b == 0u;
}
inline dd_t ref64_lgamma(ulong xb, int *kind) {
    if (xb == 0x3ff0000000000000UL || xb == 0x4000000000000000UL) DD_KIND(kind, K_EXACT, 0.0);
    if ((xb >> 63) && trunc64(xb) == xb) DD_KIND(kind, K_EXACT, INFINITY);
    DD_KIND(kind, K_ANY, 0.0);
}
// mad's unfused value: x z rounded once, then its sum with w rounded once (the device's own
// binary64 multiply and add, FP_CONTRACT OFF); NaN (no second choice) where the product is
// not a normal number or is infinite
inline dd_t unfused_mad64(ulong xb, ulong zb, ulong wb) {
    double p = as_double(xb) * as_double(zb);
    double ap = absd(p);
    if (!(ap >= 0x1p-1022) || !(ap <= 0x1.fffffffffffffp1023)) return dd_d(NAN);
    return dd_d(p + as_double(wb));
}

// ---- The screen
// (REF_OF, SECOND, THIRD, OUT2_OF: screen_common.cl)

// Whether the finite nonzero binary64 result y is provably within the bound of f, given
// its reference r (|r.hi + r.lo - f| <= REL64 |f|; err: the error in ULPs, d / u):
// case (1) of docs/device_screen.md for binary64.  u = 2**(ep - 52) <= ulp(f), f's
// binade read off the double-double (binade64); where that binade is uncertain err may be
// twice the error, and y passes only within a tie (TIE), else the host measures it
// ("Exact maxima", docs/device_screen.md).  d = |(y - r.hi) - r.lo| (the first difference
// exact where y is within a factor 2 of r.hi, the second rounded once) is scaled to ULPs
// by powers of two in two exact steps (no subnormal rounding).  A zero, infinite or NaN
// y, one of the other sign than r, or |r| near the overflow threshold, is the host's; a
// NaN r fails every test.
inline int within_bound64(dd_t r, ulong yb, float *err) {
    if ((yb & ABS64) == 0UL || (yb & INF64) == INF64) return 0;
    if ((yb >> 63) != (as_ulong(r.hi) >> 63)) return 0;
    double ar = absd(r.hi);
    if (!(ar * R_LO > 0.0) || !(ar * R_HI < 0x1.fffffffffffffp1023)) return 0;
    int uncertain;
    int ep = binade64(r, &uncertain);
    double d = absd((as_double(yb) - r.hi) - r.lo);
    double e = (d * pow2d(-(ep >> 1))) * pow2d(52 - ep + (ep >> 1));     // d / (2**ep 2**-52)
    if (!(e < C_PASS64)) return 0;
    *err = (float)e;
    return !uncertain || *err <= TIE;
}

// The screen of one input of finite nonzero arguments: 1 where y is proven within the
// bound (err: its error in ULPs) or is f's exact result bit for bit, or a NaN is
// prescribed and y is a quiet NaN, or f is provably beyond the overflow threshold and y
// the infinity of its sign, or provably below 2**-1075 and y a zero (err 0: either zero
// is within the bound, and the checker notes neither); 0 where the host must judge.
inline int judge64(dd_t r, int kind, ulong xb, ulong zb, ulong wb, ulong yb, float *err) {
    *err = 0.0f;
    if (kind == K_ANY) return 1;
#ifdef RESULT_INT
    if (kind == K_EXACT) return (uint)yb == (uint)(int)r.hi;    // y: an int (YPAT uint)
#else
    if (kind == K_EXACT) return yb == as_ulong(r.hi);
#endif
    if (kind == K_NAN) return is_quiet_nan(yb);
    if (kind == K_OVER) return yb == ((as_ulong(r.hi) >> 63) ? (SIGN64 | INF64) : INF64);
    if (kind == K_UNDER) return (yb & ABS64) == 0UL;
    if (kind != K_VALUE) return 0;
#ifdef MAD
    return within_bound64(r, yb, err) || within_bound64(unfused_mad64(xb, zb, wb), yb, err);
#else
    return within_bound64(r, yb, err);
#endif
}
inline int screen_one64(ulong xb, ulong zb, ulong wb, ulong yb, float *err) {
    int kind;
    dd_t r = REF_OF(xb, zb, wb, &kind);
    return judge64(r, kind, xb, zb, wb, yb, err);
}
#ifdef REF2
// both rounded outputs (sincos) within the bound, the larger error binned
inline int screen_two64(ulong xb, ulong yb, ulong y2b, float *err) {
    int k2;
    float e2;
    dd_t r2 = REF2(xb, &k2);
    if (screen_one64(xb, 0UL, 0UL, yb, err) != 1
        || judge64(r2, k2, xb, 0UL, 0UL, y2b, &e2) != 1) return 0;
    *err = fmax(*err, e2);
    return 1;
}
#endif

// (is_special, not_finite_nonzero, prescribed, screen_special: screen_common.cl)

// The screen of any input; *ruled: 1 where no error is binned (a rule decided it, or an
// exact built-in).  An int argument, result or second output (Z_INT, RESULT_INT, OUT2 of
// frexp and remquo) comes zero-extended from its 32-bit column (ZPAT, YPAT, Y2PAT uint).
inline int screen_any64(ulong xb, ulong zb, ulong wb, ulong yb, ulong y2b, float *err,
                        int *ruled) {
#ifdef TWO_ARGS
#ifdef Z_INT
    *ruled = not_finite_nonzero(xb) || (uint)zb == 0u;    // an int k: k = 0 the host's
#else
    *ruled = not_finite_nonzero(xb) || not_finite_nonzero(zb);
#endif
#ifdef THREE_ARGS
    *ruled = *ruled || not_finite_nonzero(wb);
#endif
    if (*ruled) { *err = 0.0f; return 0; }
#else
    *ruled = is_special(xb);
#if defined(OUT2) || defined(REF2)
    if (*ruled) { *err = 0.0f; return 0; }        // two outputs: the host's (special_answers)
#endif
    if (*ruled) { *err = 0.0f; return screen_special(xb, yb); }
#endif
#if defined(BIT_EXACT) || defined(MAD)
    *ruled = 1;                                    // no error statistics (as in binary32)
#endif
#if defined(OUT2)
    int v = screen_one64(xb, zb, wb, yb, err);
    return v && OUT2(xb, zb, y2b);
#elif defined(REF2)
    return screen_two64(xb, yb, y2b, err);
#else
    return screen_one64(xb, zb, wb, yb, err);
#endif
}

// The drawn unit's screen and the pairs' (screen_drawn.cl, screen_pairs.cl after this file): binary64's
// verdict and the value of its x
#define SCREEN_ANY screen_any64
#define X_VALUE(x) as_double(x)

// The references themselves, for the tests: r[2 i], r[2 i + 1] (hi, lo) and kind[i] of REF
// at binary64 xbits[i] (and zbits[i], TWO_ARGS; wbits[i], THREE_ARGS).
__kernel void fuzzfarm_reference(__global const ulong *xbits, __global double *r,
                                 __global int *kind, __global const ZPAT *zbits,
                                 __global const ulong *wbits)
{
    uint i = get_global_id(0);
    int k;
    dd_t v = REF_OF(xbits[i], SECOND(zbits, i), THIRD(wbits, i), &k);
    r[2 * i] = v.hi;
    r[2 * i + 1] = v.lo;
    kind[i] = k;
}
