// The judge's driver for bounded-queue-cpp: each line of the cases file is one case, "kind capacity producers
// consumers n", run on a fresh BoundedQueue(capacity):
//   fifo     one thread: twice, push `capacity` values and pop them           -> the popped values
//   full     `capacity` pushes, then a thread's push must block until a pop    -> [blocked, the popped values]
//   empty    a thread's pop on an empty queue must block until a push          -> [blocked, the value]
//   threads  `producers` threads push n values each, `consumers` threads pop them all
//            -> [values popped, values not popped exactly once, out-of-order pops, pushes seen past capacity]
// Its line in the result file is "V [those numbers]", or "E type<TAB>message" when the solution threw.
// Built with ThreadSanitizer: a data race stops the program with its report.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "solution.h"

// how long a blocked call is watched: it must not return while its condition does not hold
static constexpr auto WATCH = std::chrono::milliseconds(200);

static bool returned_within(const std::atomic<bool>& done) {
    auto until = std::chrono::steady_clock::now() + WATCH;
    while (std::chrono::steady_clock::now() < until) {
        if (done.load()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return done.load();
}

static std::vector<long> fifo(int capacity) {
    BoundedQueue q(static_cast<size_t>(capacity));
    std::vector<long> out;
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < capacity; ++i) q.push(round * capacity + i);
        for (int i = 0; i < capacity; ++i) out.push_back(q.pop());
    }
    return out;
}

static std::vector<long> full(int capacity) {
    BoundedQueue q(static_cast<size_t>(capacity));
    for (int i = 0; i < capacity; ++i) q.push(i);
    std::atomic<bool> started{false}, done{false};
    std::thread producer([&] {
        started = true;
        q.push(capacity);
        done = true;
    });
    while (!started.load()) std::this_thread::yield();
    bool returned_early = returned_within(done);
    std::vector<long> out{returned_early ? 0L : 1L};
    out.push_back(q.pop());
    producer.join();
    for (int i = 0; i < capacity; ++i) out.push_back(q.pop());
    return out;
}

static std::vector<long> empty(int capacity) {
    BoundedQueue q(static_cast<size_t>(capacity));
    std::atomic<bool> started{false}, done{false};
    long got = -1;
    std::thread consumer([&] {
        started = true;
        got = q.pop();
        done = true;
    });
    while (!started.load()) std::this_thread::yield();
    bool returned_early = returned_within(done);
    q.push(7);
    consumer.join();
    return {returned_early ? 0L : 1L, got};
}

static std::vector<long> threads(int capacity, int producers, int consumers, int n) {
    BoundedQueue q(static_cast<size_t>(capacity));
    const long total = static_cast<long>(producers) * n;
    std::atomic<long> pushed{0}, pop_started{0}, claimed{0}, over{0};
    std::vector<std::vector<int>> seen(consumers);
    std::vector<std::thread> pool;
    for (int p = 0; p < producers; ++p)
        pool.emplace_back([&, p] {
            for (int i = 0; i < n; ++i) {
                q.push(p * n + i);
                long a = ++pushed;  // pushes returned, then pops begun: the queue holds at least a - b
                if (a - pop_started.load() > capacity) ++over;
            }
        });
    for (int c = 0; c < consumers; ++c)
        pool.emplace_back([&, c] {
            while (claimed.fetch_add(1) < total) {
                ++pop_started;
                seen[c].push_back(q.pop());
            }
        });
    for (auto& t : pool) t.join();
    std::vector<int> times(static_cast<size_t>(total), 0);
    long popped = 0, disorder = 0;
    for (const auto& values : seen) {
        std::vector<int> last(producers, -1);
        for (int v : values) {
            ++popped;
            if (v < 0 || v >= total) continue;
            ++times[v];
            int p = v / n;
            if (v <= last[p]) ++disorder;  // one producer's values leave in the order it pushed them
            last[p] = v;
        }
    }
    long wrong = 0;
    for (int t : times) wrong += t != 1;
    return {popped, wrong, disorder, over.load()};
}

static std::string run_case(std::istringstream& in) {
    std::string kind;
    int capacity = 0, producers = 0, consumers = 0, n = 0;
    in >> kind >> capacity >> producers >> consumers >> n;
    std::vector<long> got = kind == "fifo"    ? fifo(capacity)
                            : kind == "full"  ? full(capacity)
                            : kind == "empty" ? empty(capacity)
                                              : threads(capacity, producers, consumers, n);
    std::string out = "V [";
    for (size_t i = 0; i < got.size(); ++i) out += (i ? "," : "") + std::to_string(got[i]);
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
        std::fprintf(result, "%s\n", outcome.c_str());
        std::fflush(result);
    }
    return 0;
}
