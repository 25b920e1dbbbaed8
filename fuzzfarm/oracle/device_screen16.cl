// fuzzfarm's device screen for binary16 results (fuzzfarm/oracle/device_screen.py; the
// argument in docs/device_screen.md, "Binary16 results").  It follows device_screen.cl
// (built with BINARY16: its references, not its binary32 kernels): every binary16 number
// is a binary32 number, so each argument is widened to its binary32 pattern exactly and
// the binary32 reference judges it (|r - f| <= REL |f|, REL = 2**-45: far below a
// binary16 ULP); the result is judged in binary16's ULPs.  The host prepends its defines
// (REF, C_PASS16, TIE, REL_LO, REL_HI, the answers ANS_* as 16-bit patterns, PATTERN ushort,
// ZPAT, YPAT, Y2PAT: uint where the column holds ints, else ushort ...).  No floating-point
// operation of binary16 is used: the screen needs cl_khr_fp64, not cl_khr_fp16.

#define ABS16 0x7fffu
#define SIGN16 0x8000u
#define INF16 0x7c00u

// (half_value, a binary16 pattern's exact value: binary64_ops.cl)
// the binary32 pattern of a binary16 pattern (exact: every binary16 number is a binary32
// one; infinities and NaNs, which the references are never asked about, as themselves)
inline uint half_float_bits(uint h) {
    if ((h & INF16) == INF16)
        return ((h & SIGN16) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);
    return as_uint((float)half_value(h));
}
// r rounded to binary16, to nearest with ties to even, as a pattern (exact where r is a
// binary16 number: the exact built-ins' results): from r's binade by one rintd of the
// scaled value (exact: a binary64 product by a power of two), a carry into the exponent
// where it rounds up to the next binade; 65520 and beyond the infinity; NaN a quiet NaN
inline uint half_bits(double r) {
    uint sign = (uint)(as_ulong(r) >> 48) & SIGN16;
    double a = absd(r);
    if (!(a == a)) return sign | 0x7e00u;
    if (a >= 65520.0) return sign | INF16;
    if (a < 0x1p-14) return sign | (uint)rintd(a * 0x1p24);          // 0 .. 0x400
    int e = exponent_of(a);
    double q = rintd(a * pow2d(10 - e));                               // 1024 .. 2048
    return sign | ((((uint)(e + 15)) << 10) + (uint)q - 1024u);
}

// fract(x) = fmin(x - floor(x), 0x1.ffcp-1) in binary16 (OpenCL C 3.0 §6.15.2): x - floor(x)
// exact in binary64 for a binary16 x (at most 40 bits apart), rounded once to binary16 (to
// 1 where -2**-12 <= x < 0, which the fmin caps); floor(x) in iptr as binary32's
inline double ref16_fract(uint xb, int *kind) {
    int k;
    double v = to_double(xb) - ref_floor(xb, &k);
    double h = half_value(half_bits(v));
    *kind = K_EXACT;
    return h < 0x1.ffcp-1 ? h : 0x1.ffcp-1;
}
// nextafter(x, z): the next binary16 number after x toward z (x, z finite and nonzero,
// binary32 patterns of binary16 numbers): the pattern one up or down, as binary32's
inline double ref16_nextafter(uint xb, uint zb, int *kind) {
    double x = to_double(xb), z = to_double(zb);
    *kind = K_EXACT;
    if (x == z) return z;
    uint h = half_bits(x);
    int up = (x < z) == !(xb >> 31);               // the magnitude grows
    uint n = up ? h + 1u : h - 1u;
    return (n & ABS16) == INF16 ? copysignd(INFINITY, x) : half_value(n);
}

// mad's unfused value in binary16: x z (exact in binary64: 22 bits) rounded to binary16
// (half_bits) only where it is a normal binary16 number below the overflow threshold (a
// subnormal product, which a flushing device may zero, and one that rounds to an
// infinity: a NaN, the host's), plus w (exact in binary64: both are multiples of 2**-48
// below 2**17) -- the sum then judged at the bound as the fused value is
inline double unfused_mad16(uint xb, uint zb, uint wb) {
    double p = to_double(xb) * to_double(zb);
    double ap = absd(p);
    if (!(ap >= 0x1p-14) || !(ap < 65520.0)) return as_double(0x7ff8000000000000UL);
    return half_value(half_bits(p)) + to_double(wb);
}

// Whether the finite nonzero binary16 result y is provably within the bound of f, given its
// reference r (binary32's case (1) with binary16's constants: P = 2**floor(log2 lo), or
// 2**-14 below the normal range; u_lo = P 2**-10 <= ulp(f); C_PASS16 = (bound - margin)
// 2**-10; err: d / u_lo).  A zero, infinite or NaN y, one of the other sign than r, or |r|
// at 2**16 or beyond (the host's), and a NaN r, fail.
inline int within_bound16(double r, uint yb, float *err) {
    if ((yb & ABS16) == 0u || (yb & INF16) == INF16) return 0;
    if ((yb >> 15) != (uint)(as_ulong(r) >> 63)) return 0;
    double ar = absd(r);
    double lo = ar * REL_LO;
    if (!(lo > 0.0) || !(ar * REL_HI < 0x1p16)) return 0;
    double P = lo >= 0x1p-14 ? as_double(as_ulong(lo) & 0x7ff0000000000000UL) : 0x1p-14;
    double d = absd(half_value(yb) - r);
    if (!(d < P * C_PASS16)) return 0;
    *err = (float)(d / (P * 0x1p-10));
    return binade_known(ar * REL_HI, P, *err, TIE);   // |f| <= |r| REL_HI
}

