#include "inline.h"
int from_a(int x) { return helper(x) * 2; }
// two calls, so that GCC's rule for a function called once does not apply
int medium_twice(int x) { return medium(x) + medium(x + 1); }
int from_b(int x);
int main(int argc, char**) { return from_a(argc) + from_b(argc) == 16 ? 0 : 1; }
