#pragma once
#include <unordered_map>

// A hand-written doubly linked list with a sentinel (head.next: most recent, head.prev: least recent).
class LRUCache {
    struct Node {
        int key = 0, value = 0;
        Node* prev = this;
        Node* next = this;
    };

public:
    explicit LRUCache(int capacity) : capacity_(capacity) {}
    LRUCache(const LRUCache&) = delete;
    LRUCache& operator=(const LRUCache&) = delete;
    ~LRUCache() {
        for (Node* n = head_.next; n != &head_;) {
            Node* next = n->next;
            delete n;
            n = next;
        }
    }

    int get(int key) {
        auto it = nodes_.find(key);
        if (it == nodes_.end()) return -1;
        unlink(it->second);
        push_front(it->second);
        return it->second->value;
    }

    void put(int key, int value) {
        if (capacity_ <= 0) return;
        auto it = nodes_.find(key);
        if (it != nodes_.end()) {
            it->second->value = value;
            unlink(it->second);
            push_front(it->second);
            return;
        }
        if (static_cast<int>(nodes_.size()) == capacity_) {
            Node* last = head_.prev;
            unlink(last);
            nodes_.erase(last->key);
            delete last;
        }
        Node* n = new Node;
        n->key = key;
        n->value = value;
        push_front(n);
        nodes_[key] = n;
    }

private:
    static void unlink(Node* n) {
        n->prev->next = n->next;
        n->next->prev = n->prev;
    }
    void push_front(Node* n) {
        n->next = head_.next;
        n->prev = &head_;
        head_.next->prev = n;
        head_.next = n;
    }

    int capacity_;
    Node head_;
    std::unordered_map<int, Node*> nodes_;
};
