#include "registry.h"

static int relu_impl(int x) { return x > 0 ? x : 0; }

REGISTER_OP(relu, &relu_impl);
