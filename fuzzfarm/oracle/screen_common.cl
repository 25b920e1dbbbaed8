// fuzzfarm's device screen, the part every precision shares (fuzzfarm/oracle/device_screen.py
// puts it between the host's defines with binary64_ops.cl and the references of
// device_screen.cl (binary32 results) or device_screen64.cl (binary64 results); the
// argument in docs/device_screen.md): what a reference's kind means, the answers at zeros,
// infinities and NaNs, long division of significands, the error histogram's bins and the
// near rows (the gathering of a drawn unit's marked inputs is screen_gather.cl, a program of
// its own).  PATTERN is the unsigned
// integer type of the result's and arguments' bit patterns (uint for binary32, ulong for
// binary64).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

// What a reference says about f(x) (the kind written next to the value r):
#define K_VALUE 0      // |r - f| <= REL |f|; r = 0 or NaN: undecided
#define K_EXACT 1      // f's prescribed result is r exactly, bit for bit (its sign too);
                       // kind >> 4 is the rule (device_references.EXACT_RULES[name][kind >> 4])
#define K_OVER 2       // f is beyond the round-to-nearest overflow threshold of the result's
                       // format, of r's sign
#define K_UNDER 3      // 0 < |f| < half the smallest subnormal (round to nearest gives a zero)
#define K_NAN 4        // x is outside f's domain: a rule prescribes a NaN (a quiet one passes)
#define K_ANY 5        // f is undefined at these arguments (clamp with minval > maxval):
                       // any result passes and no error is measured, as the checker judges
                       // none there

// REF_OF(x, z, w, k): the reference at the arguments x (and z, TWO_ARGS; and w,
// THREE_ARGS); SECOND(zbits, i), THIRD(wbits, i): the second and third argument of input
// i (0, unread, for a built-in of fewer).  In binary64 a column of ints (an int argument,
// result or second output) is read through its own type, ZPAT, YPAT, Y2PAT (uint).
#if defined(THREE_ARGS)
#define REF_OF(x, z, w, k) REF(x, z, w, k)
#elif defined(TWO_ARGS)
#define REF_OF(x, z, w, k) REF(x, z, k)
#else
#define REF_OF(x, z, w, k) REF(x, k)
#endif
#ifdef TWO_ARGS
#define SECOND(zbits, i) ((zbits)[i])
#else
#define SECOND(zbits, i) ((PATTERN)0)
#endif
#ifdef THREE_ARGS
#define THIRD(wbits, i) ((wbits)[i])
#else
#define THIRD(wbits, i) ((PATTERN)0)
#endif
// OUT2_OF(y2bits, i): the second output of input i (OUT2, REF2: a built-in of two outputs)
#if defined(OUT2) || defined(REF2)
#define OUT2_OF(y2bits, i) ((y2bits)[i])
#else
#define OUT2_OF(y2bits, i) ((PATTERN)0)
#endif

// Zeros, infinities and NaNs of the result's format (the host defines WORD, the unsigned
// type the patterns are compared in -- uint for binary16 and binary32, ulong for binary64
// --, and ABS_BITS, INF_BITS, QUIET_BITS, SIGN_SHIFT of the format).  Where x is a zero,
// an infinity or a NaN the screen passes what the catalogue prescribes, bit for bit (the
// host defines ANS_PZERO, ANS_NZERO, ANS_PINF, ANS_NINF from its rules: a pattern,
// ANS_ANY_NAN where a NaN is prescribed, ANS_HOST where the host must judge, ANS_REF for a
// zero no rule covers: the reference judges it like any finite x; NAN_ANY_QUIET 1 where a
// NaN x is covered by no rule of f but NaN propagation, which any quiet NaN satisfies; the
// three markers' values are defined by device_references.py too).
inline int is_quiet_nan(WORD y) { return (y & QUIET_BITS) == QUIET_BITS; }
// x special to the screen: an infinity, a NaN, or a zero whose answer is not the reference's
inline int is_special(WORD xb) {
    WORD ax = xb & ABS_BITS;
    if (ax == 0) return ((xb >> SIGN_SHIFT) ? ANS_NZERO : ANS_PZERO) != ANS_REF;
    return ax >= INF_BITS;
}
// an argument that is a zero, an infinity or a NaN (of a built-in of several arguments:
// the host's, every answer ANS_HOST)
inline int not_finite_nonzero(WORD b) {
    WORD a = b & ABS_BITS;
    return a == 0 || a >= INF_BITS;
}
inline int prescribed(WORD ans, WORD yb) {
    if (ans == ANS_HOST) return 0;
    if (ans == ANS_ANY_NAN) return is_quiet_nan(yb);
    return yb == ans;
}
inline int screen_special(WORD xb, WORD yb) {
    WORD ax = xb & ABS_BITS;
    int neg = (int)(xb >> SIGN_SHIFT);
    if (ax == 0) return prescribed(neg ? ANS_NZERO : ANS_PZERO, yb);
    if (ax == INF_BITS) return prescribed(neg ? ANS_NINF : ANS_PINF, yb);
    return NAN_ANY_QUIET && is_quiet_nan(yb);
}

