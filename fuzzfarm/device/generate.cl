/* fuzzfarm: a run unit's inputs made on the device (fuzzfarm.device.generate).
 *
 * Row i of a part of n rows is value permute(i, n, SHUFFLE) of the part's segments'
 * members concatenated; member i of a segment is number permute((first + i) mod size,
 * size, keys) of its variant (or i, where the segment takes its whole space at once),
 * unranked into its fields (first field fastest) and built.  Integer arithmetic only --
 * the same functions as strategies/_internal/distinct.py, bit for bit -- so no arithmetic
 * of the device under test decides an input.  Defined on the command line: BITS, FB (the
 * fraction bits), EMAX, FRAC_MASK, MAX_FINITE, PTYPE (the pattern's unsigned type), SEGW
 * (ulongs per segment), WG (the work-group size).  fuzzfarm_generate makes an argument of
 * a whole unit (its parts: PARTW ulongs each); fuzzfarm_ties copies the first argument into
 * a later one at the rows a hash of the row picks (strategies.tie_masks);
 * fuzzfarm_tally counts an argument's inputs and distinct inputs by IEEE class and
 * fuzzfarm_tally_rows the distinct rows of two or three arguments (statistics only: no
 * verdict reads them).
 */
#define M0 0x9E3779B97F4A7C15UL
#define M1 0xBF58476D1CE4E5B9UL
#define M2 0x94D049BB133111EBUL

enum { B_TABLE, B_NORMAL, B_BINADE, B_INTCONV, B_OR, B_RANDOM, B_HALFPI, B_OFFSET };

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
    case B_OFFSET:                          /* a0 + d (d two's complement: wraps) */
        return sign | (a0 + v[1]);
    case B_HALFPI: {
        long m = (long)table[a0 + (v[1] - a1)] + (long)v[2];
        m = m < 1 ? 1 : (m > (long)MAX_FINITE ? (long)MAX_FINITE : m);
        return sign | (ulong)m;
    }
    }
    return 0;
}

/* part fields (ulong each) */
#define P_OFF 0
#define P_N 1
#define P_SEG0 2
#define P_NSEG 3
#define P_SHUFFLE 4
#define P_KBITS 5
#define P_K0 6
#define PARTW 9

__kernel void fuzzfarm_generate(__global PTYPE *out, ulong n, __global const ulong *parts,
                                uint nparts, __global const ulong *allsegs,
                                __global const ulong *table)
{
    ulong i = get_global_id(0);
    if (i >= n) return;
    uint q = 0;
    while (q + 1 < nparts && i >= parts[(q + 1) * PARTW + P_OFF]) ++q;
    __global const ulong *part = parts + q * PARTW;
    ulong r = i - part[P_OFF], m = part[P_N];
    ulong p = part[P_SHUFFLE] ? permute(r, m, (uint)part[P_KBITS], part[P_K0], part[P_K0 + 1],
                                        part[P_K0 + 2]) : r;
    __global const ulong *segs = allsegs + part[P_SEG0] * SEGW;
    uint nseg = (uint)part[P_NSEG];
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
    out[i] = (PTYPE)build(seg, idx, table);
}

/* tie part fields (ulong each): rows off .. off + n; the hash key; the thresholds of the
 * hash's top 53 bits for a tie and for a tie with the sign flipped */
#define T_OFF 0
#define T_N 1
#define T_KEY 2
#define T_TIE 3
#define T_FLIP 4
#define TIEW 5

/* y[i] = x[i] (its sign flipped at half of them) at the rows of each part whose
 * splitmix64 hash of (row - off) * M0 + key falls below the part's tie threshold:
 * strategies.tie_hash and tie_masks, bit for bit */
