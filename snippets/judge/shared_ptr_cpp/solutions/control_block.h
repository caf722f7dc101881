#pragma once

// One control block holding the object and its count; each assignment lets go of the old block only after
// taking the new one (and a copy-assignment from itself does nothing).
template <class T>
class SharedPtr {
    struct Block {
        T* ptr;
        long count;
    };

public:
    explicit SharedPtr(T* p) : block_(new Block{p, 1}) {}
    SharedPtr(const SharedPtr& other) : block_(other.block_) {
        if (block_) ++block_->count;
    }
    SharedPtr(SharedPtr&& other) noexcept : block_(other.block_) { other.block_ = nullptr; }
    SharedPtr& operator=(const SharedPtr& other) {
        if (this == &other) return *this;
        Block* old = block_;
        block_ = other.block_;
        if (block_) ++block_->count;
        release(old);
        return *this;
    }
    SharedPtr& operator=(SharedPtr&& other) noexcept {
        Block* old = block_;
        block_ = other.block_;
        other.block_ = nullptr;
        release(old);
        return *this;
    }
    ~SharedPtr() { release(block_); }

    long use_count() const { return block_ ? block_->count : 0; }
    T* get() const { return block_ ? block_->ptr : nullptr; }

private:
    static void release(Block* b) {
        if (b && --b->count == 0) {
            delete b->ptr;
            delete b;
        }
    }

    Block* block_;
};
