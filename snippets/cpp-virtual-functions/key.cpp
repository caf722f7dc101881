// The translation unit with the key functions of Base, Derived, Poly, Keyed and Abstract.
#include <cstring>
#include <typeinfo>

#include "vf.h"

Trace trace;
int nd_dtors = 0, vd_dtors = 0;

const void* vptr_of(const void* object) {
    const void* p;
    std::memcpy(&p, object, sizeof p);  // implementation-defined: the Itanium ABI puts the vptr first
    return p;
}

void Plain::f() {}
void Poly::f() {}
void Keyed::key() {}

Base::Base() {
    trace.vptr[0] = vptr_of(this);
    trace.name[0] = name_of(*this);
    trace.tname = typeid(*this).name();
}
Base::~Base() {
    trace.vptr[3] = vptr_of(this);
    trace.name[3] = name_of(*this);
}
Derived::Derived() {
    trace.vptr[1] = vptr_of(this);
    trace.name[1] = name_of(*this);
}
Derived::~Derived() {
    trace.vptr[2] = vptr_of(this);
    trace.name[2] = name_of(*this);
}

Abstract::Abstract() { call_f(*this); }
Abstract::~Abstract() {}

NB::~NB() {}
ND::~ND() { ++nd_dtors; }
VB::~VB() {}
VD::~VD() { ++vd_dtors; }

int call_base(const Base& b) { return b.value(); }
int call_derived(const Derived& d) { return d.value(); }
int call_leaf(const Leaf& l) { return l.value(); }

Inline* make_inline() { return new Inline; }

int add(int a, int b) { return a + b; }
double add(double a, double b) { return a + b; }
namespace ns { int add(int a, int b) { return a + b; } }
extern "C" int add_c(int a, int b) { return a + b; }
