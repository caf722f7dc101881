#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

// A deque under one mutex; producers wait on not_full_, consumers on not_empty_, each woken by the other side.
class BoundedQueue {
public:
    explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

    void push(int v) {
        std::unique_lock<std::mutex> lock(mutex_);
        not_full_.wait(lock, [&] { return items_.size() < capacity_; });
        items_.push_back(v);
        lock.unlock();
        not_empty_.notify_one();
    }

    int pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        not_empty_.wait(lock, [&] { return !items_.empty(); });
        int v = items_.front();
        items_.pop_front();
        lock.unlock();
        not_full_.notify_one();
        return v;
    }

private:
    size_t capacity_;
    std::mutex mutex_;
    std::condition_variable not_full_, not_empty_;
    std::deque<int> items_;
};
