/* fuzzfarm: explicit conversions judged bit for bit on the device (docs/device_screen.md,
 * "Conversions").  Integer arithmetic only: no floating-point operation of the device
 * takes part in a reference, so a device without cl_khr_fp64 judges binary64 sources too.
 *
 * One kernel for every conversion, its shape given by the arguments:
 *   sfmt, dfmt  the source's / destination's float format (16, 32 or 64 bits) or 0 for an
 *               integer type;
 *   sbits, dbits, ssigned, dsigned  the integer types (8 ... 64 bits);
 *   mode        0 rte, 1 rtz, 2 rtp, 3 rtn (the effective mode: the suffix or the default);
 *   sat         the _sat modifier: 0 none; 1 of an OpenCL C kernel, where a NaN "should"
 *               become 0 (implementation-defined, counted unjudged); 2 of a SPIR-V
 *               kernel's SaturatedConversion, where "NaN is converted to 0" (judged).
 * x and y are the raw buffers (float bits; integers as themselves, two's complement).
 *
 * Per element it *decides* (sets the element's bit in ``decided``) only where the verdict
 * of fuzzfarm.verdict.conversions.check is certain without the host:
 *   - a judged element whose result is the reference bit for bit (rounding, saturation);
 *   - a float->float NaN source whose result is a NaN, quiet where the source was quiet;
 *   - an implementation-defined element (float->int without _sat out of range or NaN)
 *     where no note can apply: no representable rounded value, or y equal to it; an
 *     int->signed-int element out of range without _sat whose result is the
 *     two's-complement wrap;
 *   - a NaN source of a _sat float->int conversion whose result is 0 (OpenCL C's "should";
 *     SPIR-V's "is", a judged element there).
 * and counts the implementation-defined elements it decided in ``counts[0]``.  Everything
 * else (a result other than the reference: failures, flush-to-zero allowances, notes) is
 * left to the host, and so are the rows i with (i mod sample_mask) == sample_at where
 * sample_mask (a power of two) is not 0: the sample of made inputs the host checks.
 * Elements at n and beyond are never decided.
 *
 * ``fuzzfarm_convert_gather`` then copies the position, source and result of every element
 * not decided (in no particular order: the host sorts them) into rows 0 .. cap of pos, gx
 * and gy, and counts them all in ``count[0]`` (more than cap: the host reads every row). */

#define MODE_RTE 0
#define MODE_RTZ 1
#define MODE_RTP 2
#define MODE_RTN 3

static ulong load_raw(__global const uchar *p, int bits, size_t i)
{
    switch (bits) {
    case 8: return (ulong)p[i];
    case 16: return (ulong)((__global const ushort *)p)[i];
    case 32: return (ulong)((__global const uint *)p)[i];
    default: return ((__global const ulong *)p)[i];
    }
}

static ulong low_mask(int bits)             /* bits in 1..64 */
{
    return bits >= 64 ? ~(ulong)0 : (((ulong)1 << bits) - 1);
}

static int frac_bits_of(int fmt) { return fmt == 16 ? 10 : (fmt == 32 ? 23 : 52); }
static int exp_bits_of(int fmt) { return fmt == 16 ? 5 : (fmt == 32 ? 8 : 11); }

static int bit_length(ulong m) { return m == 0 ? 0 : 64 - (int)clz(m); }

/* Round the magnitude m * 2^-shift (shift >= 0) to an integer in ``mode`` for a value of
 * sign ``neg``: the integer, with *inexact set where the value was not one. */
static ulong round_shifted(ulong m, int shift, int mode, int neg, int *inexact)
{
    ulong q, rem, halfway;
    if (shift == 0) {
        *inexact = 0;
        return m;
    }
    if (shift > 64) {                   /* below 2^-1 (m < 2^64 <= 2^(shift - 1)) */
        q = 0;
        rem = m;
        halfway = 0;                       /* unused: rem < halfway */
        *inexact = m != 0;
        if (!*inexact) return 0;
        if (mode == MODE_RTP) return neg ? 0 : 1;
        if (mode == MODE_RTN) return neg ? 1 : 0;
        return 0;
    }
    if (shift == 64) {
        q = 0;
        rem = m;
        halfway = (ulong)1 << 63;
    } else {
        q = m >> shift;
        rem = m & low_mask(shift);
        halfway = (ulong)1 << (shift - 1);
    }
    *inexact = rem != 0;
    int inc = 0;
    if (rem != 0) {
        if (mode == MODE_RTE) inc = rem > halfway || (rem == halfway && (q & 1));
        else if (mode == MODE_RTP) inc = !neg;
        else if (mode == MODE_RTN) inc = neg;
    }
    return q + (ulong)inc;
}

