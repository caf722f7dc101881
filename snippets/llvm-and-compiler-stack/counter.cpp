// Two threads increment one counter: a volatile int, or a std::atomic<int> (argument "atomic").
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>

extern "C" {
volatile int v_count;
std::atomic<int> a_count;
void inc_volatile(void) { v_count = v_count + 1; }
void inc_atomic(void) { a_count.fetch_add(1); }
}

int main(int argc, char** argv) {
    const bool atomic = argc > 1 && std::strcmp(argv[1], "atomic") == 0;
    const int n = 20000;
    auto work = [&] {
        for (int i = 0; i < n; ++i) {
            if (atomic) inc_atomic(); else inc_volatile();
        }
    };
    std::thread t1(work), t2(work);
    t1.join();
    t2.join();
    std::printf("expected=%d\ncount=%d\n", 2 * n, atomic ? a_count.load() : v_count);
    return 0;
}
