// The LRU of lru.h, and the standard containers under it, observed by counting.
//   prog ops list|hand   read "cap C" then "g K" / "p K V" lines on stdin; print one result per operation
//   prog counts          hash / equality / comparison calls and allocations per operation as the capacity grows
//   prog rehash          std::unordered_map growth: bucket counts, pointer stability, iteration order
//   prog splice          std::list::splice against moving an element to the front of a std::vector
//   prog threads         a mutex-guarded LRU hammered by 4 threads, then its invariants
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "lru.h"

// --- counters --------------------------------------------------------------------------------------
static std::size_t hash_calls = 0, eq_calls = 0, less_calls = 0, allocations = 0;

void* operator new(std::size_t n) {
    ++allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

struct CountingHash {
    std::size_t operator()(long k) const noexcept { ++hash_calls; return std::hash<long>{}(k); }
};
struct CountingEq {
    bool operator()(long a, long b) const noexcept { ++eq_calls; return a == b; }
};
struct CountingLess {
    bool operator()(long a, long b) const noexcept { ++less_calls; return a < b; }
};

struct Hashed { template <class K, class T> using map = std::unordered_map<K, T, CountingHash, CountingEq>; };
struct Ordered { template <class K, class T> using map = std::map<K, T, CountingLess>; };
struct Plain { template <class K, class T> using map = std::unordered_map<K, T>; };

// The O(n) reference: a vector in recency order, searched from the front; counts the elements it visits.
struct VectorLRU {
    std::size_t capacity, visits = 0;
    std::vector<std::pair<long, long>> items;  // front = most recently used
    long find(long key) {
        for (std::size_t i = 0; i < items.size(); ++i) {
            ++visits;
            if (items[i].first == key) return static_cast<long>(i);
        }
        return -1;
    }
    bool get(long key) {
        long i = find(key);
        if (i < 0) return false;
        std::rotate(items.begin(), items.begin() + i, items.begin() + i + 1);
        return true;
    }
    void put(long key, long value) {
        long i = find(key);
        if (i >= 0) { items[i].second = value; std::rotate(items.begin(), items.begin() + i, items.begin() + i + 1); return; }
        if (items.size() == capacity) items.pop_back();
        items.insert(items.begin(), {key, value});
    }
};

// --- modes -----------------------------------------------------------------------------------------
template <class Cache>
static int ops_with(Cache& cache) {
    char line[128];
    while (std::fgets(line, sizeof line, stdin)) {
        long k, v;
        if (std::sscanf(line, "g %ld", &k) == 1) {
            auto got = cache.get(k);
            std::printf("%ld\n", got ? *got : -1L);
        } else if (std::sscanf(line, "p %ld %ld", &k, &v) == 2) {
            auto evicted = cache.put(k, v);
            if (evicted) std::printf("e%ld\n", *evicted); else std::puts("e-");
        }
    }
    std::printf("size=%zu\nconsistent=%d\n", cache.size(), cache.consistent());
    return 0;
}

static int ops(const std::string& impl) {
    char line[128];
    std::size_t capacity = 0;
    if (!std::fgets(line, sizeof line, stdin) || std::sscanf(line, "cap %zu", &capacity) != 1) return 2;
    if (impl == "hand") {
        HandLRU<long, long> cache(capacity);
        return ops_with(cache);
    }
    LRU<long, long, Plain> cache(capacity);
    return ops_with(cache);
}

template <class M> auto load_of(const M& m, int) -> decltype(m.load_factor()) { return m.load_factor(); }
template <class M> double load_of(const M&, long) { return 0; }

template <class Policy>
static void per_op(const char* name, std::size_t capacity, int n_ops) {
    LRU<long, long, Policy> cache(capacity);
    for (std::size_t k = 0; k < capacity; ++k) cache.put(static_cast<long>(k), 0);
    std::mt19937_64 rng(42);
    hash_calls = eq_calls = less_calls = allocations = 0;
    for (int i = 0; i < n_ops; ++i) {
        long key = static_cast<long>(rng() % (2 * capacity));
        if (rng() & 1) cache.get(key); else cache.put(key, i);
    }
    std::printf("%s.%zu.hash=%.3f\n%s.%zu.eq=%.3f\n%s.%zu.less=%.3f\n%s.%zu.alloc=%.3f\n", name, capacity,
                double(hash_calls) / n_ops, name, capacity, double(eq_calls) / n_ops, name, capacity,
                double(less_calls) / n_ops, name, capacity, double(allocations) / n_ops);
    std::printf("%s.%zu.load=%.3f\n", name, capacity, double(load_of(cache.index(), 0)));
}

static void reference_per_op(std::size_t capacity, int n_ops) {
    VectorLRU cache{capacity};
    cache.items.reserve(capacity + 1);
    for (std::size_t k = 0; k < capacity; ++k) cache.items.push_back({static_cast<long>(capacity - 1 - k), 0});
    std::mt19937_64 rng(42);
    for (int i = 0; i < n_ops; ++i) {
        long key = static_cast<long>(rng() % (2 * capacity));
        if (rng() & 1) cache.get(key); else cache.put(key, i);
    }
    std::printf("vector.%zu.visits=%.1f\n", capacity, double(cache.visits) / n_ops);
}

// The worst case: libstdc++'s std::hash<long> is the identity, so keys that are multiples of the bucket count
// all land in bucket 0 and a lookup walks the whole chain.
static void collide() {
    for (bool adversarial : {false, true}) {
        std::unordered_map<long, long, CountingHash, CountingEq> m;
        m.reserve(1000);
        const long buckets = static_cast<long>(m.bucket_count());
        for (long k = 0; k < 1000; ++k) m.emplace(adversarial ? k * buckets : k, k);
        eq_calls = 0;
        for (long k = 0; k < 1000; ++k) m.find(adversarial ? k * buckets : k);
        const char* name = adversarial ? "collide.multiples" : "collide.sequential";
        std::printf("%s.eq=%.1f\n%s.buckets=%ld\n%s.largest_bucket=%zu\n", name, eq_calls / 1000.0, name, buckets, name,
                    m.bucket_size(m.bucket(0)));
    }
    std::printf("collide.hash_of_12345=%zu\n", std::hash<long>{}(12345));
}

static int counts() {
    collide();
    const int n_ops = 2000;
    for (std::size_t capacity : {100, 10000, 100000}) {
        per_op<Hashed>("hashed", capacity, n_ops);
        per_op<Ordered>("ordered", capacity, n_ops);
        reference_per_op(capacity, n_ops);
    }
    return 0;
}

static int rehash() {
    std::unordered_map<long, long> m;
    std::printf("max_load_factor=%.1f\nbucket_count.empty=%zu\n", m.max_load_factor(), m.bucket_count());
    std::mt19937_64 rng(7);
    std::vector<long> keys;
    std::vector<const long*> where;
    std::size_t last = m.bucket_count(), changes = 0;
    bool rule = true, below = true;
    std::string seq = std::to_string(last), at;
    for (int i = 0; i < 1000; ++i) {
        long key = static_cast<long>(rng() >> 1);
        std::size_t before = m.size();
        m.emplace(key, i);
        keys.push_back(key);
        where.push_back(&m.at(key));
        if (m.bucket_count() != last) {
            // after the first insert (one bucket to a real table), growth comes when the new size would
            // exceed bucket_count * max_load_factor
            if (before > 0) rule = rule && double(before + 1) > double(last) * m.max_load_factor();
            ++changes;
            last = m.bucket_count();
            seq += "," + std::to_string(last);
            at += (at.empty() ? "" : ",") + std::to_string(before + 1);
        }
        below = below && m.load_factor() <= m.max_load_factor();
    }
    int moved = 0, wrong = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        moved += where[i] != &m.at(keys[i]);
        wrong += *where[i] != static_cast<long>(i);
    }
    std::printf("inserted=%zu\nbucket_changes=%zu\nbucket_counts=%s\ngrew_at_size=%s\nrehash_rule=%d\n"
                "load_factor_below=%d\npointers_moved=%d\nvalues_wrong=%d\n", keys.size(), changes, seq.c_str(),
                at.c_str(), rule, below, moved, wrong);

    // One rehash: the iteration order and the buckets of the same elements change.
    std::unordered_map<long, long> small;
    std::vector<long> ks;
    while (true) {
        long key = static_cast<long>(rng() >> 1);
        std::size_t b = small.bucket_count();
        if (small.size() + 1 > b * small.max_load_factor() && !small.empty()) break;  // the next insert rehashes
        small.emplace(key, 0);
        ks.push_back(key);
    }
    std::vector<long> order_before, order_after;
    std::vector<std::size_t> bucket_before;
    for (auto& kv : small) order_before.push_back(kv.first);
    for (long k : ks) bucket_before.push_back(small.bucket(k));
    std::size_t b0 = small.bucket_count();
    small.emplace(static_cast<long>(rng() >> 1), 0);
    for (auto& kv : small) if (std::find(ks.begin(), ks.end(), kv.first) != ks.end()) order_after.push_back(kv.first);
    int rebucketed = 0;
    for (std::size_t i = 0; i < ks.size(); ++i) rebucketed += small.bucket(ks[i]) != bucket_before[i];
    std::printf("one.elements=%zu\none.buckets=%zu,%zu\none.order_changed=%d\none.rebucketed=%d\n", ks.size(), b0,
                small.bucket_count(), order_before != order_after, rebucketed);

    // reserve() first: no rehash while inserting.
    std::unordered_map<long, long> reserved;
    reserved.reserve(1000);
    std::size_t b = reserved.bucket_count(), during = 0;
    for (int i = 0; i < 1000; ++i) {
        reserved.emplace(static_cast<long>(rng() >> 1), i);
        during += reserved.bucket_count() != b;
        b = reserved.bucket_count();
    }
    std::printf("reserved.bucket_count=%zu\nreserved.changes=%zu\n", reserved.bucket_count(), during);

    // The LRU's map grows through rehashes too; the list iterators it stores are values, untouched.
    LRU<long, long, Plain> cache(1000);
    std::size_t lb = cache.index().bucket_count(), lchanges = 0;
    for (long k = 0; k < 3000; ++k) {
        cache.put(k, k);
        if (k % 3 == 0) cache.get(k / 2);
        lchanges += cache.index().bucket_count() != lb;
        lb = cache.index().bucket_count();
    }
    std::printf("lru.bucket_changes=%zu\nlru.consistent=%d\n", lchanges, cache.consistent());
    return 0;
}