/* Overflow of a float result: to infinity (1) or to the largest finite value (0)
 * (IEEE 754-2008 §7.4). */
static int overflows_to_inf(int mode, int neg)
{
    if (mode == MODE_RTE) return 1;
    if (mode == MODE_RTZ) return 0;
    return mode == MODE_RTP ? !neg : neg;
}

/* The bits of (-1)^neg * m * 2^e rounded to the float format ``fmt`` in ``mode``; m < 2^64,
 * any e (exact integer arithmetic: the value is never formed). */
static ulong round_to_format(ulong m, int e, int neg, int fmt, int mode)
{
    const int M = frac_bits_of(fmt), E = exp_bits_of(fmt);
    const int bias = (1 << (E - 1)) - 1;
    const ulong sign = neg ? ((ulong)1 << (fmt - 1)) : 0;
    if (m == 0) return sign;
    const int L = bit_length(m);
    const int lead = e + L - 1;                 /* exponent of the leading bit */
    const int emin = 1 - bias;
    int qd = (lead < emin ? emin : lead) - M;   /* exponent of the result's last place */
    ulong r;
    if (e >= qd) {
        r = m << (e - qd);                      /* exact: fewer than M + 1 bits */
    } else {
        int inexact;
        r = round_shifted(m, qd - e, mode, neg, &inexact);
        if (r == ((ulong)1 << (M + 1))) {      /* carried into the next binade */
            r >>= 1;
            qd += 1;
        }
    }
    if (r == 0) return sign;
    int field = 0;
    if (r >= ((ulong)1 << M)) field = qd + M + bias;    /* normal (or a subnormal carried) */
    if (field >= (1 << E) - 1) {
        const ulong inf = (ulong)((1 << E) - 1) << M;
        return sign | (overflows_to_inf(mode, neg) ? inf : inf - 1);
    }
    return sign | ((ulong)field << M) | (r & low_mask(M));
}

