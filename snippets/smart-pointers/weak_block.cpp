// make_shared puts the object inside the control block: a weak_ptr that outlives the last owner keeps
// the object's memory allocated, although its destructor has run. shared_ptr(new T) frees it at once.
#include <cstdio>
#include <memory>

#include "counting.h"

struct Big {
    static inline int destroyed = 0;
    char buf[1 << 20];
    ~Big() { ++destroyed; }
};

template <class Make>
void run(const char* name, Make make) {
    std::size_t base = counting::live;
    Big::destroyed = 0;
    std::shared_ptr<Big> owner = make();
    std::weak_ptr<Big> watch = owner;
    std::printf("%s.live_with_owner=%zu\n", name, counting::live - base);
    owner.reset();  // the last owner goes: the destructor runs now
    std::printf("%s.destroyed_after_reset=%d\n%s.expired=%d\n", name, Big::destroyed, name, (int)watch.expired());
    std::printf("%s.live_with_weak_only=%zu\n", name, counting::live - base);
    watch.reset();  // the last weak_ptr goes: the control block is freed
    std::printf("%s.live_after_weak_reset=%zu\n", name, counting::live - base);
}

int main() {
    std::printf("sizeof_big=%zu\n", sizeof(Big));
    run("make_shared", [] { return std::make_shared<Big>(); });
    run("shared_new", [] { return std::shared_ptr<Big>(new Big); });
}
