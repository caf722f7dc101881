#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

// Bug: the lock guards only the wait; the deque is changed after it is released.
class BoundedQueue {
public:
    explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

    void push(int v) {
        std::unique_lock<std::mutex> lock(mutex_);
        not_full_.wait(lock, [&] { return items_.size() < capacity_; });
        lock.unlock();
        items_.push_back(v);  // outside the lock
        not_empty_.notify_one();
    }

    int pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        not_empty_.wait(lock, [&] { return !items_.empty(); });
        lock.unlock();
        int v = items_.front();  // outside the lock
        items_.pop_front();
        not_full_.notify_one();
        return v;
    }

private:
    size_t capacity_;
    std::mutex mutex_;
    std::condition_variable not_full_, not_empty_;
    std::deque<int> items_;
};
