// Copies and moves of return by value, counted. Built four ways: -std=c++14 / -std=c++17, each with and
// without -fno-elide-constructors (and -O2 in all four); once more with -std=c++20 for rref_param.
#include <utility>

#include "tracer.h"

T prvalue() { return T{1}; }             // returns a prvalue: C++17 guarantees no temporary
T nested() { return T(T(T{1})); }        // a prvalue made from prvalues
T named() {                              // NRVO: the compiler may build `t` in the caller's object
    T t{1};
    t.value += 1;
    return t;
}
T two_named(bool first) {                // two candidates: NRVO cannot pick one
    T x{1}, y{2};
    if (first) return x;
    return y;
}
T param(T t) { return t; }               // a parameter is never built in the caller's object
T rref_param(T&& t) { return t; }        // `t` names an rvalue reference: an lvalue (implicitly moved from C++20)
T moved_local() {                        // `return std::move(t)` names an xvalue, not the local
    T t{1};
    return std::move(t);                 // g++ -Wall warns: -Wpessimizing-move
}

int main() {
    reset();
    { T a = prvalue(); }
    report("prvalue");
    { T a = nested(); }
    report("nested");
    { T a = named(); }
    report("named");
    { T a = two_named(true); }
    report("two_named");
    { T a = param(T{1}); }
    report("param");
    { T a = rref_param(T{1}); }
    report("rref_param");
    { T a = moved_local(); }
    report("moved_local");
}
