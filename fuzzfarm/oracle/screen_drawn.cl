// fuzzfarm's device screen: the kernels of a drawn `run` unit of binary16 or binary64
// results (fuzzfarm/oracle/screen_source.py puts this file after device_screen16.cl or
// device_screen64.cl, which define SCREEN_ANY -- the verdict on one input -- and
// X_VALUE(x) -- its first argument's value; the host defines PATTERN, YPAT, ZPAT, Y2PAT,
// ABS_BITS, INF_BITS, SIGN_SHIFT, BAND_BITS and NEAR_BELOW).  binary32's kernel, which
// also numbers a sweep's inputs and counts failures, is device_screen.cl's.

// The screen of one drawn unit (device_screen.cl's fuzzfarm_screen, the same answer;
// drawn and start unused: every x is xbits[e]; no failure counted on the device, no
// AGGREGATE): the histogram's bands the top BAND_BITS bits of x's exponent field (as
// oracle.histogram.exponent_bands), subnormal x their own row, near rows for |x| below
// NEAR_BELOW (2**(p - 2), p the format's precision, as oracle.histogram.input_rows).
__kernel void fuzzfarm_screen(__global const PATTERN *xbits, uint drawn,
                              __global const YPAT *ybits, ulong start, uint count,
                              __global uint *pass, __global float *wmax,
                              __global uchar *wpos, __global uint *hist,
                              __global uint *agg, __global uint *agg_count,
                              __global uint *agg_c0, __global uint *agg_c1,
                              __global const ZPAT *zbits, __global const PATTERN *wbits,
                              __global const Y2PAT *y2bits)
{
    __local uint lh[NROWS * NBINS];
    for (uint i = get_local_id(0); i < NROWS * NBINS; i += get_local_size(0)) lh[i] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint w = get_global_id(0);
    uint word = 0u, bpos = 0u;
    float best = -1.0f;
    for (uint j = 0; j < 32u; j++) {
        uint e = w * 32u + j;
        if (e >= count) break;
        WORD xb = xbits[e];
        float err;
        int ruled;
        if (!SCREEN_ANY(xb, SECOND(zbits, e), THIRD(wbits, e), ybits[e], OUT2_OF(y2bits, e),
                        &err, &ruled))
            continue;
        word |= 1u << j;
        if (ruled) continue;
        if (err > best) { best = err; bpos = j; }
        uint band = (uint)(xb >> (SIGN_SHIFT - BAND_BITS)) & (NBANDS - 1u);
        if ((xb & INF_BITS) == 0 && (xb & ABS_BITS) != 0) band = ROW_SUBNORMAL;
#if NEAR_ZERO_KIND || NEAR_POLE_KIND
        if ((xb & ABS_BITS) < NEAR_BELOW) {
            double xd = X_VALUE(xb);
            if (near_point(xd, NEAR_ZERO_KIND)) band = ROW_NEAR_ZERO;
            if (near_point(xd, NEAR_POLE_KIND)) band = ROW_NEAR_POLE;
        }
#endif
        atomic_inc(&lh[band * NBINS + error_bin(err)]);
    }
    pass[w] = word;
    agg[w] = 0u;
    agg_c0[w] = 0u;
    agg_c1[w] = 0u;
    wmax[w] = best;
    wpos[w] = (uchar)bpos;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_local_id(0); i < NROWS * NBINS; i += get_local_size(0))
        if (lh[i]) atomic_add(&hist[i], lh[i]);
}
