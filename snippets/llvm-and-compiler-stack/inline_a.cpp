#include "inline.h"
int from_a(int x) { return helper(x) * 2; }
int from_b(int x);
int main(int argc, char**) { return from_a(argc) + from_b(argc) == 16 ? 0 : 1; }
