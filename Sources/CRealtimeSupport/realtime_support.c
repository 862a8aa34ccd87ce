#define _GNU_SOURCE
#include "CRealtimeSupport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

void soundfit_enable_flush_denormals(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() | 0x8040);
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    fpcr |= (1ULL << 24);
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
#endif
}

int soundfit_flush_denormals_enabled(void) {
#if defined(__x86_64__) || defined(__i386__)
    return (_mm_getcsr() & 0x8040) == 0x8040;
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return (fpcr & (1ULL << 24)) != 0;
#else
    return 0;
#endif
}

void soundfit_name_current_thread(const char *name) { pthread_setname_np(pthread_self(), name); }

uint64_t soundfit_thread_cpu_time_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t soundfit_monotonic_time_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static __thread int realtime_depth = 0;
static _Atomic uint64_t realtime_sections = 0;

void soundfit_realtime_section_enter(void) {
    realtime_depth += 1;
    atomic_fetch_add_explicit(&realtime_sections, 1, memory_order_relaxed);
}

void soundfit_realtime_section_leave(void) { realtime_depth -= 1; }

int soundfit_realtime_section_depth(void) { return realtime_depth; }

uint64_t soundfit_realtime_sections_entered(void) {
    return atomic_load_explicit(&realtime_sections, memory_order_relaxed);
}
