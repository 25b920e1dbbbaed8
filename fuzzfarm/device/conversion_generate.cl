/* fuzzfarm: a conversion unit's sources made on the device (fuzzfarm.device.conversion_generate).
 * The same integer-only function of (key, row) as strategies.conversions.counter_inputs_at,
 * bit for bit: splitmix64 draws, the landmark pool (a table from the host), neighbours,
 * structured values, uniform patterns.  No floating-point operation.  The shape's fields
 * are strategies.conversions.CounterShape's. */

static ulong mix64(ulong z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

static ulong width_mask(int bits)
{
    return bits >= 64 ? ~0UL : ((1UL << bits) - 1);
}

static ulong neighbour(ulong b, ulong r0, int kind, int bits, int is_signed, ulong wmask)
{
    const ulong k = 1 + ((r0 >> 2) & 3);
    const int down = (int)((r0 >> 4) & 1);
    if (kind != 2) {
        const ulong sign = b & (1UL << (bits - 1));
        const ulong am = (1UL << (bits - 1)) - 1;
        ulong mag = b & am;
        if (down) mag = mag >= k ? mag - k : 0;
        else mag = mag <= am - k ? mag + k : am;
        return sign | mag;
    }
    const ulong half_ = is_signed ? (1UL << (bits - 1)) : 0;
    ulong o = (b + half_) & wmask;
    if (down) o = o >= k ? o - k : 0;
    else o = o <= wmask - k ? o + k : wmask;
    return (o + half_) & wmask;
}

static ulong structured(ulong r1, ulong r2, int kind, int bits, int m, int bias,
                        int is_signed, int e_lo, int e_count, int drop, int p, int mbits,
                        ulong wmask)
{
    if (kind == 2) {                                    /* int -> float */
        const ulong length = r1 % (ulong)(mbits + 1);
        const ulong mask = length >= 64 ? ~0UL : ((1UL << length) - 1);
        const ulong top = length > 0 ? (1UL << (length - 1)) : 0;
        ulong mag = (r2 & mask) | top;
        const long dr = (long)length - p;
        if (dr > 0 && ((r1 >> 32) & 1)) {
            const ulong d = (ulong)(dr > 63 ? 63 : dr);
            mag = (mag & ~((1UL << d) - 1)) | (1UL << (d - 1));
        }
        if (is_signed && ((r1 >> 33) & 1)) return (~mag + 1) & wmask;
        return mag;
    }
    const ulong fmask = (1UL << m) - 1;
    const long e = (long)e_lo + (long)(r1 % (ulong)e_count);
    long bl = e + bias;
    bl = bl < 0 ? 0 : (bl > 2 * bias ? 2 * bias : bl);
    ulong frac = r2 & fmask;
    if (kind == 0) {                                    /* float -> int: forced fractions */
        if (((r1 >> 32) & 1) && e >= 0 && e < m) {
            const ulong z = (ulong)(m - e);             /* 1 .. m: bits below the units */
            const ulong halfb = 1UL << (z - 1);
            const ulong pick = (r1 >> 33) % 6;
            ulong pattern;
            switch (pick) {
            case 0: pattern = 0; break;
            case 1: pattern = halfb; break;
            case 2: pattern = halfb + 1; break;
            case 3: pattern = halfb - 1; break;
            case 4: pattern = halfb >> 1; break;
            default: pattern = halfb | (halfb >> 1); break;
            }
            frac = (frac & ~((1UL << z) - 1)) | pattern;
        }
    } else if (drop > 0) {                              /* a narrowing: ties of D */
        if ((r1 >> 34) & 1) {
            const ulong low = (1UL << drop) - 1;
            const long delta = (long)((r1 >> 32) % 3) - 1;
            long f = (long)((frac & ~low) | (1UL << (drop - 1))) + delta;
            f = f < 0 ? 0 : (f > (long)fmask ? (long)fmask : f);
            frac = (ulong)f;
        }
    }
    const ulong sign = ((r1 >> 40) & 1) << (bits - 1);
    return sign | ((ulong)bl << m) | frac;
}

__kernel void fuzzfarm_convert_make(
    __global uchar *out, const ulong n, const ulong offset, const ulong part_n,
    const ulong key, __global const ulong *pool, const ulong pool_size,
    const int kind, const int bits, const int m, const int bias, const int is_signed,
    const int e_lo, const int e_count, const int drop, const int p, const int mbits)
{
    const ulong j = get_global_id(0);
    if (j >= part_n) return;
    const ulong row = j;                                /* the row within its part */
    const ulong wmask = width_mask(bits);
    const ulong r0 = mix64(key + (row + 1) * 0x9E3779B97F4A7C15UL);
    const ulong r1 = mix64(r0 ^ 0xD1B54A32D192ED03UL);
    const ulong r2 = mix64(r1 ^ 0x8CB92BA72F3D8DD7UL);
    const ulong r3 = mix64(r2 ^ 0xABC98388FB8FAC03UL);
    const ulong member = pool[(r0 >> 8) % pool_size];
    ulong v;
    switch ((int)(r0 & 3)) {
    case 0: v = member; break;
    case 1: v = neighbour(member, r0, kind, bits, is_signed, wmask); break;
    case 2: v = structured(r1, r2, kind, bits, m, bias, is_signed, e_lo, e_count, drop, p,
                           mbits, wmask); break;
    default: v = r3 & wmask; break;
    }
    if (part_n >= 2 * pool_size && row < pool_size) v = pool[row];
    const ulong i = offset + j;
    if (i >= n) return;
    switch (bits) {
    case 8: out[i] = (uchar)v; break;
    case 16: ((__global ushort *)out)[i] = (ushort)v; break;
    case 32: ((__global uint *)out)[i] = (uint)v; break;
    default: ((__global ulong *)out)[i] = v; break;
    }
}