// The screen of one input of finite nonzero arguments (xb, zb, wb binary32 patterns; yb
// the binary16 result, or an int with RESULT_INT): binary32's screen_one with binary16's
// thresholds -- beyond the round-to-nearest overflow threshold 65520 the infinity of r's
// sign, below 2**-25 the zero of r's sign (case 5); K_OVER and K_UNDER (beyond binary32's
// thresholds, so beyond binary16's) the infinity, a zero.
inline int judge16(double r, int kind, uint xb, uint zb, uint wb, uint yb, float *err) {
    *err = 0.0f;
    if (kind == K_ANY) return 1;
    if ((kind & 15) == K_EXACT) {
#ifdef RESULT_INT
        return yb == (uint)(int)r;
#else
        return yb == half_bits(r);
#endif
    }
    if (kind == K_OVER) return yb == ((as_ulong(r) >> 63) ? (SIGN16 | INF16) : INF16);
    if (kind == K_UNDER) return (yb & ABS16) == 0u;
    if (kind == K_NAN) return is_quiet_nan(yb);
    double a5 = absd(r);
    if ((as_ulong(a5) >> 52) != 0x7ffUL) {
        uint neg = (uint)(as_ulong(r) >> 63);
        if (a5 * REL_LO > 65520.0) return yb == (neg ? (SIGN16 | INF16) : INF16);
        if (a5 > 0.0 && a5 * REL_HI < 0x1p-25) return yb == (neg ? SIGN16 : 0u);
    }
#ifdef MAD
    // mad: the unfused result passes too (OpenCL's table), no error measured
    return within_bound16(r, yb, err) || within_bound16(unfused_mad16(xb, zb, wb), yb, err);
#else
    return within_bound16(r, yb, err);
#endif
}
inline int screen_one16(uint xb, uint zb, uint wb, uint yb, float *err) {
    int kind;
    double r = REF_OF(xb, zb, wb, &kind);
    return judge16(r, kind, xb, zb, wb, yb, err);
}
#ifdef REF2
// both rounded outputs (sincos) within the bound, the larger error binned
inline int screen_two16(uint xb, uint yb, uint y2, float *err) {
    int k2;
    float e2;
    double r2 = REF2(xb, &k2);
    if (screen_one16(xb, 0u, 0u, yb, err) != 1
        || judge16(r2, k2, xb, 0u, 0u, y2, &e2) != 1) return 0;
    *err = fmax(*err, e2);
    return 1;
}
#endif

// (is_special, not_finite_nonzero, prescribed, screen_special: screen_common.cl)

// The screen of any input (xh, zh, wh: the arguments' binary16 patterns, zh an int with
// Z_INT; yb the result, y2 the second output: a binary16 pattern or an int); *ruled: 1
// where no error is binned.
inline int screen_any16(uint xh, uint zh, uint wh, uint yb, uint y2, float *err,
                        int *ruled) {
#ifdef TWO_ARGS
#ifdef Z_INT
    *ruled = not_finite_nonzero(xh) || zh == 0u;
    uint zb = zh;
#else
    *ruled = not_finite_nonzero(xh) || not_finite_nonzero(zh);
    uint zb = half_float_bits(zh);
#endif
#ifdef THREE_ARGS
    *ruled = *ruled || not_finite_nonzero(wh);
#endif
    if (*ruled) { *err = 0.0f; return 0; }
#else
    uint zb = 0u;
    *ruled = is_special(xh);
#if defined(OUT2) || defined(REF2)
    if (*ruled) { *err = 0.0f; return 0; }
#endif
    if (*ruled) { *err = 0.0f; return screen_special(xh, yb); }
#endif
#if defined(BIT_EXACT) || defined(MAD)
    *ruled = 1;
#endif
    uint xb = half_float_bits(xh), wb = half_float_bits(wh);
#ifdef OUT2
    int v = screen_one16(xb, zb, wb, yb, err);
#ifdef OUT2_INT
    uint y2b = y2;                                 // frexp's exponent, remquo's quo
#else
    uint y2b = half_float_bits(y2);                // modf's trunc, fract's floor
#endif
    return v && OUT2(xb, zb, y2b);
#elif defined(REF2)
    return screen_two16(xb, yb, y2, err);
#else
    return screen_one16(xb, zb, wb, yb, err);
#endif
}

// The drawn unit's screen and the pairs' (screen_drawn.cl, screen_pairs.cl after this file): binary16's
// verdict and the value of its x
#define SCREEN_ANY screen_any16
#define X_VALUE(x) half_value(x)

// The references themselves, for the tests: r[i] and kind[i] of REF at binary16 xbits[i]
// (and zbits[i], TWO_ARGS -- an int with Z_INT; wbits[i], THREE_ARGS), widened.
__kernel void fuzzfarm_reference(__global const ushort *xbits, __global double *r,
                                 __global int *kind, __global const ZPAT *zbits,
                                 __global const ushort *wbits)
{
    uint i = get_global_id(0);
    int k;
#ifdef Z_INT
    uint zb = SECOND(zbits, i);
#else
    uint zb = half_float_bits(SECOND(zbits, i));
#endif
    r[i] = REF_OF(half_float_bits(xbits[i]), zb, half_float_bits(THIRD(wbits, i)), &k);
    kind[i] = k;
}
