// Forwarding references: which overload an argument reaches, and what a holder that stores it does,
// with std::forward, without it (the named parameter), and with std::move.
#include <utility>

#include "tracer.h"

const char* which(const T&) { return "copy"; }
const char* which(T&&) { return "move"; }

template <class U> const char* with_forward(U&& x) { return which(std::forward<U>(x)); }
template <class U> const char* plain(U&& x) { return which(x); }
template <class U> const char* with_move(U&& x) { return which(std::move(x)); }

struct Holder {
    T held;
    template <class U> explicit Holder(U&& u, int) : held(std::forward<U>(u)) {}  // forwards
    template <class U> explicit Holder(U&& u, long) : held(u) {}                    // names it
};

int main() {
    T lv{1};
    std::printf("pick.forward=%s,%s\n", with_forward(lv), with_forward(T{2}));
    std::printf("pick.plain=%s,%s\n", plain(lv), plain(T{2}));
    std::printf("pick.move=%s,%s\n", with_move(lv), with_move(T{2}));
    reset();
    { Holder h(lv, 0); }
    report("hold.forward.lvalue");
    { Holder h(T{3}, 0); }
    report("hold.forward.rvalue");
    { Holder h(lv, 0L); }
    report("hold.plain.lvalue");
    { Holder h(T{3}, 0L); }
    report("hold.plain.rvalue");
    // std::move on a forwarding reference moves the caller's lvalue away
    T mine{5};
    { T taken = [](auto&& x) { return T(std::move(x)); }(mine); }
    std::printf("steal.caller_value=%d\n", mine.value);
}
