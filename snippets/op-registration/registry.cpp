#include "registry.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {
// A function-local static is built on first use, so it exists whenever a registrar in another
// translation unit runs (a namespace-scope table could still be unconstructed at that point).
std::vector<std::pair<std::string, OpFn>>& table() {
  static std::vector<std::pair<std::string, OpFn>> ops;
  return ops;
}
}  // namespace

bool opreg_add(const char* name, OpFn fn) {
  std::printf("register %s\n", name);
  std::fflush(stdout);
  table().emplace_back(name, fn);
  return true;
}

extern "C" int opreg_count() { return static_cast<int>(table().size()); }

extern "C" const char* opreg_name(int i) { return table().at(i).first.c_str(); }

extern "C" int opreg_call(const char* name, int x) {
  for (auto& [n, fn] : table())
    if (n == name) return fn(x);
  return -1;
}
