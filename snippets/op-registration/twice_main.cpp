#include <cstdio>

#include "twice_decl.h"

int main() {
  std::printf("twice(21) = %d\n", twice(21));
  return 0;
}
