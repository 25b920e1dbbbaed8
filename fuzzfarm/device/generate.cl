/* fuzzfarm: a run unit's inputs made on the device (fuzzfarm.device.generate).
 *
 * Row i of a part of n rows is value permute(i, n, SHUFFLE) of the part's segments'
 * members concatenated; member i of a segment is number permute((first + i) mod size,
 * size, keys) of its variant (or i, where the segment takes its whole space at once),
 * unranked into its fields (first field fastest) and built.  Integer arithmetic only --
 * the same functions as strategies/_internal/distinct.py, bit for bit -- so no arithmetic
 * of the device under test decides an input.  Defined on the command line: BITS, FB (the
 * fraction bits), EMAX, FRAC_MASK, MAX_FINITE, PTYPE (the pattern's unsigned type), SEGW
 * (ulongs per segment), WG (the work-group size).  The kernel also adds
 * sum(value * (2 * position + 1)) mod 2**32 over its rows into check[0], which the host
 * compares with its own regeneration of the unit.
 */
#define M0 0x9E3779B97F4A7C15UL
#define M1 0xBF58476D1CE4E5B9UL
#define M2 0x94D049BB133111EBUL

enum { B_TABLE, B_NORMAL, B_BINADE, B_INTCONV, B_OR, B_RANDOM, B_HALFPI };

static ulong rounds(ulong x, uint k, ulong k0, ulong k1, ulong k2)
{
    ulong mask = k >= 64 ? ~0UL : ((1UL << k) - 1UL);
    uint shift = k / 2 + 1;
    x = (x * M0 + k0) & mask; x ^= x >> shift;
    x = (x * M1 + k1) & mask; x ^= x >> shift;
    x = (x * M2 + k2) & mask; x ^= x >> shift;
    return x;
}

/* a keyed bijection of [0, size) (size 0: the whole of ulong), cycle-walked */
static ulong permute(ulong j, ulong size, uint k, ulong k0, ulong k1, ulong k2)
{
    ulong y = rounds(j, k, k0, k1, k2);
    if (size == 0) return y;
    while (y >= size) y = rounds(y, k, k0, k1, k2);
    return y;
}

/* segment fields (ulong each) */
#define S_END 0
#define S_SIZE 1
#define S_FIRST 2
#define S_WHOLE 3
#define S_K0 4
#define S_BITS 7
#define S_BUILDER 8
#define S_A0 9
#define S_NF 12
#define S_SPAN 13
#define S_LO 16

static ulong build(__global const ulong *s, ulong idx, __global const ulong *table)
{
    ulong v[3] = {0, 0, 0};
    ulong rest = idx;
    uint nf = (uint)s[S_NF];
    for (uint f = 0; f < nf && f < 3; ++f) {
        ulong span = s[S_SPAN + f];
        ulong digit;
        if (span == 0) { digit = rest; rest = 0; }
        else { digit = rest % span; rest = rest / span; }
        v[f] = digit + s[S_LO + f];          /* lo two's complement: wraps to the value */
    }
    ulong a0 = s[S_A0], a1 = s[S_A0 + 1], a2 = s[S_A0 + 2];
    ulong sign = v[0] << (BITS - 1);
    switch ((uint)s[S_BUILDER]) {
    case B_TABLE:
        return table[a0 + idx];
    case B_NORMAL:
        return sign | ((ulong)((long)v[1] + EMAX) << FB) | v[2];
    case B_BINADE: {
        ulong frac = v[2] < 4 ? v[2] : FRAC_MASK - (v[2] - 4);
        return sign | ((ulong)((long)v[1] + EMAX) << FB) | frac;
    }
    case B_INTCONV: {
        ulong m = v[1] * a0 + a1;
        uint e = 63 - (uint)clz(m);
        return sign | ((ulong)((long)e + EMAX - (long)a2) << FB) | ((m << (FB - e)) & FRAC_MASK);
    }
    case B_OR:
        return sign | a0 | v[1];
    case B_RANDOM:
        return v[0];
    case B_HALFPI: {
        long m = (long)table[a0 + (v[1] - a1)] + (long)v[2];
        m = m < 1 ? 1 : (m > (long)MAX_FINITE ? (long)MAX_FINITE : m);
        return sign | (ulong)m;
    }
    }
    return 0;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void fuzzfarm_generate(__global PTYPE *out, ulong off, ulong n,
                       __global const ulong *allsegs, uint seg0, uint nseg,
                       uint shuffle, uint kbits, ulong k0, ulong k1, ulong k2,
                       __global const ulong *table, __global uint *check)
{
    __local uint part[WG];
    __global const ulong *segs = allsegs + (ulong)seg0 * SEGW;
    ulong i = get_global_id(0);
    uint lid = get_local_id(0);
    uint mine = 0;
    if (i < n) {
        ulong p = shuffle ? permute(i, n, kbits, k0, k1, k2) : i;
        uint s = 0;
        while (s + 1 < nseg && p >= segs[s * SEGW + S_END]) ++s;
        __global const ulong *seg = segs + s * SEGW;
        ulong begin = s ? segs[(s - 1) * SEGW + S_END] : 0;
        ulong k = p - begin, size = seg[S_SIZE], idx;
        if (seg[S_WHOLE]) {
            idx = k;
        } else {
            ulong first = seg[S_FIRST];
            ulong room = size - first;       /* size 0 (2**64): first is 0, room wraps to 0 */
            ulong j = (size == 0 || k < room) ? k + first : k - room;
            idx = permute(j, size, (uint)seg[S_BITS], seg[S_K0], seg[S_K0 + 1], seg[S_K0 + 2]);
        }
        ulong bits = build(seg, idx, table);
        out[off + i] = (PTYPE)bits;
        ulong at = off + i;
        mine = (uint)(bits ^ (bits >> 32)) * (uint)(2 * at + 1);
    }
    part[lid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = WG / 2; w > 0; w >>= 1) {
        if (lid < w) part[lid] += part[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) atomic_add(check, part[0]);
}
