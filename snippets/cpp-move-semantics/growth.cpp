// std::vector growth: what a reallocation does with the elements it already holds, for element types whose
// move constructor is noexcept, may throw, is missing (a user-declared destructor), or is the only one.
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

struct Throwing {                       // move constructor not noexcept (Tracer<false>)
    Tracer<false> t;
    explicit Throwing(int i) : t(i) {}
};
struct Legacy {                         // a user-declared destructor: no implicit move constructor
    T t;
    explicit Legacy(int i) : t(i) {}
    ~Legacy() {}
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

int main() {
    std::printf("n=%d\n", N);
    grow<T>("noexcept", false);
    grow<Throwing>("throwing", false);
    grow<Legacy>("legacy", false);
    grow<Modern>("modern", false);
    grow<MoveOnlyThrowing>("move_only", false);
    grow<T>("reserved", true);
}
