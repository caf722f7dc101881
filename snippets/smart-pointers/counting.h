// Counting global operator new / delete: every heap allocation of the program goes through here.
// Each block carries a 16-byte header with its size, so that unsized deletes also know what they free
// (16 keeps the alignment malloc gives, which is what operator new must return).
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>

namespace counting {
inline std::size_t allocations = 0;   // calls of operator new
inline std::size_t bytes = 0;         // bytes requested by those calls
inline std::size_t live = 0;          // bytes requested and not yet freed
}  // namespace counting

void* operator new(std::size_t n) {
    void* raw = std::malloc(n + 16);
    if (!raw) throw std::bad_alloc();
    *static_cast<std::size_t*>(raw) = n;
    ++counting::allocations;
    counting::bytes += n;
    counting::live += n;
    return static_cast<char*>(raw) + 16;
}

void operator delete(void* p) noexcept {
    if (!p) return;
    char* raw = static_cast<char*>(p) - 16;
    counting::live -= *reinterpret_cast<std::size_t*>(raw);
    std::free(raw);
}

void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

// What happened between two points of the program.
struct Window {
    std::size_t a0 = counting::allocations, b0 = counting::bytes;
    std::size_t allocations() const { return counting::allocations - a0; }
    std::size_t bytes() const { return counting::bytes - b0; }
};