__kernel void fuzzfarm_convert_screen(
    __global const uchar *x, __global const uchar *y, const uint n,
    const int sfmt, const int sbits, const int ssigned,
    const int dfmt, const int dbits, const int dsigned,
    const int mode, const int sat, const uint sample_mask, const uint sample_at,
    __global uint *decided, __global uint *counts)
{
    __local uint words[8];
    __local uint unjudged;
    const size_t i = get_global_id(0);
    const uint lid = (uint)get_local_id(0);
    if (lid < 8) words[lid] = 0;
    if (lid == 0) unjudged = 0;
    barrier(CLK_LOCAL_MEM_FENCE);

    int ok = 0, idef = 0;
    if (i < n) {
        const int xbits = sfmt ? sfmt : sbits, ybits = dfmt ? dfmt : dbits;
        const ulong xr = load_raw(x, xbits, i);
        const ulong yr = load_raw(y, ybits, i);
        /* the source as (-1)^neg * m * 2^e, or a NaN / infinity */
        int neg = 0, e = 0, nan = 0, quiet = 0, inf = 0;
        ulong m = 0;
        if (sfmt) {
            const int M = frac_bits_of(sfmt), E = exp_bits_of(sfmt);
            const int bias = (1 << (E - 1)) - 1;
            const ulong frac = xr & low_mask(M);
            const int field = (int)((xr >> M) & low_mask(E));
            neg = (int)(xr >> (sfmt - 1));
            if (field == (1 << E) - 1) {
                nan = frac != 0;
                quiet = (int)((frac >> (M - 1)) & 1);
                inf = frac == 0;
            } else if (field == 0) {
                m = frac;
                e = 1 - bias - M;
            } else {
                m = frac | ((ulong)1 << M);
                e = field - bias - M;
            }
        } else {
            const ulong v = xr & low_mask(sbits);
            neg = ssigned && ((v >> (sbits - 1)) & 1);
            m = neg ? ((~v + 1) & low_mask(sbits)) : v;     /* |v|, 2^63 for long's least */
            if (neg && sbits == 64 && m == 0) m = (ulong)1 << 63;
        }

        if (dfmt) {                                 /* to a float format */
            const ulong ymask = low_mask(dfmt);
            const int DM = frac_bits_of(dfmt), DE = exp_bits_of(dfmt);
            const ulong dinf = (ulong)((1 << DE) - 1) << DM;
            const ulong yv = yr & ymask;
            if (nan) {                              /* any NaN; quiet if the source was */
                const int ynan = (yv & low_mask(dfmt - 1)) > dinf;
                const int yquiet = (int)((yv >> (DM - 1)) & 1);
                ok = ynan && (!quiet || yquiet);
            } else if (inf) {
                ok = yv == ((neg ? ((ulong)1 << (dfmt - 1)) : 0) | dinf);
            } else {
                ok = yv == round_to_format(m, e, neg, dfmt, mode);
            }
        } else if (!sfmt) {                         /* between integer types (C99 6.3.1.3) */
            const ulong ymask = low_mask(dbits);
            const ulong yv = yr & ymask;
            /* the source's two's-complement wrap to the destination's width: its value
             * where representable, the modulo-2^N result of an unsigned destination */
            const ulong wrap = (neg ? (~m + 1) : m) & ymask;
            const ulong hi_mag = dsigned ? low_mask(dbits - 1) : ymask;
            const ulong lo_mag = dsigned ? ((ulong)1 << (dbits - 1)) : 0;
            const int out = m > (neg ? lo_mag : hi_mag);
            if (!out || (!sat && !dsigned)) {
                ok = yv == wrap;
            } else if (sat) {
                ok = yv == (neg ? lo_mag : hi_mag);     /* the bits of lo / hi */
            } else {
                idef = 1;                           /* signed, out of range: the wrap is */
                ok = yv == wrap;                    /* the result no note applies to */
            }
        } else {                                    /* a float source to an integer type */
            const ulong ymask = low_mask(dbits);
            const ulong yv = yr & ymask;
            /* the range [lo, hi] by magnitude: hi_mag for positive values, lo_mag for
             * negative ones (0 for an unsigned type) */
            const ulong hi_mag = dsigned ? low_mask(dbits - 1) : ymask;
            const ulong lo_mag = dsigned ? ((ulong)1 << (dbits - 1)) : 0;
            const ulong lo_bits = dsigned ? ((ulong)1 << (dbits - 1)) : 0;
            const ulong hi_bits = hi_mag;
            if (nan) {
                idef = sat != 2;                    /* implementation-defined; _sat: 0 */
                ok = sat ? yv == 0 : 1;
            } else {
                /* the integer part t and whether a fraction remains; "huge": |x| >= 2^64 */
                int huge = inf, inexact = 0;
                ulong t = 0, r = 0;
                if (!inf) {
                    if (e >= 0) {
                        huge = bit_length(m) + e > 64;
                        t = huge ? 0 : (m << e);
                        r = t;
                    } else {
                        t = round_shifted(m, -e, MODE_RTZ, neg, &inexact);
                        r = round_shifted(m, -e, mode, neg, &inexact);
                    }
                }
                const ulong bound = neg ? lo_mag : hi_mag;
                /* out of range, on the value before rounding (fuzzfarm.verdict.conversions) */
                const int out = huge || t > bound || (t == bound && inexact);
                /* the rounded value, where representable */
                const int r_in = !huge && r <= bound;
                const ulong r_bits = neg ? ((~r + 1) & ymask) : r;
                if (!out) {
                    ok = yv == r_bits;
                } else if (sat) {
                    ok = yv == (neg ? lo_bits : hi_bits);
                } else {
                    idef = 1;
                    ok = (inf || !r_in) ? 1 : yv == r_bits;
                }
            }
        }
    }
    /* the rows whose made inputs the host checks: left to it (with sample_mask 0, none) */
    if (sample_mask && (i & (sample_mask - 1)) == sample_at) ok = 0;
    if (ok) {
        atomic_or(&words[lid >> 5], (uint)1 << (lid & 31));
        if (idef) atomic_inc(&unjudged);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const size_t base = get_group_id(0) * (get_local_size(0) >> 5);
    if (lid < (get_local_size(0) >> 5)) decided[base + lid] = words[lid];
    if (lid == 0 && unjudged) atomic_add(&counts[0], unjudged);
}

__kernel void fuzzfarm_convert_gather(
    __global const uchar *x, __global const uchar *y, const uint n, const int xbits,
    const int ybits, __global const uint *decided, __global uint *count, const uint cap,
    __global uint *pos, __global ulong *gx, __global ulong *gy)
{
    const uint i = (uint)get_global_id(0);
    if (i >= n || ((decided[i >> 5] >> (i & 31)) & 1)) return;
    const uint k = atomic_inc(&count[0]);
    if (k < cap) {
        pos[k] = i;
        gx[k] = load_raw(x, xbits, i);
        gy[k] = load_raw(y, ybits, i);
    }
}
