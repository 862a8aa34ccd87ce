#ifndef SOUNDFIT_CALLOCATION_COUNTER_H
#define SOUNDFIT_CALLOCATION_COUNTER_H

#include <stdint.h>

/// Heap calls (malloc, calloc, realloc, free, posix_memalign, aligned_alloc, memalign)
/// made by any thread while it was inside a real-time section
/// (`soundfit_realtime_section_enter/leave`). Linking this target into a test binary
/// replaces glibc's allocator entry points for the whole process.
uint64_t soundfit_realtime_heap_calls(void);

/// Heap calls made by any thread outside real-time sections; proves the counter is live.
uint64_t soundfit_other_heap_calls(void);

/// Makes the symbols of this target reachable so the linker keeps the overrides.
void soundfit_allocation_counter_install(void);

#endif
