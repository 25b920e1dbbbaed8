// fuzzfarm's device screen (fuzzfarm/oracle/device_screen.py; the argument in
// docs/device_screen.md).  Binary64 references of binary32 built-ins made of IEEE basic
// operations only (+ - * / fma, conversions) and integer arithmetic: no built-in math
// function of the device is called, so the built-ins under test are not their own judge.
// The host prepends the constants (TWO_OVER_PI, the polynomial coefficients) and the
// defines REF (the reference function, of a binary32 pattern), C_PASS, the answers at
// zeros, infinities and NaNs (ANS_*, NAN_ANY_QUIET), NBANDS, NROWS, NBINS, NEAR and the
// NEAR_ZERO_KIND, NEAR_POLE_KIND of the built-in (oracle.histogram.NEAR_POINTS), and
// screen_common.cl (the kinds K_*, exact helpers, double-double arithmetic, the gathering).

// A binary32 pattern's value in binary64, exactly, subnormals included: a subnormal is
// converted from its integer significand (a device that flushes binary32 subnormals in
// its float-to-double conversion cannot turn one into a zero here)
inline double to_double(uint b) {
    if ((b & 0x7f800000u) != 0u) return (double)as_float(b);
    double m = (double)(b & 0x7fffffu) * 0x1p-149;            // exact: 23 bits times 2**-149
    return (b >> 31) ? -m : m;
}

// sin(z) and cos(z) for |z| <= pi/4: Taylor polynomials to z**17 and z**16 (truncation
// below 2**-58 relative), Horner with fma
inline double sin_poly(double z) {
    double z2 = z * z;
    double p = SIN_C17;
    p = fma(p, z2, SIN_C15); p = fma(p, z2, SIN_C13); p = fma(p, z2, SIN_C11);
    p = fma(p, z2, SIN_C9);  p = fma(p, z2, SIN_C7);  p = fma(p, z2, SIN_C5);
    p = fma(p, z2, SIN_C3);
    return fma(z * z2, p, z);
}
inline double cos_poly(double z) {
    double z2 = z * z;
    double p = COS_C16;
    p = fma(p, z2, COS_C14); p = fma(p, z2, COS_C12); p = fma(p, z2, COS_C10);
    p = fma(p, z2, COS_C8);  p = fma(p, z2, COS_C6);  p = fma(p, z2, COS_C4);
    p = fma(p, z2, COS_C2);
    return fma(z2, p, 1.0);
}

// Reduction of |x| (binary32 bits ax, biased exponent >= 126) modulo pi/2 with exact
// integer arithmetic (Payne and Hanek): x * 2/pi = 4 j + q + t, t in [-1/2, 1/2);
// returns z = t * pi/2 (relative error below 2**-51) and q in 0..3; NaN if t is 0.
inline double reduce_pio2(uint ax, int *q) {
    int k = (int)(ax >> 23) - 150;                 // x = m 2**k, m of 24 bits
    ulong m = (ulong)((ax & 0x7fffffu) | 0x800000u);
    int i0 = k <= 33 ? 0 : (k - 2) / 32;           // words of 2/pi that reach below 2**2
    uint L[8];
    ulong carry = 0;
    for (int j = 4; j >= 0; j--) {                 // S = m * W[i0 .. i0+4]
        ulong acc = m * (ulong)TWO_OVER_PI[i0 + j] + carry;
        L[4 - j] = (uint)acc;
        carry = acc >> 32;
    }
    L[5] = (uint)carry; L[6] = 0u; L[7] = 0u;
    int p0 = 32 * (i0 + 5) - k;                    // bit p0 of S is the units bit
    int quad = (int)(bits64(L, p0) & 3UL);
    ulong fh = bits64(L, p0 - 64), fl = bits64(L, p0 - 128);
    int neg = 0;
    if (fh >> 63) {                                // t = fraction - 1
        fl = ~fl + 1UL;
        fh = ~fh + (fl == 0UL ? 1UL : 0UL);
        quad = (quad + 1) & 3;
        neg = 1;
    }
    if (fh == 0UL) { *q = 0; return NAN; }
    int lz = (int)clz(fh);
    ulong mant = lz ? (fh << lz) | (fl >> (64 - lz)) : fh;
    double t = (double)mant * pow2d(-64 - lz);
    double z = fma(t, PIO2_HI, t * PIO2_LO);
    *q = quad;
    return neg ? negd(z) : z;
}

// sin(x) (cosine 0) or cos(x) (cosine 1): cos(x) = sin(x + pi/2), one quadrant on
inline double sin_or_cos(uint xb, int cosine) {
    uint ax = xb & 0x7fffffffu;
    double r;
    if ((ax >> 23) < 126u) {                       // |x| < 1/2 (subnormals too): no reduction
        double x = to_double(ax);
        r = cosine ? cos_poly(x) : sin_poly(x);
    } else {
        int q;
        double z = reduce_pio2(ax, &q);
        q += cosine;
        r = (q & 1) ? cos_poly(z) : sin_poly(z);
        if (q & 2) r = negd(r);
    }
    return (!cosine && (xb >> 31)) ? negd(r) : r;            // sin odd, cos even
}

inline double ref_sin(uint xb, int *kind) { *kind = K_VALUE; return sin_or_cos(xb, 0); }
inline double ref_cos(uint xb, int *kind) { *kind = K_VALUE; return sin_or_cos(xb, 1); }

// tan(x) = sin(z) / cos(z) for an even quadrant q, -cos(z) / sin(z) for an odd one (odd in x)
inline double ref_tan(uint xb, int *kind) {
    uint ax = xb & 0x7fffffffu;
    double r;
    *kind = K_VALUE;
    if ((ax >> 23) < 126u) {                       // |x| < 1/2 (subnormals too): no reduction
        double x = to_double(ax);
        r = sin_poly(x) / cos_poly(x);
    } else {
        int q;
        double z = reduce_pio2(ax, &q);
        r = (q & 1) ? negd(cos_poly(z) / sin_poly(z)) : sin_poly(z) / cos_poly(z);
    }
    return (xb >> 31) ? negd(r) : r;
}

// exp2(x) = 2**n 2**t, n = rint(x), |t| <= 1/2 exact; 2**t by Taylor to t**13
inline double exp2_core(double t) {
    double p = EXP2_C13;
    p = fma(p, t, EXP2_C12); p = fma(p, t, EXP2_C11); p = fma(p, t, EXP2_C10);
    p = fma(p, t, EXP2_C9);  p = fma(p, t, EXP2_C8);  p = fma(p, t, EXP2_C7);
    p = fma(p, t, EXP2_C6);  p = fma(p, t, EXP2_C5);  p = fma(p, t, EXP2_C4);
    p = fma(p, t, EXP2_C3);  p = fma(p, t, EXP2_C2);  p = fma(p, t, EXP2_C1);
    return fma(p, t, 1.0);
}
// 2**(hi + lo) for |hi| <= 1022 and a small lo (a double-double exponent, lo = 0 for one
// double): 2**rint(hi) exact, 2**((hi - rint(hi)) + lo) by exp2_core (the difference exact)
inline double exp2_scaled(double hi, double lo) {
    double n = rintd(hi);
    return exp2_core((hi - n) + lo) * pow2d((int)n);
}
inline double exp_core(double t) {                 // e**t, |t| <= 0.35, Taylor to t**13
    double p = EXP_C13;
    p = fma(p, t, EXP_C12); p = fma(p, t, EXP_C11); p = fma(p, t, EXP_C10);
    p = fma(p, t, EXP_C9);  p = fma(p, t, EXP_C8);  p = fma(p, t, EXP_C7);
    p = fma(p, t, EXP_C6);  p = fma(p, t, EXP_C5);  p = fma(p, t, EXP_C4);
    p = fma(p, t, EXP_C3);  p = fma(p, t, EXP_C2);  p = fma(p, t, 1.0);
    return fma(p, t, 1.0);
}

// e**x for |x| <= 700: n = rint(x / ln 2), t = x - n LN2_HI (exact: LN2_HI has 32 bits)
// - n LN2_LO, e**t by Taylor, times 2**n exact
inline double exp_full(double x) {
    double n = rintd(x * INV_LN2);
    double t = fma(negd(n), LN2_HI, x) - n * LN2_LO;
    return exp_core(t) * pow2d((int)n);
}

inline double ref_exp2(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_VALUE;
    if (x >= 128.0) { *kind = K_OVER; return 1.0; }       // 2**x >= 2**128
    if (x < -151.0) { *kind = K_UNDER; return 0.0; }      // 0 < 2**x < 2**-151
    return exp2_scaled(x, 0.0);
}

inline double ref_exp(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_VALUE;
    if (x > 89.0) { *kind = K_OVER; return 1.0; }         // e**89 > 2**128
    if (x < -104.0) { *kind = K_UNDER; return 0.0; }      // e**-104 < 2**-150
    return exp_full(x);
}

