// Two control blocks for one object: each thinks it is the only owner, and both delete it.
#include <cstdio>
#include <memory>

struct Widget {
    int v = 0;
    ~Widget() { std::printf("dtor\n"); std::fflush(stdout); }
};

int main() {
    Widget* raw = new Widget;
    {
        std::shared_ptr<Widget> first(raw);
        std::shared_ptr<Widget> second(raw);  // a second control block, not a second owner of the first
        std::printf("use_counts=%ld,%ld\n", first.use_count(), second.use_count());
        std::fflush(stdout);
    }
    std::printf("unreachable\n");
}
