// std::vector growth: what a reallocation does with the elements it already holds, for element types whose
// move constructor is noexcept, may throw, is missing (a user-declared destructor, even `= default`), or is
// the only one; and, for every size up to 1024, how many elements the growth has relocated per element.
// A counting allocator counts the allocations; the capacities seen are printed in order.
#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include "tracer.h"

inline long allocations = 0;

template <class U>
struct CountingAlloc {
    using value_type = U;
    CountingAlloc() = default;
    template <class V> CountingAlloc(const CountingAlloc<V>&) {}
    U* allocate(std::size_t n) {
        ++allocations;
        return std::allocator<U>{}.allocate(n);
    }
    void deallocate(U* p, std::size_t n) { std::allocator<U>{}.deallocate(p, n); }
    template <class V> bool operator==(const CountingAlloc<V>&) const { return true; }
    template <class V> bool operator!=(const CountingAlloc<V>&) const { return false; }
};

struct Legacy {                         // a user-declared destructor: no implicit move constructor
    T t;
    explicit Legacy(int i) : t(i) {}
    ~Legacy() {}
};
struct Defaulted {                      // a destructor declared `= default` is user-declared too
    T t;
    explicit Defaulted(int i) : t(i) {}
    ~Defaulted() = default;
};
struct Modern {                         // nothing declared: the implicit move is noexcept because T's is
    T t;
    explicit Modern(int i) : t(i) {}
};
struct MoveOnlyThrowing {               // may throw on move, and cannot be copied
    Tracer<false> t;
    explicit MoveOnlyThrowing(int i) : t(i) {}
    MoveOnlyThrowing(MoveOnlyThrowing&&) = default;
    MoveOnlyThrowing(const MoveOnlyThrowing&) = delete;
};

constexpr int N = 1000;

template <class E>
void grow(const char* name, bool reserve_first) {
    std::vector<E, CountingAlloc<E>> v;
    allocations = 0;
    if (reserve_first) v.reserve(N);
    reset();
    std::size_t last_cap = v.capacity();
    std::printf("%s.caps=", name);
    for (int i = 0; i < N; ++i) {
        v.emplace_back(i);              // built in place: only reallocation copies or moves
        if (v.capacity() != last_cap) {
            last_cap = v.capacity();
            std::printf("%zu,", last_cap);
        }
    }
    std::printf("\n%s.allocations=%ld\n", name, allocations);
    std::printf("%s.nothrow_move=%d\n", name, int(std::is_nothrow_move_constructible_v<E>));
    report(name);
}

// For every n from 1 to SCAN: elements relocated by the growth so far over n; prints the largest ratio
// as relocated,n (the first n where it is reached) and the relocated count at a few n.
constexpr int SCAN = 1024;

void scan_ratios() {
    std::vector<T> v;
    reset();
    long best_relocated = 0, best_n = 1;
    std::printf("scan.at=");
    for (long n = 1; n <= SCAN; ++n) {
        v.emplace_back(int(n));
        const long relocated = counts.move + counts.copy;
        if (relocated * best_n > best_relocated * n) best_relocated = relocated, best_n = n;
        if (n == 513 || n == 1000 || n == 1024) std::printf("%ld:%ld,", n, relocated);
    }
    std::printf("\nscan.max=%ld,%ld\nscan.n=%d\n", best_relocated, best_n, SCAN);
    reset();
}

int main() {
    std::printf("n=%d\n", N);
    grow<T>("noexcept", false);
    grow<Tracer<false>>("throwing", false);  // the same template, without noexcept on its move constructor
    grow<Legacy>("legacy", false);
    grow<Defaulted>("defaulted", false);
    grow<Modern>("modern", false);
    grow<MoveOnlyThrowing>("move_only", false);
    grow<T>("reserved", true);
    scan_ratios();
}
