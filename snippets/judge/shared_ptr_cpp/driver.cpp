// The judge's driver for shared-ptr-cpp: each line of the cases file is one case, "n op...", each op
// "3 make slot id", "3 clone dst src" (copy-construct), "3 steal dst src" (move-construct), "3 copy dst src"
// (copy-assign), "3 move dst src" (move-assign) or "2 drop slot" on three std::optional<SharedPtr<Tracked>>
// slots. After each op the case records [live objects, then each slot's use_count and object id (-1: none)];
// after the slots are gone, [live objects]. Its line in the result file is "V [those records]", or
// "E type<TAB>message" when the solution threw. After each case LeakSanitizer looks for memory the case lost.
#include <cstdio>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <typeinfo>
#include <utility>

#include "solution.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

struct Tracked {
    static long live;
    int id;
    explicit Tracked(int id_) : id(id_) { ++live; }
    ~Tracked() { --live; }
    Tracked(const Tracked&) = delete;
    Tracked& operator=(const Tracked&) = delete;
};
long Tracked::live = 0;

using Slot = std::optional<SharedPtr<Tracked>>;

static std::string record(const Slot (&slots)[3]) {
    std::string out = "[" + std::to_string(Tracked::live);
    for (const Slot& s : slots) {
        const Tracked* p = s ? s->get() : nullptr;
        out += "," + std::to_string(s ? s->use_count() : 0L) + "," + std::to_string(p ? p->id : -1);
    }
    return out + "]";
}

static std::string run_case(std::istringstream& in) {
    int n = 0;
    in >> n;
    std::string out = "V [";
    {
        Slot slots[3];
        for (int i = 0; i < n; ++i) {
            int len = 0, a = 0, b = 0;
            std::string op;
            in >> len >> op >> a;
            if (len > 2) in >> b;
            if (op == "make") {
                slots[a].emplace(new Tracked(b));  // emplace: the old one is destroyed, nothing is assigned
            } else if (op == "clone") {
                slots[a].emplace(*slots[b]);
            } else if (op == "steal") {
                slots[a].emplace(std::move(*slots[b]));
            } else if (op == "copy") {
                *slots[a] = *slots[b];
            } else if (op == "move") {
                *slots[a] = std::move(*slots[b]);
            } else {
                slots[a].reset();
            }
            out += record(slots) + ",";
        }
    }
    return out + "[" + std::to_string(Tracked::live) + "]]";
}

int main(int argc, char** argv) {
    if (argc != 3) return 64;
    std::ifstream cases(argv[1]);
    FILE* result = std::fopen(argv[2], "w");
    if (!cases || !result) return 65;
    std::string line;
    while (std::getline(cases, line)) {
        std::istringstream in(line);
        std::string outcome;
        try {
            outcome = run_case(in);
        } catch (const std::exception& e) {
            outcome = std::string("E ") + typeid(e).name() + "\t" + e.what();
        }
#if defined(__SANITIZE_ADDRESS__)
        if (__lsan_do_recoverable_leak_check()) return 23;  // the report is on stderr: the case lost memory
#endif
        std::fprintf(result, "%s\n", outcome.c_str());
        std::fflush(result);
    }
    return 0;
}
