// shared_from_this: a shared_ptr that joins the existing control block, and what it does when there is none.
#include <cstdio>
#include <memory>

struct Session : std::enable_shared_from_this<Session> {
    std::shared_ptr<Session> self() { return shared_from_this(); }
};

int main() {
    auto owned = std::make_shared<Session>();
    auto again = owned->self();
    std::printf("owned.use_count=%ld\nowned.same_block=%d\n", owned.use_count(),
                (int)(!owned.owner_before(again) && !again.owner_before(owned)));
    Session on_stack;
    try {
        on_stack.self();
        std::printf("unowned.threw=0\n");
    } catch (const std::bad_weak_ptr& e) {
        std::printf("unowned.threw=1\nunowned.what=%s\n", e.what());
    }
}
