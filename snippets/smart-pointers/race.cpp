// Three ways for two threads to share one shared_ptr, built with -fsanitize=thread.
//   assign: both threads assign to the same shared_ptr object
//   copy:   both threads only copy it (the counts in the control block change concurrently)
//   atomic: both threads assign to a std::atomic<std::shared_ptr<int>> (C++20)
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

std::shared_ptr<int> shared = std::make_shared<int>(0);
std::atomic<std::shared_ptr<int>> guarded{std::make_shared<int>(0)};
long copies_seen = 0;

void assign(int id) {
    for (int i = 0; i < 2000; ++i) shared = std::make_shared<int>(id);
}

void copy(int) {
    long max_seen = 0;
    for (int i = 0; i < 20000; ++i) {
        std::shared_ptr<int> local = shared;
        max_seen = std::max(max_seen, local.use_count());
    }
    (void)max_seen;
}

void atomic_assign(int id) {
    for (int i = 0; i < 2000; ++i) guarded.store(std::make_shared<int>(id));
}

int main(int argc, char** argv) {
    void (*work)(int) = std::strcmp(argv[1], "assign") == 0 ? assign : std::strcmp(argv[1], "copy") == 0 ? copy : atomic_assign;
    std::thread t1(work, 1), t2(work, 2);
    t1.join();
    t2.join();
    std::printf("use_count_after=%ld\n", std::strcmp(argv[1], "atomic") == 0 ? guarded.load().use_count() - 1 : shared.use_count());
}
