// A value type that counts what happens to it: constructions, copies, moves, assignments, destructions.
// Tracer<true> has a noexcept move constructor, Tracer<false> one that may throw (it never does).
// All Tracers share one set of counters; report() prints them as one `name=...` line and resets them.
#pragma once
#include <cstdio>

struct Counts {
    long ctor = 0, copy = 0, move = 0, copy_assign = 0, move_assign = 0, dtor = 0;
};
static Counts counts;  // one translation unit per program

inline void reset() { counts = Counts{}; }

// name=copies,moves (constructors only: what the page counts)
inline void report(const char* name) {
    std::printf("%s=%ld,%ld\n", name, counts.copy, counts.move);
    reset();
}

template <bool NoexceptMove>
struct Tracer {
    int value = 0;
    Tracer() { ++counts.ctor; }
    explicit Tracer(int v) : value(v) { ++counts.ctor; }
    Tracer(const Tracer& o) : value(o.value) { ++counts.copy; }
    Tracer(Tracer&& o) noexcept(NoexceptMove) : value(o.value) {
        o.value = -1;  // a moved-from Tracer says so
        ++counts.move;
    }
    Tracer& operator=(const Tracer& o) {
        value = o.value;
        ++counts.copy_assign;
        return *this;
    }
    Tracer& operator=(Tracer&& o) noexcept(NoexceptMove) {
        value = o.value;
        o.value = -1;
        ++counts.move_assign;
        return *this;
    }
    ~Tracer() { ++counts.dtor; }
};

using T = Tracer<true>;
