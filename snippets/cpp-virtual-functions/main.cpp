// Prints key=value lines about vptrs and vtables; `prog pure` calls a pure virtual function.
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <memory>
#include <typeinfo>

#include "vf.h"

// The vtables by their symbols (Itanium names): _ZTV<class>.
extern "C" const char vt_Base[] __asm__("_ZTV4Base");
extern "C" const char vt_Derived[] __asm__("_ZTV7Derived");
extern "C" const char vt_C[] __asm__("_ZTV1C");

int g_mutable = 0;

const char* name_of(const Base& b) { return b.name(); }
void call_f(Abstract& a) { a.f(); }

static const char* which(const void* vptr) {
    static char out[64];
    const char* sym = nullptr;
    long off = 0;
    const char* names[] = {"_ZTV4Base", "_ZTV7Derived"};
    const char* bases[] = {vt_Base, vt_Derived};
    for (int i = 0; i < 2; ++i) {
        long d = static_cast<const char*>(vptr) - bases[i];
        if (d >= 0 && d < 64) { sym = names[i]; off = d; }
    }
    std::snprintf(out, sizeof out, "%s+%ld", sym ? sym : "?", off);
    return out;
}

// The permissions of the mapping that holds address p, from /proc/self/maps.
static void perms(const char* key, const void* p) {
    std::FILE* f = std::fopen("/proc/self/maps", "r");
    char line[512];
    auto a = reinterpret_cast<std::uintptr_t>(p);
    while (f && std::fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char pr[8];
        if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, pr) == 3 && lo <= a && a < hi) {
            std::printf("%s=%s\n", key, pr);
            break;
        }
    }
    if (f) std::fclose(f);
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "pure") == 0) {
        std::puts("constructing=Concrete");
        std::fflush(stdout);
        Concrete c;  // Abstract() calls f() while the object is still an Abstract
        std::puts("unreachable=1");
        return 0;
    }
    std::printf("sizeof.plain=%zu\nsizeof.poly=%zu\nsizeof.base=%zu\nsizeof.derived=%zu\nsizeof.c=%zu\n",
                sizeof(Plain), sizeof(Poly), sizeof(Base), sizeof(Derived), sizeof(C));

    {
        Derived d;  // the trace below is of this one object's construction and destruction
        std::printf("name.after=%s\n", name_of(d));
        std::printf("vptr.after=%s\n", which(vptr_of(&d)));
        // The two slots before the address point: offset-to-top, then the typeinfo pointer.
        auto vt = static_cast<const void* const*>(vptr_of(&d));
        std::printf("slot.typeinfo_is_typeid=%d\n", vt[-1] == static_cast<const void*>(&typeid(Derived)));
        std::printf("slot.offset_to_top=%ld\n", reinterpret_cast<const long*>(vt)[-2]);
        perms("perms.vtable", vt);
        perms("perms.code", reinterpret_cast<const void*>(&name_of));
        perms("perms.global", &g_mutable);
        std::printf("call.base_on_derived=%d\ncall.derived=%d\ncall.leaf=%d\n", call_base(d), call_derived(d),
                    call_leaf(Leaf{}));
    }
    for (int i = 0; i < 4; ++i) std::printf("phase%d.vptr=%s\nphase%d.name=%s\n", i, which(trace.vptr[i]), i, trace.name[i]);
    std::printf("typeid.in_base_ctor=%s\n", trace.tname);
    {
        Derived d, e;
        Base base;
        std::printf("same_vptr.two_derived=%d\n", vptr_of(&d) == vptr_of(&e));
        std::printf("same_vptr.base_derived=%d\n", vptr_of(&d) == vptr_of(&base));
        std::printf("vptr.base_object=%s\n", which(vptr_of(&base)));
    }
    {
        NB* p = new ND;
        delete p;  // undefined behaviour: NB has no virtual destructor
        VB* q = new VD;
        delete q;
        std::printf("dtors.nonvirtual=%d\ndtors.virtual=%d\n", nd_dtors, vd_dtors);
        { std::shared_ptr<NB> sp(new ND); }  // the control block's deleter deletes an ND*
        std::printf("dtors.shared_ptr_nonvirtual=%d\n", nd_dtors);
    }
    {
        C c;
        B* pb = &c;
        std::printf("mi.b_offset=%ld\n", reinterpret_cast<char*>(pb) - reinterpret_cast<char*>(&c));
        auto vt = static_cast<const void* const*>(vptr_of(pb));
        std::printf("mi.b_offset_to_top=%ld\n", reinterpret_cast<const long*>(vt)[-2]);
        std::printf("mi.b_vptr_in_c_vtable=%ld\n", reinterpret_cast<const char*>(vt) - vt_C);
        std::printf("mi.fb=%d\n", pb->fb());
    }
    Keyed k;
    Inline* in = make_inline();
    Inline local;
    std::printf("keyed_inline_same_vptr=%d\n", vptr_of(in) == vptr_of(&local));
    delete in;
    std::printf("add=%d,%g,%d,%d\n", add(1, 2), add(1.5, 2.0), ns::add(3, 4), add_c(5, 6));
    return k.key(), 0;
}