// ---- expm1 and the hyperbolic functions
// e**x - 1 for |x| <= 0.35 by Taylor to x**14 (truncation below 2**-56 relative)
inline double expm1_small(double x) {
    double p = EXP_C14;
    p = fma(p, x, EXP_C13); p = fma(p, x, EXP_C12); p = fma(p, x, EXP_C11);
    p = fma(p, x, EXP_C10); p = fma(p, x, EXP_C9);  p = fma(p, x, EXP_C8);
    p = fma(p, x, EXP_C7);  p = fma(p, x, EXP_C6);  p = fma(p, x, EXP_C5);
    p = fma(p, x, EXP_C4);  p = fma(p, x, EXP_C3);  p = fma(p, x, EXP_C2);
    return fma(x * x, p, x);
}
// sinh(x) for |x| <= 1/2 by Taylor to x**15 (truncation below 2**-60 relative)
inline double sinh_small(double x) {
    double x2 = x * x;
    double p = EXP_C15;
    p = fma(p, x2, EXP_C13); p = fma(p, x2, EXP_C11); p = fma(p, x2, EXP_C9);
    p = fma(p, x2, EXP_C7);  p = fma(p, x2, EXP_C5);  p = fma(p, x2, EXP_C3);
    return fma(x * x2, p, x);
}
// Beyond |x| > 0.35 (expm1) or 1/2 (sinh) the subtraction loses at most a factor
// e**x / (e**x - 1) < 3.4 or coth(1/2) < 2.2 of exp_full's relative error.
inline double ref_expm1(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_VALUE;
    if (x > 89.0) { *kind = K_OVER; return 1.0; }         // e**89 - 1 > 2**128
    if (absd(x) <= 0.35) return expm1_small(x);
    return x < -60.0 ? -1.0 : exp_full(x) - 1.0;          // e**-60 < 2**-86
}
inline double ref_sinh(uint xb, int *kind) {
    double a = absd(to_double(xb)), r;
    *kind = K_VALUE;
    if (a > 89.5) {                                       // sinh(89.5) > 2**128
        *kind = K_OVER;
        return (xb >> 31) ? -1.0 : 1.0;
    }
    if (a <= 0.5) {
        r = sinh_small(a);
    } else {
        double e = exp_full(a);
        r = 0.5 * (e - 1.0 / e);
    }
    return (xb >> 31) ? negd(r) : r;
}
inline double ref_cosh(uint xb, int *kind) {
    double a = absd(to_double(xb));
    *kind = K_VALUE;
    if (a > 89.5) { *kind = K_OVER; return 1.0; }         // cosh(89.5) > 2**128
    double e = exp_full(a);
    return 0.5 * (e + 1.0 / e);                           // no cancellation
}
// tanh = sinh / cosh for |x| <= 1/2; (E - 1)/(E + 1), E = e**(2|x|), up to 20 (the
// subtraction loses less than a factor 2.2); 1 beyond (1 - tanh 20 < 2**-56)
inline double ref_tanh(uint xb, int *kind) {
    double a = absd(to_double(xb)), r;
    *kind = K_VALUE;
    if (a <= 0.5) {
        r = sinh_small(a) / (0.5 * (exp_full(a) + exp_full(negd(a))));
    } else if (a <= 20.0) {
        double e = exp_full(a + a);
        r = (e - 1.0) / (e + 1.0);
    } else {
        r = 1.0;
    }
    return (xb >> 31) ? negd(r) : r;
}

// 10**x = 2**n e**t, n = rint(x log2 10), t = x ln 10 - n ln 2: x LN10_HI and n LN2_HI are
// exact (LN10_HI: 28 bits, x: 24; LN2_HI: 32 bits, |n| <= 151) and so is their difference
// (both multiples of 2**-52 or coarser where n != 0, i.e. |x| >= 0.15, and it is below 1/2);
// the low parts add below 2**-20 with one rounding each
inline double ref_exp10(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_VALUE;
    if (x > 38.54) { *kind = K_OVER; return 1.0; }        // 10**38.54 > 2**128
    if (x < -45.16) { *kind = K_UNDER; return 0.0; }      // 10**-45.16 < 2**-150
    double n = rintd(x * LOG2_10);
    double t = (x * LN10_HI - n * LN2_HI) + (x * LN10_LO - n * LN2_LO);
    return exp_core(t) * pow2d((int)n);
}

// 2 atanh(s) for |s| <= 0.172 by its odd series to s**21 (truncation below 2**-60)
// (2 atanh(s) - 2 s) / (2 s**3) = 1/3 + s**2/5 + ... + s**18/21, of s2 = s**2
inline double atanh_poly(double s2) {
    double p = LOG_C21;
    p = fma(p, s2, LOG_C19); p = fma(p, s2, LOG_C17); p = fma(p, s2, LOG_C15);
    p = fma(p, s2, LOG_C13); p = fma(p, s2, LOG_C11); p = fma(p, s2, LOG_C9);
    p = fma(p, s2, LOG_C7);  p = fma(p, s2, LOG_C5);  p = fma(p, s2, LOG_C3);
    return p;
}
inline double atanh2_series(double s) {
    double s2 = s * s;
    double s_2 = s + s;
    return fma(s_2 * s2, atanh_poly(s2), s_2);
}
// log(m) for m in [sqrt(1/2), sqrt(2)]: 2 atanh(s), s = (m - 1)/(m + 1)
inline double log_core(double m) { return atanh2_series((m - 1.0) / (m + 1.0)); }
// x > 0 finite binary32, subnormals included: x = m 2**e with m in [sqrt(1/2), sqrt(2))
inline double split_log(uint b, int *e) {
    int ex = (int)(b >> 23) - 127;
    if (ex == -127) {                              // subnormal: normalize the significand
        uint f = b & 0x7fffffu;
        int sh = (int)clz(f) - 8;                  // its leading 1 to bit 23
        b = f << sh;
        ex = -126 - sh;
    }
    uint mb = (b & 0x7fffffu) | 0x3f800000u;       // m in [1, 2)
    if ((b & 0x7fffffu) > 0x3504f3u) { mb -= 0x00800000u; ex += 1; }   // m > sqrt(2): m/2
    *e = ex;
    return (double)as_float(mb);
}

inline double ref_log(uint xb, int *kind) {
    *kind = K_VALUE;
    if (xb >> 31) { *kind = K_NAN; return NAN; }               // F9.log.3: x < 0
    int e;
    double lm = log_core(split_log(xb, &e));
    double de = (double)e;
    return de * LN2_HI + (de * LN2_LO + lm);       // e * LN2_HI exact
}

inline double ref_log2(uint xb, int *kind) {
    *kind = K_VALUE;
    if (xb >> 31) { *kind = K_NAN; return NAN; }               // F9.log2.3: x < 0
    int e;
    double lm = log_core(split_log(xb, &e));
    return (double)e + lm * INV_LN2;
}

inline double ref_log10(uint xb, int *kind) {
    *kind = K_VALUE;
    if (xb >> 31) { *kind = K_NAN; return NAN; }               // F9.log10.3: x < 0
    int e;
    double lm = log_core(split_log(xb, &e));
    double de = (double)e;
    return de * LOG10_2_HI + (de * LOG10_2_LO + lm * INV_LN10);   // e * LOG10_2_HI exact
}

// ---- Roots: Newton's iterations in binary64, no square root of the
// device's.  v = m 2**(2k) (sqrt) or m 2**(3k) (cbrt) from v's exponent bits, m in [1, 4)
// or [1, 8); the iterations start within 25 % and converge quadratically: after the last
// one, the relative error is the rounding of a few operations, below 2**-51.
inline double scale_root(double v, int root, int *k) {      // v > 0 finite: m, *k
    int e = exponent_of(v);                                   // v normal binary64 here
    int q = e >= 0 ? e / root : -((-e + root - 1) / root);    // floor(e / root)
    *k = q;
    return as_double((as_ulong(v) & 0x000fffffffffffffUL) | ((ulong)(e - root * q + 1023) << 52));
}
inline double sqrt_pos(double v) {                 // v > 0, binary64 normal
    int k;
    double m = scale_root(v, 2, &k);               // [1, 4)
    double y = 1.0 + (m - 1.0) * 0.3333333333333333;   // within 10 %
    for (int i = 0; i < 6; i++) y = 0.5 * (y + m / y);
    return y * pow2d(k);
}
inline double cbrt_pos(double v) {                 // v > 0, binary64 normal
    int k;
    double m = scale_root(v, 3, &k);               // [1, 8)
    double y = 1.0 + (m - 1.0) * 0.14285714285714285;  // within 25 %
    for (int i = 0; i < 7; i++) y = y - (y * y * y - m) / (3.0 * y * y);
    return y * pow2d(k);
}
inline double ref_sqrt(uint xb, int *kind) {
    *kind = K_VALUE;
    if (xb >> 31) { *kind = K_NAN; return NAN; }               // F9.sqrt.D3: x < 0
    return sqrt_pos(to_double(xb));
}
inline double ref_rsqrt(uint xb, int *kind) {
    *kind = K_VALUE;
    if (xb >> 31) { *kind = K_NAN; return NAN; }               // F9.rsqrt.D4: x < 0
    return 1.0 / sqrt_pos(to_double(xb));
}
inline double ref_cbrt(uint xb, int *kind) {
    *kind = K_VALUE;
    double r = cbrt_pos(absd(to_double(xb)));
    return (xb >> 31) ? negd(r) : r;
}

