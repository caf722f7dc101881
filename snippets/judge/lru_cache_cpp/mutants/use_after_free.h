#pragma once
#include <list>
#include <unordered_map>
#include <utility>

// Bug: erases the node, then reads its value.
class LRUCache {
public:
    explicit LRUCache(int capacity) : capacity_(capacity) {}

    int get(int key) {
        auto it = where_.find(key);
        if (it == where_.end()) return -1;
        auto node = it->second;
        order_.erase(node);
        order_.emplace_front(key, node->second);  // node was freed by erase
        it->second = order_.begin();
        return order_.front().second;
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
