#pragma once
#include <iterator>
#include <list>
#include <unordered_map>

// The frequencies themselves in a list, lowest first, each with its keys (front: most recent): a key moves to
// the next bucket (made when its frequency is missing), an empty bucket goes, eviction takes the back of the
// first bucket. No minimum frequency to keep up to date.
class LFUCache {
    struct Bucket {
        int freq;
        std::list<int> keys;
    };
    struct Entry {
        int value = 0;
        std::list<Bucket>::iterator bucket;
        std::list<int>::iterator where;
    };

public:
    explicit LFUCache(int capacity) : capacity_(capacity) {}

    int get(int key) {
        auto it = entries_.find(key);
        if (it == entries_.end()) return -1;
        bump(key, it->second);
        return it->second.value;
    }

    void put(int key, int value) {
        if (capacity_ <= 0) return;
        auto it = entries_.find(key);
        if (it != entries_.end()) {
            it->second.value = value;
            bump(key, it->second);
            return;
        }
        if (static_cast<int>(entries_.size()) == capacity_) {
            auto lowest = buckets_.begin();
            entries_.erase(lowest->keys.back());
            lowest->keys.pop_back();
            if (lowest->keys.empty()) buckets_.erase(lowest);
        }
        if (buckets_.empty() || buckets_.front().freq != 1) buckets_.push_front(Bucket{1, {}});
        auto first = buckets_.begin();
        first->keys.push_front(key);
        entries_[key] = Entry{value, first, first->keys.begin()};
    }

private:
    void bump(int key, Entry& e) {
        auto from = e.bucket;
        auto to = std::next(from);
        if (to == buckets_.end() || to->freq != from->freq + 1) to = buckets_.insert(to, Bucket{from->freq + 1, {}});
        to->keys.push_front(key);
        from->keys.erase(e.where);
        if (from->keys.empty()) buckets_.erase(from);
        e.bucket = to;
        e.where = to->keys.begin();
    }

    int capacity_;
    std::list<Bucket> buckets_;  // by frequency, lowest first
    std::unordered_map<int, Entry> entries_;
};
