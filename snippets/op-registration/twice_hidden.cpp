#include "twice_decl.h"

// The definition lives only in this .cpp file. Without an explicit instantiation no code is
// generated for it here, because nothing in this file uses twice<int>.
template <typename T>
T twice(T x) {
  return x + x;
}

#ifdef OPREG_EXPLICIT
template int twice<int>(int);
#endif
