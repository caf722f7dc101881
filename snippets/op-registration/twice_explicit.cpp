#include "twice.h"

// Explicit instantiation: emit twice<float> in this object although nothing calls it.
template float twice<float>(float);
