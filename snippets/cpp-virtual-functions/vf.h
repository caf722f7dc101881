// Classes of the cpp-virtual-functions page. g++ on x86-64 Linux lays them out by the Itanium C++ ABI:
// a polymorphic object starts with a vptr that points 16 bytes into its class's vtable (after the
// offset-to-top and typeinfo slots).
#pragma once

// Same data, one of them polymorphic: the difference in sizeof is the vptr.
struct Plain { long x = 0; void f(); };
struct Poly { long x = 0; virtual void f(); };

// Base's key function (its first non-inline, non-pure virtual function) is ~Base, defined in key.cpp:
// that translation unit, and only that one, emits Base's vtable.
struct Base {
    Base();
    virtual ~Base();
    virtual const char* name() const { return "Base"; }
    virtual int value() const { return 1; }
    long b = 1;
};

struct Derived : Base {
    Derived();
    ~Derived() override;
    const char* name() const override { return "Derived"; }
    int value() const override { return 2; }
    long d = 2;
};

// final: no class can override value() below Leaf, so a call through a Leaf& has one possible target.
struct Leaf final : Base {
    int value() const override { return 3; }
};

// Key function Keyed::key (key.cpp); Inline has none: every TU that needs its vtable emits a weak copy.
struct Keyed { virtual void key(); virtual void other() {} };
struct Inline { virtual void a() {} };

// Pure virtual f(): Abstract's constructor calls it through call_f (another TU) before Concrete exists.
struct Abstract { Abstract(); virtual ~Abstract(); virtual void f() = 0; };
struct Concrete : Abstract { void f() override {} };

// Deleting through a base pointer: without and with a virtual destructor.
struct NB { ~NB(); long a = 0; };
struct ND : NB { ~ND(); long extra[3] = {}; };
struct VB { virtual ~VB(); long a = 0; };
struct VD : VB { ~VD() override; long extra[3] = {}; };

// Multiple inheritance: two vptrs; B's part of a C sits 16 bytes in.
struct A { virtual ~A() = default; virtual int fa() const { return 1; } long a = 0; };
struct B { virtual ~B() = default; virtual int fb() const { return 10; } long b = 0; };
struct C : A, B { int fb() const override { return 20; } long c = 0; };

// What the constructors and destructors of Base and Derived saw (filled in key.cpp).
struct Trace {
    const void* vptr[4];      // Base ctor, Derived ctor body, ~Derived body, ~Base body
    const char* name[4];      // the virtual name() called through name_of() at the same points
    const char* tname = "";   // typeid(*this).name() inside Base's constructor
};
extern Trace trace;
extern int nd_dtors, vd_dtors;

const void* vptr_of(const void* object);     // the first pointer of an object (memcpy), key.cpp
const char* name_of(const Base& b);          // b.name() from another TU: a real virtual call, main.cpp
void call_f(Abstract& a);                    // a.f(), main.cpp
int call_base(const Base& b);                // b.value(), key.cpp: what -O2 makes of it is read with objdump
int call_derived(const Derived& d);          // d.value(): Derived is not final, key.cpp
int call_leaf(const Leaf& l);                // l.value() through a final class, key.cpp
Inline* make_inline();                       // key.cpp also needs Inline's vtable

int add(int a, int b);                       // mangled names, key.cpp
double add(double a, double b);
namespace ns { int add(int a, int b); }
extern "C" int add_c(int a, int b);
