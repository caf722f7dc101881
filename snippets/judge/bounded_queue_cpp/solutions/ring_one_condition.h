#pragma once
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

// A ring buffer under one mutex and one condition variable: both sides wait on it, so every change wakes all
// (notify_one could wake a thread of the same side and lose the wakeup).
class BoundedQueue {
public:
    explicit BoundedQueue(size_t capacity) : ring_(capacity) {}

    void push(int v) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return size_ < ring_.size(); });
        ring_[(head_ + size_) % ring_.size()] = v;
        ++size_;
        changed_.notify_all();
    }

    int pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return size_ > 0; });
        int v = ring_[head_];
        head_ = (head_ + 1) % ring_.size();
        --size_;
        changed_.notify_all();
        return v;
    }

private:
    std::vector<int> ring_;
    size_t head_ = 0, size_ = 0;
    std::mutex mutex_;
    std::condition_variable changed_;
};
