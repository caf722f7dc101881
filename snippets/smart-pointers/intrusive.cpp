// c10::intrusive_ptr (what an at::Tensor is) against std::shared_ptr, built against the torch wheel's headers.
#include <ATen/core/Tensor.h>
#include <c10/util/intrusive_ptr.h>

#include <cstdio>
#include <memory>

#include "counting.h"

struct Payload { long v[6]; };  // 48 bytes of data

// The count lives in the object: intrusive_ptr_target holds it.
struct Node : c10::intrusive_ptr_target {
    Payload p{};
    static inline int destroyed = 0, released = 0;
    ~Node() override { ++destroyed; }
    void release_resources() override { ++released; }  // the last strong reference went, a weak one is left
};

struct Plain {
    Payload p{};
};

int main() {
    std::printf("raw=%zu\n", sizeof(void*));
    std::printf("intrusive=%zu\n", sizeof(c10::intrusive_ptr<Node>));
    std::printf("weak_intrusive=%zu\n", sizeof(c10::weak_intrusive_ptr<Node>));
    std::printf("shared=%zu\n", sizeof(std::shared_ptr<Plain>));
    std::printf("tensor=%zu\n", sizeof(at::Tensor));
    std::printf("tensor_impl_ptr=%zu\n", sizeof(c10::intrusive_ptr<c10::TensorImpl>));
    std::printf("target=%zu\n", sizeof(c10::intrusive_ptr_target));
    std::printf("payload=%zu\n", sizeof(Payload));
    std::printf("node=%zu\n", sizeof(Node));

    {  // one allocation each way; where the counts are is what differs
        Window w;
        auto p = c10::make_intrusive<Node>();
        std::printf("make_intrusive.allocations=%zu\nmake_intrusive.bytes=%zu\n", w.allocations(), w.bytes());
    }
    {
        Window w;
        auto p = std::make_shared<Plain>();
        std::printf("make_shared.allocations=%zu\nmake_shared.bytes=%zu\n", w.allocations(), w.bytes());
    }

    auto p = c10::make_intrusive<Node>();
    std::printf("fresh.use_count=%u\n", p.use_count());
    {
        Window w;
        auto copy = p;  // an atomic increment inside *p, no allocation
        std::printf("copy.use_count=%u\ncopy.allocations=%zu\n", p.use_count(), w.allocations());
        auto moved = std::move(copy);
        std::printf("move.use_count=%u\nmove.source_null=%d\n", p.use_count(), (int)!copy.defined());
    }
    std::printf("after_scope.use_count=%u\n", p.use_count());

    // To a raw pointer and back: release() keeps the reference, reclaim() takes it over, nothing is counted.
    Node* address = p.get();
    Node* raw = p.release();
    std::printf("release.handle_null=%d\n", (int)!p.defined());
    auto back = c10::intrusive_ptr<Node>::reclaim(raw);
    std::printf("reclaim.use_count=%u\nreclaim.same_object=%d\n", back.use_count(), (int)(back.get() == address));

    // A second owner from a plain pointer shares the one count: no second control block, no double free.
    int destroyed_before_second = Node::destroyed;
    {
        auto second = c10::intrusive_ptr<Node>::unsafe_reclaim_from_nonowning(address);
        std::printf("nonowning.use_count=%u\n", back.use_count());
    }
    std::printf("nonowning.after_use_count=%u\nnonowning.destroyed=%d\n", back.use_count(),
                Node::destroyed - destroyed_before_second);

    // A weak reference: the last strong one runs release_resources(), the object's memory waits for the weak one.
    int destroyed_before = Node::destroyed;
    std::size_t live_before = counting::live;
    c10::weak_intrusive_ptr<Node> weak(back);
    std::printf("weak.use_count=%u\nweak.weak_use_count=%u\n", back.use_count(), back.weak_use_count());
    back.reset();
    std::printf("weak.released=%d\nweak.destroyed_after_reset=%d\nweak.expired=%d\nweak.lock_null=%d\n",
                Node::released, Node::destroyed - destroyed_before, (int)weak.expired(), (int)!weak.lock().defined());
    std::printf("weak.freed_after_reset=%zu\n", live_before - counting::live);
    weak.reset();
    std::printf("weak.destroyed_after_weak_reset=%d\nweak.freed_after_weak_reset=%zu\n", Node::destroyed - destroyed_before,
                live_before - counting::live);
}
