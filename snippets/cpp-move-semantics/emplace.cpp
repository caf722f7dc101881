// push_back and emplace_back with room reserved (no reallocation): the element's own copies and moves.
#include <utility>
#include <vector>

#include "tracer.h"

int main() {
    std::vector<T> v;
    v.reserve(16);
    T lv{1};
    reset();
    v.push_back(T{2});
    report("push_temp");
    v.emplace_back(2);
    report("emplace_args");
    v.push_back(lv);
    report("push_lvalue");
    v.emplace_back(lv);
    report("emplace_lvalue");
    v.push_back(std::move(lv));
    report("push_moved");
    v.emplace_back(T{2});
    report("emplace_temp");
}