// ---- atan and the inverse sines and cosines, table-free:
// atan(a) for a >= 0 (a = +inf included): a > 1 by pi/2 - atan(1/a); then two halvings
// atan(z) = 2 atan(z / (1 + sqrt(1 + z**2))), |z| <= tan(pi/16) < 0.2, and the odd Taylor
// series to z**27 (truncation below 2**-60).
inline double atan_series(double z) {
    double z2 = z * z;
    double p = ATAN_C27;
    p = fma(p, z2, ATAN_C25); p = fma(p, z2, ATAN_C23); p = fma(p, z2, ATAN_C21);
    p = fma(p, z2, ATAN_C19); p = fma(p, z2, ATAN_C17); p = fma(p, z2, ATAN_C15);
    p = fma(p, z2, ATAN_C13); p = fma(p, z2, ATAN_C11); p = fma(p, z2, ATAN_C9);
    p = fma(p, z2, ATAN_C7);  p = fma(p, z2, ATAN_C5);  p = fma(p, z2, ATAN_C3);
    return fma(z * z2, p, z);
}
inline double atan_nonneg(double a) {
    int big = a > 1.0;
    double z = big ? 1.0 / a : a;                  // 1/inf = 0
    if (z > 0.0) {
        z = z / (1.0 + sqrt_pos(fma(z, z, 1.0)));
        z = z / (1.0 + sqrt_pos(fma(z, z, 1.0)));
    }
    double t = 4.0 * atan_series(z);
    return big ? (PIO2_HI - t) + PIO2_LO : t;
}
inline double ref_atan(uint xb, int *kind) {
    *kind = K_VALUE;
    double r = atan_nonneg(absd(to_double(xb)));
    return (xb >> 31) ? negd(r) : r;
}
// asin(x) = atan(x / sqrt(1 - x**2)), 1 - x**2 = (1 - |x|)(1 + |x|): both factors exact
// for binary32 |x| >= 1/2 (and one rounding below): the product has one rounding
inline double asin_abs(double a) {                 // 0 <= a <= 1
    double c = (1.0 - a) * (1.0 + a);
    return c == 0.0 ? PIO2_HI + PIO2_LO : atan_nonneg(a / sqrt_pos(c));
}
inline double ref_asin(uint xb, int *kind) {
    double a = absd(to_double(xb));
    *kind = K_VALUE;
    if (a > 1.0) { *kind = K_NAN; return NAN; }                // F9.asin.2: |x| > 1
    double r = asin_abs(a);
    return (xb >> 31) ? negd(r) : r;
}
// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near x = 1; acos(1) = +0
// (F9.acos.1) comes out as r = 0, which leaves the input to the host
inline double acos_of(double x) {                 // -1 <= x <= 1
    double q = (1.0 - x) / (1.0 + x);              // +inf at x = -1: atan gives pi/2
    return q == 0.0 ? 0.0 : 2.0 * atan_nonneg(q == INFINITY ? q : sqrt_pos(q));
}
inline double ref_acos(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_VALUE;
    if (absd(x) > 1.0) { *kind = K_NAN; return NAN; }          // F9.acos.2: |x| > 1
    return acos_of(x);
}
inline double ref_atanpi(uint xb, int *kind) { return ref_atan(xb, kind) * INV_PI; }
inline double ref_asinpi(uint xb, int *kind) { return ref_asin(xb, kind) * INV_PI; }
inline double ref_acospi(uint xb, int *kind) { return ref_acos(xb, kind) * INV_PI; }

// ---- log1p and the inverse hyperbolic functions
// A normal binary64 u > 0 as m 2**e, m in [sqrt(1/2), sqrt(2)] (exact: u's fraction bits
// with the exponent of 1, or of 1/2 above sqrt(2)): returns m, *e
inline double split_double(double u, int *e) {
    ulong b = as_ulong(u);
    int ex = exponent_of(u);
    ulong mb = (b & 0x000fffffffffffffUL) | 0x3ff0000000000000UL;     // [1, 2)
    if ((b & 0x000fffffffffffffUL) > 0x6a09e667f3bcdUL) { mb -= 0x0010000000000000UL; ex += 1; }
    *e = ex;
    return as_double(mb);
}
// log(u) for a normal binary64 u > 0: u = m 2**e (split_double)
inline double log_double(double u) {
    int e;
    double m = split_double(u, &e);
    double de = (double)e;
    return de * LN2_HI + (de * LN2_LO + log_core(m));
}
// log(1 + v), v > -1: where 1 + v is in [sqrt(1/2), sqrt(2)], 2 atanh(v / (2 + v))
// (|s| <= 0.172; one rounding in 2 + v, one in the quotient), else log(1 + v) (1 + v
// exact for a binary32 v below 2**29, one rounding above, where log is far from 0)
inline double log1p_d(double v) {
    if (v >= -0.29289321881345254 && v <= 0.41421356237309503)
        return atanh2_series(v / (2.0 + v));
    return log_double(1.0 + v);
}
inline double ref_log1p(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_VALUE;
    if (x < -1.0) { *kind = K_NAN; return NAN; }              // F9.log1p.3: x < -1
    if (x == -1.0) return NAN;                                // F9.log1p.2 (-inf): the host's
    return log1p_d(x);
}
// asinh(a) = log1p(a + a**2 / (1 + sqrt(1 + a**2))), a = |x|: every term positive, and
// log1p's relative condition number is at most 1
inline double ref_asinh(uint xb, int *kind) {
    double a = absd(to_double(xb));
    *kind = K_VALUE;
    double r = log1p_d(a + a * a / (1.0 + sqrt_pos(fma(a, a, 1.0))));
    return (xb >> 31) ? negd(r) : r;
}
// acosh(x) = log1p((x - 1) + sqrt((x - 1)(x + 1))), x - 1 exact for binary32 x >= 1
inline double ref_acosh(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_VALUE;
    if (!(x >= 1.0)) { *kind = K_NAN; return NAN; }           // F9.acosh.2: x < 1
    double d = x - 1.0;
    return d == 0.0 ? 0.0 : log1p_d(d + sqrt_pos(d * (x + 1.0)));   // acosh(1) = +0: host
}
// atanh(a) = log1p(2a / (1 - a)) / 2, a = |x| < 1
inline double ref_atanh(uint xb, int *kind) {
    double a = absd(to_double(xb));
    *kind = K_VALUE;
    if (a > 1.0) { *kind = K_NAN; return NAN; }               // F9.atanh.3: |x| > 1
    if (a == 1.0) return NAN;                                 // F9.atanh.2 (inf): the host's
    double r = 0.5 * log1p_d((a + a) / (1.0 - a));
    return (xb >> 31) ? negd(r) : r;
}

// x = n + y, n = rint(x), |y| <= 1/2 exact; odd: n odd
inline double split_pi(uint xb, int *odd) {
    double x = to_double(xb);
    double n = rintd(x);
    *odd = absd(n) < 0x1p31 ? (int)((long)n & 1L) : 0;
    return x - n;
}

inline double ref_sinpi(uint xb, int *kind) {
    int odd;
    double y = split_pi(xb, &odd), ay = absd(y);
    if (ay == 0.0) {                               // CL.sinpi.*_integer: zero of x's sign
        *kind = K_EXACT | ((int)(xb >> 31) << 4);  // positive 0, negative 1
        return (xb >> 31) ? -0.0 : 0.0;
    }
    *kind = K_VALUE;
    double s = ay <= 0.25 ? sin_poly(ay * PI) : cos_poly((0.5 - ay) * PI);
    return ((y < 0.0) != (odd != 0)) ? negd(s) : s;
}

inline double ref_cospi(uint xb, int *kind) {
    int odd;
    double y = split_pi(xb, &odd), ay = absd(y);
    if (ay == 0.5) { *kind = K_EXACT; return 0.0; }    // CL.cospi.half_integer: +0
    *kind = K_VALUE;
    double c = ay <= 0.25 ? cos_poly(ay * PI) : sin_poly((0.5 - ay) * PI);
    return odd ? negd(c) : c;
}

inline double ref_tanpi(uint xb, int *kind) {
    int odd;
    double y = split_pi(xb, &odd), ay = absd(y);
    if (ay == 0.0) {                               // CL.tanpi.even_integer / odd_integer
        *kind = K_EXACT | ((odd ? 1 : 0) << 4);
        return ((xb >> 31) != (uint)odd) ? -0.0 : 0.0;
    }
    if (ay == 0.5) {                               // CL.tanpi.half_integer_even_n / odd_n
        int even_n = (y > 0.0) != (odd != 0);      // x = n + 1/2: n = x - 1/2
        *kind = K_EXACT | ((even_n ? 2 : 3) << 4);
        return even_n ? INFINITY : -INFINITY;
    }
    *kind = K_VALUE;
    double t;
    if (ay <= 0.25) {
        double z = ay * PI;
        t = sin_poly(z) / cos_poly(z);
    } else {
        double z = (0.5 - ay) * PI;
        t = cos_poly(z) / sin_poly(z);
    }
    return y < 0.0 ? negd(t) : t;
}

// ---- erf, odd: |x| < 2 by the series of positive terms
// erf(a) = 2/sqrt(pi) e**(-a**2) sum_n 2**n a**(2n+1) / (1 3 5 ... (2n+1)) (no
// cancellation; each term one product and one quotient on the last, the sum compensated
// (Fast2Sum: s >= every term), at most 44 terms); 2 <= |x| < 6 as 1 - erfc(a), erfc by
// the continued fraction e**(-a**2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
// evaluated backward from 60 levels (relative truncation below 2**-51 at a = 2, less
// beyond; erfc(a) <= 0.0047 there, so its error reaches erf divided by 200 at least);
// |x| >= 6: 1 (erfc(6) < 2**-55).  a**2 is exact (a has 24 bits).
inline double erf_series(double a) {
    double t2 = 2.0 * (a * a);
    double term = a, s = a, c = 0.0;
    for (int n = 0; n < 60; n++) {
        term = term * (t2 / (double)(2 * n + 3));
        double s2 = s + term;
        c += (s - s2) + term;
        s = s2;
        if (term < 0x1p-60 * s) break;
    }
    return TWO_OVER_SQRTPI * (exp_full(negd(a * a)) * (s + c));
}
inline double erfc_cf(double a) {                 // 2 <= a < 10.0625
    double t = 0.0;
    for (int k = 60; k > 0; k--) t = (0.5 * (double)k) / (a + t);
    return INV_SQRTPI * exp_full(negd(a * a)) / (a + t);
}
// erfc: x < 1/2 as 1 - erf(x) (erf(x) < 0.53: no cancellation worth
// the name; x < 0: 1 + erf(|x|)); 1/2 <= x < 2 by Taylor polynomials of degree ERFC_K
// about the centres c_j = 1/2 + (j + 1/2)/8 (|h| = |x - c_j| <= 1/16, exact; coefficients
// computed with mpmath, truncation below 2**-60 relative); 2 <= x < 10.0625 by the
// continued fraction; beyond, 0 < erfc(x) < 2**-150 (K_UNDER: erfc(10.0625) < 6.2e-46).
// erf(|x|) for |x| the binary32 pattern ax (above)
inline double erf_abs(uint ax) {
    double a = to_double(ax);
    if (ax < 0x40000000u) return erf_series(a);                // |x| < 2
    if (ax < 0x40c00000u) return 1.0 - erfc_cf(a);             // |x| < 6
    return 1.0;
}
inline double ref_erfc(uint xb, int *kind) {
    uint ax = xb & 0x7fffffffu;
    double a = to_double(ax);
    *kind = K_VALUE;
    if (xb >> 31) return 1.0 + erf_abs(ax);
    if (ax < 0x3f000000u) return 1.0 - erf_series(a);          // x < 1/2
    if (ax < 0x40000000u) {                                    // x < 2
        int j = (int)((a - 0.5) * 8.0);
        double h = a - (0.5625 + 0.125 * (double)j);
        __constant const double *c = ERFC_TAYLOR + j * (ERFC_K + 1);
        double p = c[ERFC_K];
        for (int k = ERFC_K - 1; k >= 0; k--) p = fma(p, h, c[k]);
        return p;
    }
    if (ax < 0x41210000u) return erfc_cf(a);                   // x < 10.0625
    *kind = K_UNDER;
    return 0x1p-160;
}
inline double ref_erf(uint xb, int *kind) {
    double r = erf_abs(xb & 0x7fffffffu);
    *kind = K_VALUE;
    return (xb >> 31) ? negd(r) : r;
}