struct Tracked {
    static inline int copies = 0, moves = 0;
    int v;
    explicit Tracked(int x) : v(x) {}
    Tracked(const Tracked& o) : v(o.v) { ++copies; }
    Tracked(Tracked&& o) noexcept : v(o.v) { ++moves; }
    Tracked& operator=(const Tracked& o) { v = o.v; ++copies; return *this; }
    Tracked& operator=(Tracked&& o) noexcept { v = o.v; ++moves; return *this; }
};

static int splice() {
    const int n = 1000;
    std::list<Tracked> l;
    for (int i = 0; i < n; ++i) l.emplace_back(i);
    auto it = std::next(l.begin(), n - 1);  // the least recently used end
    auto other = std::next(l.begin(), 1);
    const Tracked* addr = &*it;
    Tracked::copies = Tracked::moves = 0;
    allocations = 0;
    l.splice(l.begin(), l, it);
    std::printf("list.size=%zu\nlist.copies=%d\nlist.moves=%d\nlist.allocations=%zu\nlist.same_address=%d\n"
                "list.at_front=%d\nlist.value=%d\nlist.other_valid=%d\nlist.second=%d\n", l.size(), Tracked::copies,
                Tracked::moves, allocations, &*it == addr, it == l.begin(), it->v, other->v == 1,
                std::next(l.begin())->v);

    std::vector<Tracked> v;
    v.reserve(n);
    for (int i = 0; i < n; ++i) v.emplace_back(i);
    Tracked::copies = Tracked::moves = 0;
    std::rotate(v.begin(), v.begin() + (n - 1), v.end());  // the same move-to-front in a vector
    std::printf("vector.copies=%d\nvector.moves=%d\nvector.front=%d\n", Tracked::copies, Tracked::moves, v.front().v);
    return 0;
}

