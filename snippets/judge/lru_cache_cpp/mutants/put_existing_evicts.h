#pragma once
#include <list>
#include <unordered_map>
#include <utility>

// Known wrong: put evicts when the cache is full before it looks the key up, so putting a key that is
// already there evicts another key first.
class LRUCache {
public:
    explicit LRUCache(int capacity) : capacity_(capacity) {}

    int get(int key) {
        auto it = where_.find(key);
        if (it == where_.end()) return -1;
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
    }

    void put(int key, int value) {
        if (capacity_ <= 0) return;
        if (static_cast<int>(where_.size()) == capacity_) {
            where_.erase(order_.back().first);
            order_.pop_back();
        }
        auto it = where_.find(key);
        if (it != where_.end()) {
            it->second->second = value;
            order_.splice(order_.begin(), order_, it->second);
            return;
        }
        order_.emplace_front(key, value);
        where_[key] = order_.begin();
    }

private:
    int capacity_;
    std::list<std::pair<int, int>> order_;
    std::unordered_map<int, std::list<std::pair<int, int>>::iterator> where_;
};
