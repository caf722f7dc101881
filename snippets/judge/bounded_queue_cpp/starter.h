#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

class BoundedQueue {
public:
    explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

    void push(int v) {
        items_.push_back(v);  // TODO: 加锁；满了要等
    }

    int pop() {
        int v = items_.front();  // TODO: 加锁；空了要等
        items_.pop_front();
        return v;
    }

private:
    size_t capacity_;
    std::deque<int> items_;
};
