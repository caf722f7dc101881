#pragma once
#include <list>
#include <unordered_map>

// Known wrong: put evicts when the cache is full before it looks the key up, so putting a key that is
// already there evicts another key first.
class LFUCache {
    struct Entry {
        int value = 0;
        int freq = 0;
        std::list<int>::iterator where;
    };

public:
    explicit LFUCache(int capacity) : capacity_(capacity) {}

    int get(int key) {
        auto it = entries_.find(key);
        if (it == entries_.end()) return -1;
        touch(key, it->second);
        return it->second.value;
    }

    void put(int key, int value) {
        if (capacity_ <= 0) return;
        if (static_cast<int>(entries_.size()) == capacity_) {
            auto& lowest = buckets_[min_freq_];
            entries_.erase(lowest.back());
            lowest.pop_back();
            if (lowest.empty()) buckets_.erase(min_freq_);
        }
        auto it = entries_.find(key);
        if (it != entries_.end()) {
            it->second.value = value;
            touch(key, it->second);
            return;
        }
        auto& ones = buckets_[1];
        ones.push_front(key);
        entries_[key] = Entry{value, 1, ones.begin()};
        min_freq_ = 1;
    }

private:
    void touch(int key, Entry& e) {
        auto& from = buckets_[e.freq];
        from.erase(e.where);
        if (from.empty()) {
            buckets_.erase(e.freq);
            if (min_freq_ == e.freq) ++min_freq_;
        }
        ++e.freq;
        auto& to = buckets_[e.freq];
        to.push_front(key);
        e.where = to.begin();
    }

    int capacity_;
    int min_freq_ = 1;
    std::unordered_map<int, std::list<int>> buckets_;
    std::unordered_map<int, Entry> entries_;
};
