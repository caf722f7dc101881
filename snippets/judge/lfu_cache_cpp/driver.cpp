// The judge's driver for lfu-cache-cpp: each line of the cases file is one case, "capacity n op...", each op
// "3 put key value" or "2 get key". Each case runs on a fresh LFUCache; its line in the result file is
// "V [the gets' results]", or "E type<TAB>message" when the solution threw. After each case LeakSanitizer
// looks for memory the case lost.
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "solution.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

static std::string run_case(std::istringstream& in) {
    int capacity = 0, n = 0;
    in >> capacity >> n;
    std::string out = "V [";
    LFUCache cache(capacity);
    for (int i = 0; i < n; ++i) {
        int len = 0, key = 0, value = 0;
        std::string op;
        in >> len >> op >> key;
        if (op == "put") {
            in >> value;
            cache.put(key, value);
        } else {
            int got = cache.get(key);
            out += (out.size() > 3 ? "," : "") + std::to_string(got);
        }
    }
    return out + "]";
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
