// Which insertions move the elements a program already holds pointers to. Addresses are kept as integers and
// compared, never dereferenced: reading through an invalidated pointer would itself be undefined behaviour.
#include <cstdint>
#include <cstdio>
#include <deque>
#include <list>
#include <map>
#include <set>
#include <vector>

using Addr = std::uintptr_t;
constexpr int FIRST = 100;   // elements whose addresses are kept
constexpr int MORE = 10000;  // insertions afterwards

template <class C, class Get>
void report_moved(const char* name, C& c, Get get, void (*insert)(C&, int)) {
    for (int i = 0; i < FIRST; ++i) insert(c, i);
    std::vector<Addr> before;
    for (int i = 0; i < FIRST; ++i) before.push_back(reinterpret_cast<Addr>(get(c, i)));
    for (int i = FIRST; i < FIRST + MORE; ++i) insert(c, i);
    int moved = 0;
    for (int i = 0; i < FIRST; ++i) moved += reinterpret_cast<Addr>(get(c, i)) != before[i];
    std::printf("moved.%s=%d\n", name, moved);
}

int main() {
    std::printf("kept=%d\nmore=%d\n", FIRST, MORE);
    {   // vector: when does the buffer move?
        std::vector<int> v;
        int buffer_moves = 0, full_pushes = 0, moves_with_room = 0;
        for (int i = 0; i < MORE; ++i) {
            const Addr data = reinterpret_cast<Addr>(v.data());
            const bool full = v.size() == v.capacity() && v.capacity() > 0;
            v.push_back(i);
            const bool moved = data != 0 && reinterpret_cast<Addr>(v.data()) != data;
            buffer_moves += moved;
            full_pushes += full;
            moves_with_room += moved && !full;
        }
        std::printf("vector.buffer_moves=%d\nvector.full_pushes=%d\nvector.moves_with_room=%d\n", buffer_moves,
                    full_pushes, moves_with_room);
        // insert at the front with room to spare: nothing is reallocated, every element shifts one place
        std::vector<int> w;
        w.reserve(64);
        for (int i = 0; i < 10; ++i) w.push_back(i);
        const Addr slot5 = reinterpret_cast<Addr>(&w[5]);
        const int held_before = w[5];
        w.insert(w.begin(), -1);
        std::printf("vector.insert_front=%d,%d,%d\n", int(reinterpret_cast<Addr>(&w[5]) == slot5), held_before, w[5]);
    }
    std::vector<int> v;
    report_moved<std::vector<int>>("vector", v, [](auto& c, int i) { return &c[i]; },
                                   [](std::vector<int>& c, int i) { c.push_back(i); });
    std::deque<int> d;
    report_moved<std::deque<int>>("deque_back", d, [](auto& c, int i) { return &c[i]; },
                                  [](std::deque<int>& c, int i) { c.push_back(i); });
    std::deque<int> df;  // push_front: the kept elements end up at the back, found from the end
    report_moved<std::deque<int>>("deque_front", df, [](auto& c, int i) { return &c[c.size() - 1 - i]; },
                                  [](std::deque<int>& c, int i) { c.push_front(i); });
    std::list<int> l;
    report_moved<std::list<int>>("list", l, [](auto& c, int i) { auto it = c.begin(); std::advance(it, i); return &*it; },
                                 [](std::list<int>& c, int i) { c.push_back(i); });
    std::map<int, int> m;
    report_moved<std::map<int, int>>("map", m, [](auto& c, int i) { return &c.at(i); },
                                     [](std::map<int, int>& c, int i) { c.emplace(i, i); });
    std::set<int> s;
    report_moved<std::set<int>>("set", s, [](auto& c, int i) { return &*c.find(i); },
                                [](std::set<int>& c, int i) { c.insert(i); });
}
