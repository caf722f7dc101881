// Two nodes that point at each other: with shared_ptr both ways neither destructor ever runs;
// with a weak_ptr back-pointer both are destroyed, in the order the counts reach zero.
#include <cstdio>
#include <memory>
#include <string>

int alive = 0;

struct Node {
    std::string name;
    std::shared_ptr<Node> next;  // owning
    std::weak_ptr<Node> back;    // observing
    explicit Node(std::string n) : name(std::move(n)) { ++alive; }
    ~Node() {
        --alive;
        std::printf("dtor=%s\n", name.c_str());
    }
};

int main() {
    std::weak_ptr<Node> wa, wb;
    {
        auto a = std::make_shared<Node>("a");
        auto b = std::make_shared<Node>("b");
        a->next = b;
        b->next = a;  // a -> b -> a
        wa = a, wb = b;
        std::printf("strong.use_count_in_scope=%ld,%ld\n", a.use_count(), b.use_count());
    }
    std::printf("strong.alive_after_scope=%d\n", alive);
    std::printf("strong.use_count_after_scope=%ld,%ld\n", wa.use_count(), wb.use_count());
    std::printf("strong.expired=%d\n", (int)wa.expired());
    // Breaking the cycle by hand frees both: a's last owner is b->next.
    wb.lock()->next.reset();
    std::printf("strong.alive_after_manual_break=%d\n", alive);

    std::printf("phase=weak\n");
    {
        auto a = std::make_shared<Node>("a");
        auto b = std::make_shared<Node>("b");
        a->next = b;
        b->back = a;  // a -> b, b observes a
        wa = a, wb = b;
        std::printf("weak.use_count_in_scope=%ld,%ld\n", a.use_count(), b.use_count());
        std::shared_ptr<Node> locked = b->back.lock();
        std::printf("weak.lock_name=%s\nweak.use_count_while_locked=%ld\n", locked->name.c_str(), a.use_count());
        std::printf("phase=leaving-scope\n");  // locals die in reverse order: locked, b, then a
    }
    std::printf("weak.alive_after_scope=%d\n", alive);
    std::printf("weak.expired=%d,%d\n", (int)wa.expired(), (int)wb.expired());
    std::printf("weak.lock_after_is_null=%d\n", (int)(wa.lock() == nullptr));
}
