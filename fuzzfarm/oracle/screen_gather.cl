// fuzzfarm's device screen: the gathering of a drawn unit's marked inputs, one program per
// runner and pattern width shared by every screen (fuzzfarm/oracle/device_screen.py,
// ``gather_kernels``), not a copy in each screen's program: a driver that compiles each
// kernel at its first launch (PoCL) compiles these four once, not once per built-in.
// LOCAL is the work-group size (screen_answer.LOCAL), PATTERN the unsigned integer type of
// the gathered columns (ushort, uint or ulong).  Integer arithmetic only.

// ---- The marked inputs of a drawn unit, gathered on the device ----
// The inputs the host's verdict may read (verdict.screened.SparseOutputs.positions): those
// the screen did not pass (~pass), those whose failure it counted (agg), and the passed
// input of the largest error (top).  Four launches after fuzzfarm_screen:
// fuzzfarm_top finds top, fuzzfarm_mark_count counts the marked inputs of each word and
// group, fuzzfarm_mark_scan turns the group counts into offsets, fuzzfarm_mark_write writes
// the marked inputs' x and y, in input order, to gx and gy.  hdr[0]: how many inputs are
// marked (all of them counted even where more than cap: the host then reads every row);
// hdr[1]: top (0xffffffff where no input passed).  Integer arithmetic only; the host
// checks the result (the count against its own, every x against the recipe's).

inline uint marked_bits(__global const uint *pass, __global const uint *agg, uint w,
                        uint count, uint top)
{
    uint first = w * 32u;
    if (first >= count) return 0u;
    uint m = ~pass[w] | agg[w];
    if (count - first < 32u) m &= (1u << (count - first)) - 1u;
    if (top != 0xffffffffu && top / 32u == w) m |= 1u << (top % 32u);
    return m;
}

// The inclusive prefix sum (Hillis-Steele) of s[0 .. LOCAL-1] in place, item t holding
// s[t]; every item of the group calls it.
inline void local_scan(__local uint *s, uint t)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1u; d < LOCAL; d <<= 1) {
        uint v = t >= d ? s[t - d] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[t] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// One work group of LOCAL items: the word of the largest wmax (the first such word, as
// numpy's argmax) and its wpos.
__kernel void fuzzfarm_top(__global const float *wmax, __global const uchar *wpos,
                           uint words, __global uint *hdr)
{
    __local float lv[LOCAL];
    __local uint li[LOCAL];
    uint t = get_local_id(0);
    float best = -1.0f;
    uint bi = 0xffffffffu;
    for (uint w = t; w < words; w += LOCAL)
        if (wmax[w] > best) { best = wmax[w]; bi = w; }
    lv[t] = best;
    li[t] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = LOCAL / 2; d > 0u; d >>= 1) {
        if (t < d) {
            float v = lv[t + d];
            uint i = li[t + d];
            if (v > lv[t] || (v == lv[t] && i < li[t])) { lv[t] = v; li[t] = i; }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0u) hdr[1] = lv[0] >= 0.0f ? li[0] * 32u + (uint)wpos[li[0]] : 0xffffffffu;
}

// Per word: woff[w] the marked inputs before it in its work group; gtot[g] the group's.
__kernel void fuzzfarm_mark_count(__global const uint *pass, __global const uint *agg,
                                  uint count, __global const uint *hdr,
                                  __global uint *woff, __global uint *gtot)
{
    __local uint s[LOCAL];
    uint w = get_global_id(0), t = get_local_id(0);
    uint c = popcount(marked_bits(pass, agg, w, count, hdr[1]));
    s[t] = c;
    local_scan(s, t);
    woff[w] = s[t] - c;
    if (t == LOCAL - 1u) gtot[get_group_id(0)] = s[t];
}

// One work group of LOCAL items: gtot[g] becomes the marked inputs before group g;
// hdr[0] their total.
__kernel void fuzzfarm_mark_scan(__global uint *gtot, uint groups, __global uint *hdr)
{
    __local uint s[LOCAL];
    uint t = get_local_id(0);
    uint per = (groups + LOCAL - 1u) / LOCAL;
    uint lo = min(t * per, groups), hi = min(lo + per, groups);
    uint sum = 0u;
    for (uint g = lo; g < hi; g++) sum += gtot[g];
    s[t] = sum;
    local_scan(s, t);
    uint acc = s[t] - sum;
    for (uint g = lo; g < hi; g++) { uint v = gtot[g]; gtot[g] = acc; acc += v; }
    if (t == LOCAL - 1u) hdr[0] = s[t];
}

// Per word: its marked inputs' x and y at their offsets (those below cap).
__kernel void fuzzfarm_mark_write(__global const uint *pass, __global const uint *agg,
                                  uint count, __global const uint *hdr,
                                  __global const uint *woff, __global const uint *gtot,
                                  __global const PATTERN *xbits,
                                  __global const PATTERN *ybits, uint cap,
                                  __global PATTERN *gx, __global PATTERN *gy)
{
    uint w = get_global_id(0);
    uint m = marked_bits(pass, agg, w, count, hdr[1]);
    uint k = gtot[get_group_id(0)] + woff[w];
    for (uint j = 0u; j < 32u && m != 0u; j++, m >>= 1) {
        if (m & 1u) {
            if (k < cap) { gx[k] = xbits[w * 32u + j]; gy[k] = ybits[w * 32u + j]; }
            k++;
        }
    }
}
