// Included by inline_a.cpp and inline_b.cpp: one definition of each function per translation unit.
#pragma once
#ifdef WITH_INLINE
#define MAYBE_INLINE inline
#else
#define MAYBE_INLINE
#endif

// small enough that g++ -O2 inlines it with or without the keyword
MAYBE_INLINE int helper(int x) { return 3 * x + 1; }

// a dozen arithmetic steps: above GCC's -O2 limit for a function not declared inline, under its limit for one
// declared inline
MAYBE_INLINE int medium(int x) {
    int s = x;
    s = s * 31 + (x >> 1); s ^= s >> 7;
    s = s * 29 + (x >> 2); s ^= s >> 5;
    s = s * 23 + (x >> 3); s ^= s >> 3;
    s = s * 19 + (x >> 4); s ^= s >> 11;
    s = s * 13 + (x >> 5); s ^= s >> 9;
    s = s * 11 + (x >> 6); s ^= s >> 13;
    return s;
}
