// Never names relu or square: it only looks them up by string at run time.
#include <cstdio>

#include "registry.h"

int main() {
  std::printf("main starts\n");
  std::printf("ops %d\n", opreg_count());
  for (int i = 0; i < opreg_count(); ++i) std::printf("op %s\n", opreg_name(i));
  if (opreg_count() > 0) std::printf("call %s(-3) = %d\n", opreg_name(0), opreg_call(opreg_name(0), -3));
  return 0;
}
