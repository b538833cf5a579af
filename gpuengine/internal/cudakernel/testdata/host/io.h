// What the host harnesses (harness.cpp, tf32x3.cpp) share: reading a bake's weights and
// printing a launch's carry-save words.
#ifndef WB_HARNESS_IO_H
#define WB_HARNESS_IO_H
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

inline uint32_t f32bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float* alloc_floats(size_t n)
{
    void* p = std::aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
    if (!p) {
        std::fprintf(stderr, "out of memory\n");
        std::exit(1);
    }
    return (float*)p;
}

// n values of 4 bytes (floats or words) from path.
template <class T>
inline std::vector<T> read_values(const char* path, size_t n)
{
    std::vector<T> v(n);
    FILE* f = std::fopen(path, "rb");
    if (!f || std::fread(v.data(), sizeof(T), n, f) != n) {
        std::fprintf(stderr, "cannot read %zu values from %s\n", n, path);
        std::exit(1);
    }
    std::fclose(f);
    return v;
}

inline void print_words(const std::vector<u64>& words, u64 err)
{
    std::printf("err %llu\nwords", err);
    for (u64 w : words)
        std::printf(" %llx", w);
    std::printf("\n");
}

#endif
