#include "inline.h"
int from_b(int x) { return helper(x) * 2; }
