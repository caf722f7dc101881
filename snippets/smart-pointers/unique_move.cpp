// Moving a unique_ptr hands the object over and leaves the source empty; no allocation, no copy of the object.
#include <cstdio>
#include <memory>

#include "counting.h"

int main() {
    std::unique_ptr<int> a = std::make_unique<int>(42);
    int* address = a.get();
    Window w;
    std::unique_ptr<int> b = std::move(a);
    std::printf("allocations=%zu\nsource_null=%d\nsame_object=%d\nvalue=%d\n", w.allocations(), (int)(a == nullptr),
                (int)(b.get() == address), *b);
}
