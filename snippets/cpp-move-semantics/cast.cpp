// std::move is a cast: what it returns, and what the initialisation it feeds picks, for two types
// (the counting Tracer and std::string, whose heap buffer is either taken over or copied).
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "tracer.h"

static std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

int main() {
    T x{7};
    const T c{8};
    reset();
    (void)std::move(x);  // the cast alone
    report("cast_only");
    std::printf("cast_only.value=%d\n", x.value);
    std::printf("type.nonconst=%d\n", int(std::is_same_v<decltype(std::move(x)), T&&>));
    std::printf("type.const=%d\n", int(std::is_same_v<decltype(std::move(c)), const T&&>));

    T from_const = std::move(c);
    report("const");
    std::printf("const.source_value=%d\n", c.value);
    T from_nonconst = std::move(x);
    report("nonconst");
    std::printf("nonconst.source_value=%d\n", x.value);

    // std::string: a long string (on the heap, past the small-string buffer)
    const std::string cs(100, 'a');
    const std::uintptr_t cs_buf = addr(cs.data());
    std::printf("string.length=%zu\n", cs.size());  // before the move
    std::string s1 = std::move(cs);
    std::printf("string.const=%d,%zu\n", int(addr(s1.data()) == cs_buf), cs.size());
    std::string ns(100, 'a');
    const std::uintptr_t ns_buf = addr(ns.data());
    std::string s2 = std::move(ns);
    std::printf("string.nonconst=%d,%zu\n", int(addr(s2.data()) == ns_buf), ns.size());
    (void)from_const;
    (void)from_nonconst;
}