__kernel void fuzzfarm_ties(__global PTYPE *y, __global const PTYPE *x, ulong n,
                            __global const ulong *ties, uint nties)
{
    ulong i = get_global_id(0);
    if (i >= n) return;
    uint q = 0;
    while (q + 1 < nties && i >= ties[(q + 1) * TIEW + T_OFF]) ++q;
    __global const ulong *t = ties + q * TIEW;
    ulong z = (i - t[T_OFF]) * M0 + t[T_KEY];
    z ^= z >> 30; z *= M1;
    z ^= z >> 27; z *= M2;
    z ^= z >> 31;
    ulong top = z >> 11;
    if (top < t[T_TIE])
        y[i] = x[i] ^ (top < t[T_FLIP] ? (PTYPE)((PTYPE)1 << (BITS - 1)) : (PTYPE)0);
}

/* The unit's inputs by IEEE class (formats.INPUT_CLASSES order) and its distinct inputs
 * by class: every input is inserted into an open-addressing hash set of 2**tbits slots
 * (EMPTY, the all-ones pattern, marks a free slot; the pattern EMPTY itself is counted
 * through counts[2 NCLS]); an insertion that takes a free slot is a new distinct input.
 * counts[at + c] = inputs of class c, counts[at + NCLS + c] = distinct inputs of class c.
 * binary32 and binary64 (its slots of 64 bits: cl_khr_int64_base_atomics' atom_cmpxchg). */
#define NCLS 10
#if BITS == 32
#define EMPTY 0xFFFFFFFFu
#define SIGN_BIT 0x80000000u
#define INF_BITS 0x7F800000u
#define MIN_NORMAL 0x00800000u
#define QUIET_BIT 0x00400000u
#define HASH(v) (((v) * 0x9E3779B1u) >> (32 - tbits))
#define CMPXCHG(p, c, v) atomic_cmpxchg(p, c, v)
#elif BITS == 64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define EMPTY 0xFFFFFFFFFFFFFFFFUL
#define SIGN_BIT 0x8000000000000000UL
#define INF_BITS 0x7FF0000000000000UL
#define MIN_NORMAL 0x0010000000000000UL
#define QUIET_BIT 0x0008000000000000UL
#define HASH(v) ((uint)(((v) * M0) >> (64 - tbits)))
#define CMPXCHG(p, c, v) ((ulong)atom_cmpxchg((volatile __global long *)(p), (long)(c), (long)(v)))
#endif

#if BITS == 32 || BITS == 64
static uint ieee_class(PTYPE v)
{
    PTYPE mag = v & ~SIGN_BIT;
    uint neg = (v & SIGN_BIT) != 0;
    if (mag == 0) return neg;
    if (mag < MIN_NORMAL) return 2 + neg;
    if (mag < INF_BITS) return 4 + neg;
    if (mag == INF_BITS) return 6 + neg;
    return (mag & QUIET_BIT) ? 8 : 9;
}

/* Work-group counts by class: zeroed, one input counted (and, if fresh, as distinct),
 * added to counts[0 .. 2 NCLS) -- every work item of the group calls begin and end */
inline void local_counts_begin(__local uint *lc, uint lid)
{
    for (uint c = lid; c < 2 * NCLS; c += WG) lc[c] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
}
inline void local_count(__local uint *lc, uint c, uint fresh)
{
    atomic_inc(lc + c);
    if (fresh) atomic_inc(lc + NCLS + c);
}
inline void local_counts_end(__local uint *lc, uint lid, __global uint *counts)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint c = lid; c < 2 * NCLS; c += WG)
        if (lc[c]) atomic_add(counts + c, lc[c]);
}

/* NAME(set, tbits, v, seen_empty): whether v (of type T) is new to the open-addressing
 * hash set of 2**tbits slots of T (EMPTY_V marks a free one; v == EMPTY_V itself goes to
 * *seen_empty instead), hashed by HASH_F(v), inserted by CAS(p, expected, new) */
