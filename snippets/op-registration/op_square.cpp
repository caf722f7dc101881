#include "registry.h"

static int square_impl(int x) { return x * x; }

REGISTER_OP(square, &square_impl);