// ---- The exact built-ins, judged bit for bit: the result is made
// from x's bits with integer arithmetic and exact operations on binary64 values of at most
// 24 significant bits (every addition below is exact), K_EXACT everywhere (x finite; the
// zeros have rules of their own).  BIT_EXACT (device_references.BIT_EXACT) keeps their passed
// inputs out of the error statistics, as the host measures no ULP error for them.

// x rounded toward zero to an integer, as a binary32 pattern (its sign kept)
inline uint trunc_bits(uint xb) {
    int e = (int)((xb >> 23) & 0xffu);
    if (e >= 150) return xb;                       // |x| >= 2**23: an integer already
    if (e < 127) return xb & 0x80000000u;          // |x| < 1: a zero of x's sign
    return xb & ~((1u << (150 - e)) - 1u);         // clear the fraction's bits
}
inline double ref_fabs(uint xb, int *kind) { *kind = K_EXACT; return to_double(xb & 0x7fffffffu); }
inline double ref_trunc(uint xb, int *kind) { *kind = K_EXACT; return to_double(trunc_bits(xb)); }
inline double ref_floor(uint xb, int *kind) {
    uint t = trunc_bits(xb);
    *kind = K_EXACT;
    return ((xb >> 31) && t != xb) ? to_double(t) - 1.0 : to_double(t);   // -0 - 1 = -1
}
inline double ref_ceil(uint xb, int *kind) {
    uint t = trunc_bits(xb);
    *kind = K_EXACT;
    return (!(xb >> 31) && t != xb) ? to_double(t) + 1.0 : to_double(t);  // ceil(-0.5) = -0
}
// to the nearest integer, ties to even (rint) or away from zero (round); the sign of x kept
inline double ref_rint(uint xb, int *kind) {
    uint ax = xb & 0x7fffffffu;
    *kind = K_EXACT;
    if (ax >= 0x4b000000u) return to_double(xb);   // |x| >= 2**23
    double a = to_double(ax);
    double r = (a + 0x1p52) - 0x1p52;              // round to nearest even, a < 2**23
    return (xb >> 31) ? negd(r) : r;
}
inline double ref_round(uint xb, int *kind) {
    uint ax = xb & 0x7fffffffu;
    *kind = K_EXACT;
    if (ax >= 0x4b000000u) return to_double(xb);
    double a = to_double(ax), t = to_double(trunc_bits(ax));
    double r = a - t >= 0.5 ? t + 1.0 : t;
    return (xb >> 31) ? negd(r) : r;
}
// floor(log2 |x|): the unbiased exponent, a subnormal's as if normalized (-127 .. -149)
inline double ref_logb(uint xb, int *kind) {
    uint ax = xb & 0x7fffffffu;
    *kind = K_EXACT;
    if (ax == 0u) return -INFINITY;                // F9.logb.1's (a rule: not asked)
    int e = (int)(ax >> 23);
    return (double)(e ? e - 127 : -118 - (int)clz(ax));
}
// sign(x) = +-1 for finite nonzero x, subnormals included (CL.sign.positive / negative)
inline double ref_sign(uint xb, int *kind) { *kind = K_EXACT; return (xb >> 31) ? -1.0 : 1.0; }
// ilogb's int result, as a binary64 value (RESULT_INT: compared with y as an int32)
inline double ref_ilogb(uint xb, int *kind) { return ref_logb(xb, kind); }
// 1/x (half_recip): one rounding (relative error 2**-53); beyond the round-to-nearest
// overflow threshold 2**128 - 2**103 (subnormal |x| < 2**-128) by a margin: K_OVER
inline double ref_recip(uint xb, int *kind) {
    double r = 1.0 / to_double(xb);
    *kind = absd(r) > 0x1.ffffff8p127 * (1.0 + 0x1p-50) ? K_OVER : K_VALUE;
    return r;
}