#define HASH_SET_INSERT(NAME, T, EMPTY_V, HASH_F, CAS)                              \
inline uint NAME(__global T *set, uint tbits, T v, __global uint *seen_empty)       \
{                                                                                   \
    if (v == (EMPTY_V)) return atomic_xchg(seen_empty, 1u) == 0;                   \
    uint mask = (1u << tbits) - 1u;                                                 \
    uint h = HASH_F(v);                                                             \
    for (;;) {                                                                      \
        T old = CAS(set + h, (EMPTY_V), v);                                         \
        if (old == (EMPTY_V)) return 1;                                             \
        if (old == v) return 0;                                                     \
        h = (h + 1) & mask;                                                         \
    }                                                                               \
}
#define HASH32(v) (((v) * 0x9E3779B1u) >> (32 - tbits))
HASH_SET_INSERT(insert_pattern, PTYPE, EMPTY, HASH, CMPXCHG)   /* an argument's patterns */
HASH_SET_INSERT(insert_u32, uint, 0xffffffffu, HASH32, atomic_cmpxchg)   /* int32 values */

/* formats.INT_CLASSES of an int32 value: zero, positive, negative, INT_MIN, INT_MAX */
inline uint int_class(uint v)
{
    return v == 0u ? 0u : v == 0x80000000u ? 3u : v == 0x7fffffffu ? 4u
           : (int)v > 0 ? 1u : 2u;
}

/* NAME: the n values x (of type T) by class (CLASS_F) and their distinct values by class
 * (INSERT_F into the hash set), added to all_counts[at + c] and all_counts[at + NCLS + c];
 * the set's empty marker counted through all_counts[at + 2 NCLS].  fuzzfarm_tally: an
 * argument's patterns by IEEE class; fuzzfarm_tally_int: an int argument's values. */
#define TALLY_KERNEL(NAME, T, CLASS_F, INSERT_F)                                    \
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))                            \
void NAME(__global const T *x, ulong n, __global T *set, uint tbits,                \
          __global uint *all_counts, uint at)                                       \
{                                                                                   \
    __global uint *counts = all_counts + at;                                        \
    __local uint lc[2 * NCLS];                                                      \
    uint lid = get_local_id(0);                                                     \
    local_counts_begin(lc, lid);                                                    \
    ulong i = get_global_id(0);                                                     \
    if (i < n)                                                                      \
        local_count(lc, CLASS_F(x[i]), INSERT_F(set, tbits, x[i], counts + 2 * NCLS)); \
    local_counts_end(lc, lid, counts);                                              \
}
TALLY_KERNEL(fuzzfarm_tally, PTYPE, ieee_class, insert_pattern)
TALLY_KERNEL(fuzzfarm_tally_int, uint, int_class, insert_u32)

/* The distinct rows of ncols (2 or 3) arguments c0, c1, c2 of n rows, added to
 * all_counts[at]: every row's number + 1 is inserted into an open-addressing hash set of
 * 2**tbits uint slots (0 marks a free slot) by the hash of its arguments; a slot taken by
 * another row is compared with this row argument by argument (the columns are complete
 * before this kernel runs), so the count is exact whatever the patterns' width. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void fuzzfarm_tally_rows(__global const PTYPE *c0, __global const PTYPE *c1,
                         __global const PTYPE *c2, uint ncols, ulong n, __global uint *set,
                         uint tbits, __global uint *all_counts, uint at)
{
    __local uint fresh;
    if (get_local_id(0) == 0) fresh = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong i = get_global_id(0);
    if (i < n) {
        ulong a = (ulong)c0[i], b = (ulong)c1[i], c = ncols > 2 ? (ulong)c2[i] : 0UL;
        ulong z = (a * M0) ^ b;
        z ^= z >> 29; z = z * M1 + c;
        z ^= z >> 32; z *= M2;
        z ^= z >> 29;
        uint mask = (1u << tbits) - 1u;
        uint h = (uint)(z >> (64 - tbits));
        for (;;) {
            uint old = atomic_cmpxchg(set + h, 0u, (uint)i + 1u);
            if (old == 0u) { atomic_inc(&fresh); break; }
            uint j = old - 1u;
            if (c0[j] == c0[i] && c1[j] == c1[i] && (ncols < 3 || c2[j] == c2[i])) break;
            h = (h + 1u) & mask;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0 && fresh) atomic_add(all_counts + at, fresh);
}
#endif
