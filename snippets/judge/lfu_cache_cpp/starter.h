#pragma once
#include <list>
#include <unordered_map>

class LFUCache {
public:
    explicit LFUCache(int capacity) : capacity_(capacity) {}

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
