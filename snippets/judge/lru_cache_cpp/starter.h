#pragma once
#include <list>
#include <unordered_map>
#include <utility>

class LRUCache {
public:
    explicit LRUCache(int capacity) : capacity_(capacity) {}

    int get(int key) {
        (void)key;
        return -1;  // TODO
    }

    void put(int key, int value) {
        (void)key;
        (void)value;  // TODO
    }

private:
    int capacity_;
};
