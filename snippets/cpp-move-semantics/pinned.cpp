// A type that can be neither copied nor moved, returned by value as a prvalue and as a named local.
// PINNED_NAMED selects the named local (which needs a move constructor even when NRVO would apply).
#include <cstdio>
#include <mutex>

struct Pinned {
    int value;
    explicit Pinned(int v) : value(v) {}
    Pinned(const Pinned&) = delete;
    Pinned(Pinned&&) = delete;
};

#ifndef PINNED_NAMED
Pinned make() { return Pinned{7}; }
std::mutex make_mutex() { return std::mutex{}; }  // std::mutex: no copy, no move
#else
Pinned make() {
    Pinned p{7};
    return p;
}
std::mutex make_mutex() {
    std::mutex m;
    return m;
}
#endif

int main() {
    Pinned p = make();
    std::mutex m = make_mutex();
    m.lock();
    m.unlock();
    std::printf("value=%d\n", p.value);
}