// bits b .. b+63 (b >= -1) of the little-endian 32-bit limbs L[0 .. (b >> 5) + 2]
inline ulong bits64(const uint *L, int b) {
    int shift = 0;
    if (b < 0) { shift = -b; b = 0; }
    int w = b >> 5, off = b & 31;
    ulong lo = (ulong)L[w] | ((ulong)L[w + 1] << 32);
    ulong v = off ? (lo >> off) | ((ulong)L[w + 2] << (64 - off)) : lo;
    return v << shift;
}

// The remainder of mx 2**d by mz > 0 (integer significands), taken ``step`` bits at a time
// (the caller's mz 2**step <= 2**64, so that r 2**step, r < mz, fits); *q8: the quotient
// floor(mx 2**d / mz) modulo 8, kept from every step's quotient (fmod's and remainder's
// long division in either precision).  mz = 0 (a zero divisor, which the screens never
// ask about but the test kernel fuzzfarm_reference may): 0, never an integer division by
// zero -- on a CPU device that traps (SIGFPE) and takes the whole process down.
inline ulong long_mod(ulong mx, ulong mz, int d, int step, int *q8) {
    if (mz == 0UL) { *q8 = 0; return 0UL; }
    ulong q = mx / mz, r = mx % mz;
    while (d > 0) {
        int s = d < step ? d : step;
        ulong t = r << s;
        q = ((s < 3 ? q << s : 0UL) + t / mz) & 7UL;    // the quotient so far, mod 8
        r = t % mz;
        d -= s;
    }
    *q8 = (int)(q & 7UL);
    return r;
}

// Whether x is within NEAR of a point of kind k (oracle.histogram.NEAR_KINDS, numbered
// from 1; 0: none) and not on it: the histogram's near rows.  IEEE additions only (the
// nearest integer to y by the 1.5 * 2**52 trick, ties to even, as numpy's rint), exact
// for the |x| < 2**51 it is asked about.
inline int near_point(double x, int k)
{
    double d;
    if (k == 0) return 0;
    if (k == 3) {
        d = x - 1.0;
    } else {
        double y = k == 2 ? x - 0.5 : x;
        double n = (y + 0x1.8p52) - 0x1.8p52;
        if ((k == 1 && n == 0.0) || (k == 4 && !(n < 0.0))) return 0;
        d = y - n;
    }
    return d != 0.0 && d <= NEAR && d >= -NEAR;
}

// The histogram column of a passed input's error err (ULPs, >= 0): log-spaced,
// HIST_BINS_PER_OCTAVE per octave from 2**HIST_LOG2_LO ULP; bin 0 below that and exact
// results, the top bin open above (oracle.histogram.error_bins computes the same on the
// float32 bits)
inline uint error_bin(float err)
{
    if (!(err > 0.0f)) return 0u;
    uint eb = as_uint(err);                       // log2 err in 1/HIST_BINS_PER_OCTAVE octaves
    int lg = (int)(eb >> 23) - 127;
    int frac = (int)((eb >> (23 - HIST_FRAC_BITS)) & ((1u << HIST_FRAC_BITS) - 1u));
    int bin = (lg - HIST_LOG2_LO) * HIST_BINS_PER_OCTAVE + frac + 1;
    return (uint)(bin < 0 ? 0 : (bin > NBINS - 1 ? NBINS - 1 : bin));
}