// ---- degrees, radians and the two-argument built-ins.
// A two-argument reference takes x and z, the binary32 patterns of the first and second
// argument (TWO_ARGS; the screen passes only inputs whose arguments are both finite and
// nonzero: every other input is the host's).  Each is one or two IEEE operations on
// exact binary64 values (relative error at most 2**-52) or a selection of bits
// (BIT_EXACT), docs/device_screen.md "Two-argument built-ins".
inline double ref_degrees(uint xb, int *kind) {    // x 180/pi: two roundings
    *kind = K_VALUE;
    return to_double(xb) * DEG_PER_RAD;
}
inline double ref_radians(uint xb, int *kind) {    // x pi/180: two roundings
    *kind = K_VALUE;
    return to_double(xb) * RAD_PER_DEG;
}
// x + z, x - z, x * z, x / z: one binary64 rounding of the exact value (the products of
// binary32 numbers are exact in binary64); judged at their bound of 0.5 ULP (correctly
// rounded) or the division's
inline double ref_add(uint xb, uint zb, int *kind) { *kind = K_VALUE; return to_double(xb) + to_double(zb); }
inline double ref_sub(uint xb, uint zb, int *kind) { *kind = K_VALUE; return to_double(xb) - to_double(zb); }
inline double ref_mul(uint xb, uint zb, int *kind) { *kind = K_VALUE; return to_double(xb) * to_double(zb); }
inline double ref_divide(uint xb, uint zb, int *kind) { *kind = K_VALUE; return to_double(xb) / to_double(zb); }
// fdim(x, z) = x - z where x > z (one rounding), else +0 exactly (C99 7.12.12.1)
inline double ref_fdim(uint xb, uint zb, int *kind) {
    double x = to_double(xb), z = to_double(zb);
    if (x > z) { *kind = K_VALUE; return x - z; }
    *kind = K_EXACT;
    return 0.0;
}
// hypot(x, z) = sqrt(x**2 + z**2): the squares exact, the sum one rounding (halved by the
// root), sqrt_pos below 2**-51
inline double ref_hypot(uint xb, uint zb, int *kind) {
    double x = to_double(xb), z = to_double(zb);
    *kind = K_VALUE;
    return sqrt_pos(x * x + z * z);
}
// atan2(y, x) (the first argument y is x here, the second z): atan(|y| / |x|), from pi
// where x < 0, with y's sign; the quotient's rounding (2**-53) enters atan with a
// condition number at most 1, and pi - a >= pi/2 has no cancellation
inline double atan2_of(double y, double x) {
    double a = atan_nonneg(absd(y) / absd(x));
    double r = x < 0.0 ? (2.0 * PIO2_HI - a) + 2.0 * PIO2_LO : a;
    return y < 0.0 ? negd(r) : r;
}
inline double ref_atan2(uint xb, uint zb, int *kind) {
    *kind = K_VALUE;
    return atan2_of(to_double(xb), to_double(zb));
}
inline double ref_atan2pi(uint xb, uint zb, int *kind) {
    *kind = K_VALUE;
    return atan2_of(to_double(xb), to_double(zb)) * INV_PI;
}
// Exact: the result is one of the arguments or a pattern of their bits (BIT_EXACT)
inline double ref_fmin(uint xb, uint zb, int *kind) {     // x == z: the same pattern
    double x = to_double(xb), z = to_double(zb);
    *kind = K_EXACT;
    return z < x ? z : x;
}
inline double ref_fmax(uint xb, uint zb, int *kind) {
    double x = to_double(xb), z = to_double(zb);
    *kind = K_EXACT;
    return x < z ? z : x;
}
// maxmag / minmag: the argument of the larger / smaller magnitude, fmax / fmin where the
// magnitudes are equal (OpenCL C 3.0 §6.15.2)
inline double ref_maxmag(uint xb, uint zb, int *kind) {
    uint ax = xb & 0x7fffffffu, az = zb & 0x7fffffffu;
    if (ax != az) { *kind = K_EXACT; return to_double(ax > az ? xb : zb); }
    return ref_fmax(xb, zb, kind);
}
inline double ref_minmag(uint xb, uint zb, int *kind) {
    uint ax = xb & 0x7fffffffu, az = zb & 0x7fffffffu;
    if (ax != az) { *kind = K_EXACT; return to_double(ax < az ? xb : zb); }
    return ref_fmin(xb, zb, kind);
}
inline double ref_copysign(uint xb, uint zb, int *kind) {
    *kind = K_EXACT;
    return to_double((xb & 0x7fffffffu) | (zb & 0x80000000u));
}
// nextafter(x, z): z where x == z, else the next binary32 number from x toward z (its
// magnitude one pattern up or down; from the largest finite number up: the infinity; from
// the smallest subnormal down: the zero of x's sign)
inline double ref_nextafter(uint xb, uint zb, int *kind) {
    double x = to_double(xb), z = to_double(zb);
    *kind = K_EXACT;
    if (x == z) return z;
    int up = (x < z) == !(xb >> 31);               // the magnitude grows
    return to_double(up ? xb + 1u : xb - 1u);
}
// ldexp(x, k) = x 2**k (Z_INT: the second argument is an int, k = 0 the host's), exact
// in binary64 for the k that matter: beyond +-400 the result of a finite nonzero binary32
// x is beyond the overflow threshold or below 2**-150 either way (case 5 decides)
inline double ref_ldexp(uint xb, uint zb, int *kind) {
    int k = (int)zb;
    k = k > 400 ? 400 : (k < -400 ? -400 : k);
    *kind = K_VALUE;
    return to_double(xb) * pow2d(k);
}
// |x| mod |z| of finite nonzero binary32 magnitudes ax, az, exactly (a binary32 number:
// C99 7.12.10.1), by long division of the integer significands: x = mx 2**(ex - 150), z =
// mz 2**(ez - 150) (a subnormal's exponent field counted as 1); the remainder of
// mx 2**(ex - ez) by mz taken 39 bits at a time (r < 2**24, so r 2**39 < 2**63).  *q8: the
// integer quotient floor(|x| / |z|) modulo 8 (its parity decides remainder's tie; remquo's
// quo), kept from every step's quotient.  Where ex < ez, |x| < |z| (z is normal then,
// mz >= 2**23 > mx / 2): the quotient is 0 and the remainder |x|.
inline double mod_abs(uint ax, uint az, int *q8) {
    int ex = (int)(ax >> 23), ez = (int)(az >> 23);
    ulong mx = (ulong)((ax & 0x7fffffu) | (ex ? 0x800000u : 0u));
    ulong mz = (ulong)((az & 0x7fffffu) | (ez ? 0x800000u : 0u));
    ex = ex ? ex : 1;
    ez = ez ? ez : 1;
    *q8 = 0;
    if (ex < ez) return to_double(ax);
    ulong r = long_mod(mx, mz, ex - ez, 39, q8);
    return (double)r * pow2d(ez - 150);              // r < 2**24: exact
}
// fmod(x, z) = x - trunc(x / z) z: |x| mod |z| with x's sign (a zero of x's sign too)
inline double ref_fmod(uint xb, uint zb, int *kind) {
    int q8;
    double r = mod_abs(xb & 0x7fffffffu, zb & 0x7fffffffu, &q8);
    *kind = K_EXACT;
    return (xb >> 31) ? negd(r) : r;
}
// remainder(x, z) = x - n z, n the integer nearest x / z, ties to the even one (C99
// 7.12.10.2; IEEE 754 remainder): |x| mod |z| = r, less |z| where 2 r > |z| or 2 r = |z|
// with an odd quotient (r - |z| exact: both multiples of r's unit, or Sterbenz where
// |x| < |z|), with x's sign; a zero remainder has x's sign (F.9.7.2)
// (*n8: the magnitude of the rounded quotient n modulo 8, remquo's quo)
inline double remainder_n8(uint xb, uint zb, int *n8) {
    double r = mod_abs(xb & 0x7fffffffu, zb & 0x7fffffffu, n8);
    double a = to_double(zb & 0x7fffffffu);
    if (2.0 * r > a || (2.0 * r == a && (*n8 & 1))) { r -= a; *n8 = (*n8 + 1) & 7; }
    return (xb >> 31) ? negd(r) : r;
}
inline double ref_remainder(uint xb, uint zb, int *kind) {
    int n8;
    *kind = K_EXACT;
    return remainder_n8(xb, zb, &n8);
}
// ---- pown, rootn, pow, powr: double-double arithmetic (screen_common.cl's dd_t).
// a 2**E renormalized to hi in [1, 2) (exact scaling by a power of two)
inline dd_t dd_unit(dd_t a, long *E) {
    int k = exponent_of(a.hi);
    double s = pow2d(-k);
    dd_t r = { a.hi * s, a.lo * s };
    *E += k;
    return r;
}
// b**k for a positive normal binary64 b and 0 < k <= 2**31, by binary powering in
// double-double with the binary exponent kept apart (no intermediate overflow or
// underflow): b**k = (hi + lo) 2**(*E), hi in [1, 2).  Each step's product is within
// 2**-103 and each squaring doubles the error so far: below 2 k 2**-103 <= 2**-70 in all.
inline dd_t pow_dd(double b, ulong k, long *E) {
    long be = 0, re = 0;
    dd_t bb = { b, 0.0 };
    bb = dd_unit(bb, &be);
    dd_t r = { 1.0, 0.0 };
    for (;;) {
        if (k & 1UL) { re += be; r = dd_unit(dd_mul(r, bb), &re); }
        k >>= 1;
        if (k == 0UL) break;
        be += be;
        bb = dd_unit(dd_mul(bb, bb), &be);
    }
    *E = re;
    return r;
}
// v 2**E with E clamped to +-400 (v in [1/2, 4]): beyond either way the value of a
// binary32 result is beyond the overflow threshold or below 2**-150, which case 5 decides
inline double scaled(double v, long E) {
    return v * pow2d((int)(E > 400L ? 400L : (E < -400L ? -400L : E)));
}
// pown(x, n) = x**n (n an int, Z_INT: n = 0 the host's): |x|**|n| by pow_dd, its
// reciprocal for n < 0 (the sum hi + lo and the division: two roundings, 2**-52), the
// sign of x where n is odd.  Every rule holds on a zero or NaN x or n = 0: the host's.
inline double ref_pown(uint xb, uint zb, int *kind) {
    int n = (int)zb;
    ulong k = n < 0 ? (ulong)(-(long)n) : (ulong)n;
    long E;
    dd_t p = pow_dd(to_double(xb & 0x7fffffffu), k, &E);
    double v = p.hi + p.lo;
    if (n < 0) { v = 1.0 / v; E = -E; }
    double r = scaled(v, E);
    *kind = K_VALUE;
    return ((xb >> 31) && (k & 1UL)) ? negd(r) : r;
}
// rootn(x, n) = x**(1/n) (n an int, Z_INT): a NaN for x < 0 and n even
// (CL.rootn.negative_base_even); else y0 = 2**((e + log2 m) / |n|) from the log and exp2
// cores (relative error below 2**-45 / |n| + 2**-51), one Newton step for y**k = |x|:
// y1 = y0 (1 - (y0**k / |x| - 1) / k), y0**k by pow_dd (2**-70), the quotient rounded
// once (2**-53 absolute in the correction, /k in y1), Newton's own error (k - 1) d0**2 / 2
// below 2**-70; the reciprocal for n < 0; x's sign (k odd there).
inline double ref_rootn(uint xb, uint zb, int *kind) {
    int n = (int)zb;
    if ((xb >> 31) && !(n & 1)) { *kind = K_NAN; return NAN; }
    ulong k = n < 0 ? (ulong)(-(long)n) : (ulong)n;
    double dk = (double)k;
    int e;
    double lm = log_core(split_log(xb & 0x7fffffffu, &e));
    double y0 = exp2_scaled(((double)e + lm * INV_LN2) / dk, 0.0);   // log2 y <= 150
    // |x| = xm 2**ex, xm in [1, 2): y0**k / |x| = (p.hi + p.lo) / xm 2**(E - ex)
    double ax = to_double(xb & 0x7fffffffu);
    int ex = exponent_of(ax);
    double xm = ax * pow2d(-ex);
    long E;
    dd_t p = pow_dd(y0, k, &E);
    long d = E - (long)ex;                           // -2 .. 1 where y0 is that close
    *kind = K_VALUE;
    if (d < -2L || d > 2L) return NAN;               // never: y0 is far closer (the host's)
    double ph = p.hi * pow2d((int)d), pl = p.lo * pow2d((int)d);
    double q = ((ph - xm) + pl) / xm;                // y0**k / |x| - 1 (ph - xm: Sterbenz)
    double y = y0 - y0 * (q / dk);
    if (n < 0) y = 1.0 / y;
    return (xb >> 31) ? negd(y) : y;
}
// ln m + extra (a small addend to its low part) for m in [sqrt(1/2), sqrt(2)] as a
// double-double: 2 s + (2 sl + tail + extra), s + sl = (m - 1)/(m + 1) within 2**-104 (m - 1
// exact by Sterbenz, m + 1 an exact two-sum, sl from the remainder by fma), the tail 2 s**3
// atanh_poly(s**2) in binary64 (|s| <= 0.172: at most 0.0098 of 2 s, so its roundings and
// its truncation below 2**-60 stay below 2**-57 of ln m)
inline dd_t ln_m_dd(double m, double extra) {
    double num = m - 1.0;
    dd_t den = dd_sum(m, 1.0);
    double s = num / den.hi;
    double sl = (fma(-s, den.hi, num) - s * den.lo) / den.hi;
    double s2 = s * s;
    return dd_fast(2.0 * s, 2.0 * sl + (2.0 * s * s2) * atanh_poly(s2) + extra);
}
// log2 |x| of a finite nonzero binary32 x as a double-double: x = m 2**e (split_log),
// ln m by ln_m_dd, times 1/ln 2 as a double-double, plus e (exact two-sum: |log2 m| <=
// 1/2 <= |e| or e = 0).  Relative error below 2**-56.
inline dd_t log2_dd(uint xb) {
    int e;
    dd_t ln_m = ln_m_dd(split_log(xb & 0x7fffffffu, &e), 0.0);
    dd_t inv_ln2 = { INV_LN2_HI, INV_LN2_LO };
    dd_t l2 = dd_mul(ln_m, inv_ln2);
    double de = (double)e;
    double h = de + l2.hi;
    return dd_fast(h, ((de - h) + l2.hi) + l2.lo);
}
// |x|**y = 2**(y log2 |x|) for finite nonzero binary32 x, y: t = y log2 |x| as a
// double-double (y L.hi exact by fma), beyond +-200 clamped (case 5 decides), else
// 2**rint(t) 2**r, r = (t.hi - rint(t.hi)) + t.lo (the difference exact), by exp2_core.
// Error: |t| 2**-56 (L) + 2**-53 (r's rounding) + exp2_core's: below 2**-49 where the
// result is within the binary32 range (|t| <= 151).
inline double pow_abs(uint xb, uint zb) {
    dd_t L = log2_dd(xb);
    double y = to_double(zb);
    double th = y * L.hi;
    dd_t t = dd_fast(th, fma(y, L.hi, -th) + y * L.lo);
    if (t.hi > 200.0) return pow2d(400);
    if (t.hi < -200.0) return pow2d(-400);
    return exp2_scaled(t.hi, t.lo);
}
// pow(x, y): x = 1 gives 1 exactly (F9.pow.6a); x < 0: a NaN where y is not an integer
// (F9.pow.8), else |x|**y with the sign of x where y is odd (a binary32 y of magnitude
// 2**24 or more is even)
inline double ref_pow(uint xb, uint zb, int *kind) {
    if (xb == 0x3f800000u) { *kind = K_EXACT; return 1.0; }
    double y = to_double(zb);
    int odd = 0;
    if (xb >> 31) {
        double ay = absd(y);
        if (ay < 0x1p24) {
            if (rintd(y) != y) { *kind = K_NAN; return NAN; }
            odd = rintd(y * 0.5) != y * 0.5;
        }
    }
    *kind = K_VALUE;
    double r = pow_abs(xb, zb);
    return odd ? negd(r) : r;
}
// powr(x, y) = exp(y log x) for x >= 0 only: a NaN for x < 0 (CL.powr.negative_base), 1
// exactly at x = 1 (CL.powr.one_base_finite_exponent), else |x|**y
inline double ref_powr(uint xb, uint zb, int *kind) {
    if (xb >> 31) { *kind = K_NAN; return NAN; }
    if (xb == 0x3f800000u) { *kind = K_EXACT; return 1.0; }
    *kind = K_VALUE;
    return pow_abs(xb, zb);
}

