#include "twice.h"

// Uses twice with int and double only; nothing here mentions float.
int use_int(int a) { return twice(a); }
double use_double(double b) { return twice(b); }