static int threads() {
    struct Locked {
        std::mutex m;
        LRU<long, long, Plain> cache{1000};
        long hits = 0, misses = 0, puts = 0;
    } shared;
    const int n_threads = 4, n_ops = 50000;
    std::vector<std::thread> pool;
    for (int t = 0; t < n_threads; ++t) {
        pool.emplace_back([&shared, t] {
            std::mt19937_64 rng(100 + t);
            for (int i = 0; i < n_ops; ++i) {
                long key = static_cast<long>(rng() % 3000);
                std::lock_guard<std::mutex> lock(shared.m);  // get() relinks the list: it writes
                if (rng() & 1) {
                    if (shared.cache.get(key)) ++shared.hits; else ++shared.misses;
                } else {
                    shared.cache.put(key, i);
                    ++shared.puts;
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    std::printf("threads=%d\nops_each=%d\nops_counted=%ld\nsize=%zu\nconsistent=%d\n", n_threads, n_ops,
                shared.hits + shared.misses + shared.puts, shared.cache.size(), shared.cache.consistent());
    return 0;
}

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "ops") return ops(argc > 2 ? argv[2] : "list");
    if (mode == "counts") return counts();
    if (mode == "rehash") return rehash();
    if (mode == "splice") return splice();
    if (mode == "threads") return threads();
    std::fprintf(stderr, "usage: prog ops|counts|rehash|splice|threads\n");
    return 2;
}