// ---- tgamma: Gamma(x) = Gamma(y) / P, y = x + N in [10, 11) (N = 0 for x >= 10), P = x
// (x + 1) ... (x + N - 1) (each factor an exact two-sum, the product in double-double:
// below N 2**-103 <= 2**-97), Gamma(y) by Stirling's series in double-double (dd_add:
// screen_common.cl)
// ln y of a double-double y in [10, 41): y.hi = m 2**e (split_double), ln m by ln_m_dd
// with y.lo / y.hi added (ln(hi + lo) = ln hi + lo/hi within 2**-106), e ln 2 as
// e (LN2_HI + LN2_LO) (LN2_HI of 32 bits: e LN2_HI exact).  Relative error below 2**-56.
inline dd_t ln_dd(dd_t y) {
    int e;
    dd_t ln_m = ln_m_dd(split_double(y.hi, &e), y.lo / y.hi);
    dd_t e_ln2 = dd_fast((double)e * LN2_HI, (double)e * LN2_LO);
    return dd_add(e_ln2, ln_m);
}
// Gamma(y) for a double-double y in [10, 41): ln Gamma(y) = (y - 1/2) ln y - y +
// ln(2 pi)/2 + sum_k B_2k / (2k (2k - 1) y**(2k - 1)), k = 1..8 (the next term below
// 2**-59 at y = 10), the sum in binary64 (at most 1/120, rounding below 2**-59), the rest
// in double-double; then e**L = 2**(L / ln 2) by exp2_core, as pow_abs
inline double gamma_stirling(dd_t y) {
    dd_t a = { y.hi - 0.5, y.lo };                   // exact: y.hi's ULP is below 1/2
    dd_t t = dd_mul(a, ln_dd(y));
    dd_t my = { -y.hi, -y.lo };
    t = dd_add(t, my);
    dd_t half_ln_2pi = { HALF_LN_2PI_HI, HALF_LN_2PI_LO };
    t = dd_add(t, half_ln_2pi);
    double iy = 1.0 / y.hi, iy2 = iy * iy;
    double sp = STIRLING_C8;
    sp = fma(sp, iy2, STIRLING_C7); sp = fma(sp, iy2, STIRLING_C6);
    sp = fma(sp, iy2, STIRLING_C5); sp = fma(sp, iy2, STIRLING_C4);
    sp = fma(sp, iy2, STIRLING_C3); sp = fma(sp, iy2, STIRLING_C2);
    sp = fma(sp, iy2, STIRLING_C1);
    t = dd_fast(t.hi, t.lo + sp * iy);
    dd_t inv_ln2 = { INV_LN2_HI, INV_LN2_LO };
    dd_t u = dd_mul(t, inv_ln2);
    return exp2_scaled(u.hi, u.lo);
}
// tgamma(x): a NaN at a negative integer (F9.tgamma.2; every binary32 of magnitude 2**24
// or more is an integer); beyond 40 (Gamma(40) > 2**152) 2**400 and below -50 (|Gamma| <
// 2**-196 there, the binary32 numbers nearest a negative integer included) 2**-400 with
// Gamma's sign, (-1)**ceil(-x), both for case 5; else Gamma(x + N) / P, the quotient of
// the two double-doubles in binary64 (two roundings and 2**-104)
inline double ref_tgamma(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_VALUE;
    if (x < 0.0) {
        if (x <= -0x1p24 || rintd(x) == x) { *kind = K_NAN; return NAN; }
        if (x < -50.0) {
            double c = rintd(-x + 0.5);               // ceil(-x): -x is not an integer
            int odd = rintd(c * 0.5) != c * 0.5;
            return odd ? -0x1p-400 : 0x1p-400;
        }
    }
    if (x > 40.0) return 0x1p400;
    dd_t P = { 1.0, 0.0 };
    dd_t y = { x, 0.0 };
    if (x < 10.0) {
        double n = rintd(10.0 - x);
        if (x + n < 10.0) n += 1.0;                   // y = x + n in [10, 11)
        for (double k = 0.0; k < n; k += 1.0) P = dd_mul(P, dd_sum(x, k));
        y = dd_sum(x, n);
    }
    double g = gamma_stirling(y);
    return (g / P.hi) * (1.0 - P.lo / P.hi);
}

// ---- Built-ins of a second output (OUT2(x, z, y2): whether the second output y2, a
// binary32 or int32 pattern, is right; the first is judged by REF as always)
// frexp(x) = m 2**e, m in [1/2, 1) with x's sign, e an int (C99 7.12.6.4): from the fields
// (a subnormal normalized), exact
inline int frexp_exp(uint xb) {
    int ex = (int)((xb >> 23) & 0xffu);
    if (ex == 0) return -125 - ((int)clz(xb & 0x7fffffu) - 8);   // subnormal: its leading 1
    return ex - 126;
}
inline double ref_frexp(uint xb, int *kind) {
    *kind = K_EXACT;
    return to_double(xb) * pow2d(-frexp_exp(xb));
}
inline int out2_frexp(uint xb, uint zb, uint y2b) { return (int)y2b == frexp_exp(xb); }
// modf(x): the fraction x - trunc(x) with x's sign (a zero of x's sign for an integer x:
// F9.modf.1), trunc(x) in iptr (CL.modf.as_though_trunc); both exact
inline double ref_modf(uint xb, int *kind) {
    double f = absd(to_double(xb) - to_double(trunc_bits(xb)));
    *kind = K_EXACT;
    return (xb >> 31) ? negd(f) : f;
}
inline int out2_modf(uint xb, uint zb, uint y2b) { return y2b == trunc_bits(xb); }
// fract(x) = fmin(x - floor(x), 0x1.fffffep-1) rounded to nearest, floor(x) in iptr
// (OpenCL C 3.0 §6.15.2): x - floor(x) is exact in binary64 but where |x| < 2**-30 and
// x < 0, whose 1 - |x| lies within 2**-30 of 1, far from any binary32 tie (those of
// [1/2, 1) are odd multiples of 2**-25): the conversion to binary32 then rounds it as
// the exact value would be, to 1, which the fmin caps
inline double ref_fract(uint xb, int *kind) {
    int k;
    double v = to_double(xb) - ref_floor(xb, &k);
    float f = (float)v;
    *kind = K_EXACT;
    return (double)(f < 0x1.fffffep-1f ? f : 0x1.fffffep-1f);
}
inline int out2_fract(uint xb, uint zb, uint y2b) {
    int k;
    return y2b == as_uint((float)ref_floor(xb, &k));
}
// remquo(x, z): remainder's result, and in quo a value of the sign of x / z whose
// magnitude is congruent modulo 8 to that of the rounded quotient n (C99 7.12.10.3; 0
// passes where n is 0 modulo 8), as the checker judges (oracle.entries.Congruent)
inline double ref_remquo(uint xb, uint zb, int *kind) { return ref_remainder(xb, zb, kind); }
inline int out2_remquo(uint xb, uint zb, uint y2b) {
    int n8;
    remainder_n8(xb, zb, &n8);
    int g = (int)y2b;
    if (g == 0) return n8 == 0;
    if ((g < 0) != (int)((xb ^ zb) >> 31)) return 0;
    long ag = g < 0 ? -(long)g : (long)g;
    return (int)(ag & 7L) == n8;
}

// step(edge, x) = 0.0 where x < edge, else 1.0 (the first argument is edge)
inline double ref_step(uint xb, uint zb, int *kind) {
    *kind = K_EXACT;
    return to_double(zb) < to_double(xb) ? 0.0 : 1.0;
}

