// Calls into lib.so: one call with seven arguments, one to outer.
#include <cstdio>
extern "C" long arg2(long, long, long, long, long, long, long);
extern "C" long outer(long);

int main() {
    std::printf("arg2=%ld\nouter=%ld\n", arg2(10, 20, 30, 40, 50, 60, 70), outer(5));
    return 0;
}
