// Two threads calling only get() on one LRU, built with -fsanitize=thread.
//   race hand shared    HandLRU, each get() under a std::shared_lock (a reader lock): get() still relinks
//   race hand unique    HandLRU, each get() under a std::unique_lock
//   race list shared    LRU on std::list under a reader lock: the relinking happens inside libstdc++.so
// The second thread starts its gets only after the first has finished, told by a relaxed atomic flag: the
// threads never run at the same time (the list cannot be corrupted, the program cannot hang), yet nothing
// orders the two threads' accesses. A relaxed store/load is no synchronisation, and two reader locks do not
// synchronise with each other either: under the C++ memory model those accesses are a data race.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "lru.h"

struct Plain { template <class K, class T> using map = std::unordered_map<K, T>; };

template <class Cache>
static void run(bool reader_lock) {
    Cache cache(64);
    for (long k = 0; k < 64; ++k) cache.put(k, k);
    std::shared_mutex m;
    std::atomic<bool> first_done{false};
    long found[2] = {0, 0};
    auto reader = [&](int t) {
        if (t == 1)
            while (!first_done.load(std::memory_order_relaxed)) std::this_thread::yield();
        for (int i = 0; i < 2000; ++i) {
            long key = (i * 7 + t * 13) % 64;
            if (reader_lock) {
                std::shared_lock<std::shared_mutex> lock(m);
                found[t] += cache.get(key).has_value();
            } else {
                std::unique_lock<std::shared_mutex> lock(m);
                found[t] += cache.get(key).has_value();
            }
        }
        if (t == 0) first_done.store(true, std::memory_order_relaxed);
    };
    std::thread a(reader, 0), b(reader, 1);
    a.join();
    b.join();
    std::printf("found=%ld\nconsistent=%d\n", found[0] + found[1], cache.consistent());
}

int main(int argc, char** argv) {
    const std::string impl = argc > 1 ? argv[1] : "hand";
    const bool reader_lock = argc > 2 && std::string(argv[2]) == "shared";
    if (impl == "list") run<LRU<long, long, Plain>>(reader_lock);
    else run<HandLRU<long, long>>(reader_lock);
}