// Three arguments (THREE_ARGS; x, z, w are the first, second and third)
// fma(x, z, w) = x z + w rounded once: x z is exact in binary64 (48 bits; at least
// 2**-298 in magnitude, a normal binary64 number) and so the sum is f rounded once
// (relative 2**-53; an exact zero sum is 0, the host's), judged at 0.5 ULP (ROUNDED_ONCE)
inline double ref_fma(uint xb, uint zb, uint wb, int *kind) {
    *kind = K_VALUE;
    return to_double(xb) * to_double(zb) + to_double(wb);
}
// clamp(x, minval, maxval) = fmin(fmax(x, minval), maxval), exactly; undefined where
// minval > maxval (OpenCL C 3.0 §6.15.4: "Results are undefined if minval > maxval")
inline double ref_clamp(uint xb, uint zb, uint wb, int *kind) {
    double x = to_double(xb), lo = to_double(zb), hi = to_double(wb);
    if (lo > hi) { *kind = K_ANY; return 0.0; }
    *kind = K_EXACT;
    double v = x < lo ? lo : x;                    // equal: the same (nonzero) pattern
    return hi < v ? hi : v;
}

// lgamma_r(x, signp): its result as lgamma's (ref_lgamma); signp (an int) is 0 at a pole
// (CL.lgamma_r.pole_sign: "returns 0 in signp if x is zero or a negative integer"; zeros
// are the host's, as every special argument of a built-in of two outputs), and
// implementation-defined elsewhere with lgamma's accuracy: any int passes
inline int out2_lgamma_r(uint xb, uint zb, uint y2b) {
    double x = to_double(xb);
    return !((xb >> 31) && rintd(x) == x) || y2b == 0u;
}
// Absolute tolerances (ABSOLUTE, binary32; OpenCL SPIR-V Env Table 1: mix "absolute error
// tolerance of 1e-3", smoothstep "of 1e-5"; the defining formulas of OpenCL C 3.0 §6.15.4).
// Each reference has an error bound of its own (err_*: |r - f| <= REF_ERR, absolute), and
// the screen applies it (within_tolerance) instead of REL.
// mix(x, y, a) = x + (y - x) a, in binary64 (x, z, w: x, y, a): |r - f| <= 2**-53 |x + p|
// + |y - x| |a| (2**-52 + 2**-106) for a in [0, 1], p = fl(fl(y - x) a), which
// 2**-52 (|r| + 2 |fl(y - x)|) (1 + 2**-50) bounds (err_mix); undefined for a outside
// [0, 1] (K_ANY; a NaN a is an argument the host judges)
inline double ref_mix(uint xb, uint zb, uint wb, int *kind) {
    double x = to_double(xb), y = to_double(zb), a = to_double(wb);
    if (a < 0.0 || a > 1.0) { *kind = K_ANY; return 0.0; }
    *kind = K_VALUE;
    return x + (y - x) * a;
}
inline double err_mix(uint xb, uint zb, uint wb, double r) {
    return 0x1p-52 * (absd(r) + 2.0 * absd(to_double(zb) - to_double(xb))) * 0x1.0000000000004p0;
}
// smoothstep(edge0, edge1, x): t = clamp((x - edge0) / (edge1 - edge0), 0, 1), t t (3 - 2 t)
// (x, z, w: edge0, edge1, x).  The quotient's sign is exact (a binary64 difference of two
// binary32 numbers is zero only where they are equal), so t = 0 exactly where x <= edge0
// (f = +0, K_EXACT); t = 1 where the quotient rounds to 1 or more, f within 3 (3.02
// 2**-53)**2 of 1 (K_EXACT 1.0: its pattern is f rounded); else t within 3.02 2**-53
// relatively, and t s'(t) / s(t) = 6 (1 - t) / (3 - 2 t) <= 2 with three roundings of the
// polynomial: |r - f| <= 9.1 2**-53 |r| < 2**-49 |r| (err_smoothstep); undefined where
// edge0 >= edge1 (K_ANY)
inline double ref_smoothstep(uint xb, uint zb, uint wb, int *kind) {
    double e0 = to_double(xb), e1 = to_double(zb), x = to_double(wb);
    if (!(e0 < e1)) { *kind = K_ANY; return 0.0; }
    double t = (x - e0) / (e1 - e0);
    *kind = K_EXACT;
    if (t <= 0.0) return 0.0;
    if (t >= 1.0) return 1.0;
    *kind = K_VALUE;
    return t * t * (3.0 - 2.0 * t);
}
inline double err_smoothstep(uint xb, uint zb, uint wb, double r) { return absd(r) * 0x1p-49; }

// Built-ins of implementation-defined accuracy (RULES_ONLY): every result passes where no
// rule prescribes one (K_ANY, no error measured, as the checker judges and measures none
// there).  mix and smoothstep in binary16 (and binary64: ref64_unjudged3) have no rule at
// finite nonzero arguments (OpenCL SPIR-V Env Table 1: "Implementation-defined").
inline double ref_unjudged3(uint xb, uint zb, uint wb, int *kind) {
    *kind = K_ANY;
    return 0.0;
}
// nan(nancode): "a quiet NaN" whatever nancode (F9.nan.1; its payload and sign are free):
// the argument's uint pattern is read as x, and a zero, infinite or NaN pattern gets the
// same answer (special_answers: ANS_ANY_NAN), but a NaN pattern, which is the host's
inline double ref_nan(uint xb, int *kind) {
    *kind = K_NAN;
    return NAN;
}
// lgamma(x) of finite nonzero x: +0 at 1 and 2 (F9.lgamma.1, .2), +inf at a negative
// integer (F9.lgamma.3; every binary32 of magnitude 2**23 or more is an integer); its
// accuracy elsewhere is implementation-defined: any result passes (K_ANY)
inline double ref_lgamma(uint xb, int *kind) {
    double x = to_double(xb);
    *kind = K_EXACT;
    if (xb == 0x3f800000u || xb == 0x40000000u) return 0.0;
    if ((xb >> 31) && rintd(x) == x) return INFINITY;
    *kind = K_ANY;
    return 0.0;
}

// mad's unfused value fl(x z) + w (the sum then rounded once in binary64): x z exact in
// binary64, rounded to binary32 by the conversion (round to nearest even) only where it
// is a normal binary32 number (a subnormal product, which a flushing conversion could
// zero, and one that rounds to an infinity: a NaN, the host's)
inline double unfused_mad(uint xb, uint zb, uint wb) {
    double p = to_double(xb) * to_double(zb);
    double ap = absd(p);
    if (!(ap >= 0x1p-126) || !(ap < 0x1.ffffffp127)) return as_double(0x7ff8000000000000UL);
    return (double)(float)p + to_double(wb);
}

// ---- The screen of binary32 results (binary16's, which takes the references above:
// device_screen16.cl after this file, BINARY16 defined)
#ifndef BINARY16
// (REF_OF, SECOND, THIRD, OUT2_OF: screen_common.cl)

// Whether the finite nonzero binary32 result y is provably within the bound of f, given
// its reference r (|r - f| <= REL |f|; err: the error in ULPs, d / u_lo): "Why a passed
// input is right", case (1) of docs/device_screen.md.  A zero, infinite or NaN y, or one
// of the other sign than r, is the host's; a NaN r fails every test.
inline int within_bound(double r, uint yb, float *err) {
    if ((yb & 0x7fffffffu) == 0u || ((yb >> 23) & 0xffu) == 0xffu) return 0;
    if ((yb >> 31) != (uint)(as_ulong(r) >> 63)) return 0;
    double ar = absd(r);
    double lo = ar * REL_LO;                         // |r| (1 - 4 REL)
    if (!(lo > 0.0) || !(ar * REL_HI < 0x1p128)) return 0;
    // u_lo = P 2**-23 <= ulp(f): P = 2**floor(log2 lo), or 2**-126 below the normal range,
    // where every ULP is the subnormals' spacing 2**-149
    double P = lo >= 0x1p-126 ? as_double(as_ulong(lo) & 0x7ff0000000000000UL) : 0x1p-126;
    double d = absd(to_double(yb) - r);
    if (!(d < P * C_PASS)) return 0;
    *err = (float)(d / (P * 0x1p-23));               // d / u_lo
    return binade_known(ar * REL_HI, P, *err, TIE);   // |f| <= |r| REL_HI
}

#ifdef ABS_TOL
// A result of an absolute tolerance (ABSOLUTE): passed where y is a finite nonzero number of
// r's sign, r is within 2**-46 of f relatively (e <= |r| 2**-46, e the reference's bound:
// the ULP estimate below and the 0.5-ULP test hold as for within_bound), and either
// |y - f| <= d (1 + 2**-52) + e < ABS_PASS (d = |y - r| rounded once; ABS_PASS the
// tolerance less 2**-50 of it) or y is provably the binary32 number nearest f (C_PASS: 0.5
// ULP less the margin -- "correctly rounded always conforms", checker._measure); err: its
// error in ULPs (d / u_lo), binned as the host measures it.  Zeros, other signs, and the
// rest: the host's.
inline int within_tolerance(double r, double e, uint yb, float *err) {
    if ((yb & 0x7fffffffu) == 0u || ((yb >> 23) & 0xffu) == 0xffu) return 0;
    if ((yb >> 31) != (uint)(as_ulong(r) >> 63)) return 0;
    double ar = absd(r);
    if (!(e <= ar * 0x1p-46)) return 0;
    double lo = ar * REL_LO;
    if (!(lo > 0.0) || !(ar * REL_HI < 0x1p128)) return 0;
    double P = lo >= 0x1p-126 ? as_double(as_ulong(lo) & 0x7ff0000000000000UL) : 0x1p-126;
    double d = absd(to_double(yb) - r);
    if (!(d * 0x1.0000000000001p0 + e < ABS_PASS) && !(d < P * C_PASS)) return 0;
    *err = (float)(d / (P * 0x1p-23));
    return binade_known(ar * REL_HI, P, *err, TIE);   // |f| <= |r| REL_HI
}
#endif

