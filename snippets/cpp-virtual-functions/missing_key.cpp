// A virtual function declared and never defined: the translation unit that would emit the vtable does not exist.
struct MissingKey {
    virtual void key();                         // the key function, defined nowhere
    virtual ~MissingKey() {}
};

int main() { MissingKey m; }
