// What a copy of a shared_ptr costs before and after the process has started a second thread.
// libstdc++ updates the counts with plain adds while glibc's __libc_single_threaded is true,
// and with atomic read-modify-writes once a thread has been created (it never goes back).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <sys/single_threaded.h>

__attribute__((noinline)) void by_value(std::shared_ptr<int> p) { asm volatile("" : : "r"(p.get()) : "memory"); }
__attribute__((noinline)) void by_ref(const std::shared_ptr<int>& p) { asm volatile("" : : "r"(p.get()) : "memory"); }

// Best of a few repetitions, in nanoseconds per call.
template <class F>
double ns_per_call(F f) {
    const int n = 200000;
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) f();
        auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
    }
    return best;
}

int main() {
    auto p = std::make_shared<int>(7);
    int single_before = __libc_single_threaded;
    double value_before = ns_per_call([&] { by_value(p); });
    double ref_before = ns_per_call([&] { by_ref(p); });
    std::thread([] {}).join();  // one thread, already finished
    int single_after = __libc_single_threaded;
    double value_after = ns_per_call([&] { by_value(p); });
    double ref_after = ns_per_call([&] { by_ref(p); });
    std::printf("single_before=%d\nsingle_after=%d\nvalue_before_ns=%.4f\nvalue_after_ns=%.4f\n"
                "ref_before_ns=%.4f\nref_after_ns=%.4f\nuse_count=%ld\n",
                single_before, single_after, value_before, value_after, ref_before, ref_after, p.use_count());
}
