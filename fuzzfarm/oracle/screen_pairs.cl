// fuzzfarm's device screen: the tests' kernel of every precision (fuzzfarm/oracle/
// screen_source.py puts this file last; the precision's file defines SCREEN_ANY, the
// verdict on one input, and the host PATTERN, YPAT, ZPAT, Y2PAT).

// The screen of arbitrary (x, y) pairs (with z, TWO_ARGS; w, THREE_ARGS; y2, a second
// output), for the tests: verdict[i] as SCREEN_ANY's, err[i] in ULPs.
__kernel void fuzzfarm_screen_pairs(__global const PATTERN *xbits, __global const YPAT *ybits,
                                    __global uchar *verdict, __global float *err,
                                    __global const ZPAT *zbits, __global const PATTERN *wbits,
                                    __global const Y2PAT *y2bits)
{
    uint i = get_global_id(0);
    float e = 0.0f;
    int ruled;
    verdict[i] = (uchar)SCREEN_ANY(xbits[i], SECOND(zbits, i), THIRD(wbits, i), ybits[i],
                                   OUT2_OF(y2bits, i), &e, &ruled);
    err[i] = e;
}
