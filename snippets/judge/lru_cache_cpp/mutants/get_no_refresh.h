#pragma once
#include <list>
#include <unordered_map>
#include <utility>

// Bug: a get does not move its key to the front.
class LRUCache {
public:
    explicit LRUCache(int capacity) : capacity_(capacity) {}

    int get(int key) {
        auto it = where_.find(key);
        if (it == where_.end()) return -1;
        return it->second->second;
    }

    void put(int key, int value) {
        if (capacity_ <= 0) return;
        auto it = where_.find(key);
        if (it != where_.end()) {
            it->second->second = value;
            order_.splice(order_.begin(), order_, it->second);
            return;
        }
        if (static_cast<int>(where_.size()) == capacity_) {
            where_.erase(order_.back().first);
            order_.pop_back();
        }
        order_.emplace_front(key, value);
        where_[key] = order_.begin();
    }

private:
    int capacity_;
    std::list<std::pair<int, int>> order_;
    std::unordered_map<int, std::list<std::pair<int, int>>::iterator> where_;
};