// The verdict on one input given f's reference r of kind ``kind``: x, z (the second
// argument, TWO_ARGS) and y are binary32 patterns, x (and z) finite and nonzero (normal
// or subnormal; x, z, w for mad's unfused value).  Returns 1 where y is
// proven within the bound (err: its error in ULPs, d / u_lo) or is f's prescribed result
// bit for bit, or f is beyond the overflow threshold (y the infinity of its sign) or below
// half the smallest subnormal (y a zero) (err 0); with AGGREGATE, 2 + c
// where y is a zero or an infinity other than the result rule c prescribes (a failure of
// rule c, counted on the device); 0 where the host must judge.
inline int judge(double r, int kind, uint xb, uint zb, uint wb, uint yb, float *err) {
    *err = 0.0f;
    if (kind == K_ANY) return 1;
    if ((kind & 15) == K_EXACT) {
#ifdef RESULT_INT
        if (yb == (uint)(int)r) return 1;
#else
        if (yb == as_uint((float)r)) return 1;
#endif
#ifdef AGGREGATE
        uint m = yb & 0x7fffffffu;
        if (m == 0u || m == 0x7f800000u) return 2 + (kind >> 4);
#endif
        return 0;
    }
    if (kind == K_OVER) return yb == (as_ulong(r) >> 63 ? 0xff800000u : 0x7f800000u);
    if (kind == K_UNDER) return (yb & 0x7fffffffu) == 0u;
    if (kind == K_NAN) return is_quiet_nan(yb);
#ifdef ABS_TOL
    return within_tolerance(r, REF_ERR(xb, zb, wb, r), yb, err);
#endif
    // case 5 for every reference, between its own thresholds and the true ones: a finite
    // r whose f is provably beyond the round-to-nearest overflow threshold 2**128 - 2**103
    // or provably below 2**-150 in magnitude: round to nearest gives the infinity or the
    // zero of r's sign (exp for 88.7229 < x <= 89, which ref_exp leaves to K_VALUE)
    double a5 = absd(r);
    if ((as_ulong(a5) >> 52) != 0x7ffUL) {
        uint neg = (uint)(as_ulong(r) >> 63);
        if (a5 * REL_LO > 0x1.ffffff8p127) return yb == (neg ? 0xff800000u : 0x7f800000u);
        if (a5 > 0.0 && a5 * REL_HI < 0x1p-150) return yb == (neg ? 0x80000000u : 0u);
    }
#ifdef HALF_FLUSH
    // half_*: a result below the smallest normal may come back as a zero of either sign
    // ("a minimum of 10 bits of accuracy", OpenCL 2.1 Env §8.5.1; the checker measures 0
    // ULP there): passed where |f| is provably below 2**-126
    if ((yb & 0x7fffffffu) == 0u) {
        double ar = absd(r);
        return ar > 0.0 && ar * REL_HI < 0x1p-126;
    }
#endif
#ifdef MAD
    // mad: the unfused result, fl(fl(x z) + w), passes too (OpenCL's table: "either a
    // correctly rounded fma, or a multiply followed by an add, both of which are correctly
    // rounded"), no error measured (the checker's choices: none either)
    return within_bound(r, yb, err) || within_bound(unfused_mad(xb, zb, wb), yb, err);
#else
    return within_bound(r, yb, err);
#endif
}
// screen_one: judge's verdict on REF's reference; judge is the same for a second rounded
// output (sincos's cosval: REF2)
inline int screen_one(uint xb, uint zb, uint wb, uint yb, float *err) {
    int kind;
    double r = REF_OF(xb, zb, wb, &kind);
    return judge(r, kind, xb, zb, wb, yb, err);
}
#ifdef REF2
// both outputs of a built-in of two rounded outputs (sincos: sin and cos of x) within the
// bound, the larger error binned (the host's screen does the same, verdict.screening)
inline int screen_two(uint xb, uint yb, uint y2b, float *err) {
    int k2;
    float e2;
    double r2 = REF2(xb, &k2);
    int v = screen_one(xb, 0u, 0u, yb, err);
    if (v != 1 || judge(r2, k2, xb, 0u, 0u, y2b, &e2) != 1) return 0;
    *err = fmax(*err, e2);
    return 1;
}
#endif

// (is_special, not_finite_nonzero, prescribed, screen_special: screen_common.cl)

// The screen of any input: screen_special's or screen_one's verdict; *ruled: 1 where a
// rule decided it (no error to bin: the host's checker bins none of those either)
inline int screen_any(uint xb, uint zb, uint wb, uint yb, uint y2b, float *err,
                      int *ruled) {
#ifdef TWO_ARGS
#ifdef Z_INT
    *ruled = not_finite_nonzero(xb) || zb == 0u;      // an int k: k = 0 the host's
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
    *ruled = 1;                                    // no error statistics (see ref_fabs)
#endif
#ifdef UNDEFINED_BEYOND
    // f's result is undefined for finite |x| > UNDEFINED_BEYOND (half_sin: 2**16): any y
    // passes and no error is measured, as the checker judges and measures none there
    if (absd(to_double(xb)) > UNDEFINED_BEYOND) { *ruled = 1; *err = 0.0f; return 1; }
#endif
#if defined(OUT2)
    int v = screen_one(xb, zb, wb, yb, err);
    return v == 1 && !OUT2(xb, zb, y2b) ? 0 : v;
#elif defined(REF2)
    return screen_two(xb, yb, y2b, err);
#else
    return screen_one(xb, zb, wb, yb, err);
#endif
}

// The screen of one chunk of a single-argument binary32 sweep (fuzzfarm.orchestrate.sweep's
// numbering: input g is the pattern (g >> 1) with sign bit (g & 1)), or, with drawn != 0,
// of drawn inputs: input e is xbits[e] (a `run` unit; start unused).  Each work item judges
// 32 consecutive inputs: bit j of pass[w] is set when input 32 w + j passed screen_any,
// bit j of agg[w] when the device counted its failure (under rule c: bit j of agg_c0[w]
// and agg_c1[w] are c's two bits; agg_count[2 c + s] counts them by the sign s of x);
// wmax[w] is the largest error (ULPs) of its passed inputs (-1: none) and wpos[w] its
// position; hist counts the passed inputs by exponent band of x and by error bin
// (log-spaced, HIST_BINS_PER_OCTAVE per octave from 2**HIST_LOG2_LO ULP; bin 0 below that
// and exact results, the top bin open above).
__kernel void fuzzfarm_screen(__global const uint *xbits, uint drawn,
                              __global const uint *ybits, ulong start, uint count,
                              __global uint *pass, __global float *wmax,
                              __global uchar *wpos, __global uint *hist,
                              __global uint *agg, __global uint *agg_count,
                              __global uint *agg_c0, __global uint *agg_c1,
                              __global const uint *zbits, __global const uint *wbits,
                              __global const uint *y2bits)
{
    __local uint lh[NROWS * NBINS];
    __local uint la[2 * NCLASSES];
    for (uint i = get_local_id(0); i < NROWS * NBINS; i += get_local_size(0)) lh[i] = 0u;
    if (get_local_id(0) < 2 * NCLASSES) la[get_local_id(0)] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint w = get_global_id(0);
    uint word = 0u, aword = 0u, c0 = 0u, c1 = 0u, bpos = 0u;
    float best = -1.0f;
    for (uint j = 0; j < 32u; j++) {
        uint e = w * 32u + j;
        if (e >= count) break;
        ulong g = start + (ulong)e;
        uint xb = drawn ? xbits[e] : (uint)(g >> 1) | ((uint)(g & 1UL) << 31);
        float err;
        int ruled;
        int v = screen_any(xb, SECOND(zbits, e), THIRD(wbits, e), ybits[e],
                           OUT2_OF(y2bits, e), &err, &ruled);
        if (v == 0) continue;
        if (v >= 2) {
            aword |= 1u << j;
            c0 |= (uint)((v - 2) & 1) << j;
            c1 |= (uint)(((v - 2) >> 1) & 1) << j;
            atomic_inc(&la[(v - 2) * 2 + (int)(xb >> 31)]);
            continue;
        }
        word |= 1u << j;
        if (ruled) continue;
        if (err > best) { best = err; bpos = j; }
        uint bin = error_bin(err);
        uint band = ((xb >> 23) & 0xffu) / (256u / NBANDS);
        if ((xb & 0x7f800000u) == 0u && (xb & 0x7fffffu) != 0u)   // zeros: band 0
            band = ROW_SUBNORMAL;
#if NEAR_ZERO_KIND || NEAR_POLE_KIND
        if ((xb & 0x7fffffffu) < 0x4a800000u) {       // |x| < 2**22
            double xd = to_double(xb);
            if (near_point(xd, NEAR_ZERO_KIND)) band = ROW_NEAR_ZERO;
            if (near_point(xd, NEAR_POLE_KIND)) band = ROW_NEAR_POLE;
        }
#endif
        atomic_inc(&lh[band * NBINS + bin]);
    }
    pass[w] = word;
    agg[w] = aword;
    agg_c0[w] = c0;
    agg_c1[w] = c1;
    wmax[w] = best;
    wpos[w] = (uchar)bpos;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_local_id(0); i < NROWS * NBINS; i += get_local_size(0))
        if (lh[i]) atomic_add(&hist[i], lh[i]);
    if (get_local_id(0) < 2 * NCLASSES && la[get_local_id(0)])
        atomic_add(&agg_count[get_local_id(0)], la[get_local_id(0)]);
}

// The screen of arbitrary pairs, for the tests: screen_pairs.cl's, over this verdict
#define SCREEN_ANY screen_any

// The references themselves, for the tests: r[i] and kind[i] of REF at binary32 xbits[i]
// (and zbits[i], TWO_ARGS; wbits[i], THREE_ARGS).
__kernel void fuzzfarm_reference(__global const uint *xbits, __global double *r,
                                 __global int *kind, __global const uint *zbits,
                                 __global const uint *wbits)
{
    uint i = get_global_id(0);
    int k;
    r[i] = REF_OF(xbits[i], SECOND(zbits, i), THIRD(wbits, i), &k);
    kind[i] = k;
}
#endif  // BINARY16
