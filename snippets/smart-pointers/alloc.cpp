// Heap allocations of make_unique, make_shared, shared_ptr(new T), copies and unique_ptr -> shared_ptr.
#include <cstdio>
#include <memory>

#include "counting.h"

struct Widget { long v[8]; };  // 64 bytes

template <class F>
void report(const char* name, F make) {
    Window w;
    auto keep = make();
    std::printf("%s.allocations=%zu\n%s.bytes=%zu\n", name, w.allocations(), name, w.bytes());
}

int main() {
    std::printf("sizeof_widget=%zu\n", sizeof(Widget));
    report("make_unique", [] { return std::make_unique<Widget>(); });
    report("make_shared", [] { return std::make_shared<Widget>(); });
    report("shared_new", [] { return std::shared_ptr<Widget>(new Widget); });

    auto owner = std::make_shared<Widget>();
    {
        Window w;
        std::shared_ptr<Widget> copy = owner;
        std::weak_ptr<Widget> watch = owner;
        std::printf("copy.allocations=%zu\ncopy.use_count=%ld\n", w.allocations(), owner.use_count());
    }
    {
        Window w;
        std::shared_ptr<Widget> moved = std::move(owner);  // the count moves with it, unchanged
        std::printf("move.allocations=%zu\nmove.use_count=%ld\nmove.source_null=%d\n", w.allocations(), moved.use_count(),
                    (int)(owner == nullptr));
    }

    auto unique = std::make_unique<Widget>();
    Widget* address = unique.get();
    Window w;
    std::shared_ptr<Widget> shared = std::move(unique);
    std::printf("from_unique.allocations=%zu\nfrom_unique.bytes=%zu\nfrom_unique.same_object=%d\nfrom_unique.source_null=%d\n",
                w.allocations(), w.bytes(), (int)(shared.get() == address), (int)(unique == nullptr));
}
