// Included by inline_a.cpp and inline_b.cpp: one definition of helper per translation unit.
#pragma once
#ifdef WITH_INLINE
inline
#endif
int helper(int x) { return 3 * x + 1; }
