#define _GNU_SOURCE
#include "CAllocationCounter.h"
#include "CRealtimeSupport.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

// glibc's real entry points: calling them avoids dlsym recursion.
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static _Atomic uint64_t realtime_calls = 0;
static _Atomic uint64_t other_calls = 0;

static inline void count_call(void) {
    if (soundfit_realtime_section_depth() > 0) {
        atomic_fetch_add_explicit(&realtime_calls, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&other_calls, 1, memory_order_relaxed);
    }
}

void *malloc(size_t size) { count_call(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count_call(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count_call(); return __libc_realloc(p, size); }
void free(void *p) { if (p) count_call(); __libc_free(p); }
void *memalign(size_t alignment, size_t size) { count_call(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count_call(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count_call();
    void *p = __libc_memalign(alignment, size);
    if (p == NULL && size != 0) return ENOMEM;
    *out = p;
    return 0;
}

uint64_t soundfit_realtime_heap_calls(void) {
    return atomic_load_explicit(&realtime_calls, memory_order_relaxed);
}

uint64_t soundfit_other_heap_calls(void) {
    return atomic_load_explicit(&other_calls, memory_order_relaxed);
}

void soundfit_allocation_counter_install(void) {}
