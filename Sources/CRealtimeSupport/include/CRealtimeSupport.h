#ifndef SOUNDFIT_CREALTIME_SUPPORT_H
#define SOUNDFIT_CREALTIME_SUPPORT_H

#include <stdint.h>
#include "soundfit_child_process.h"

/// Sets flush-to-zero and denormals-are-zero (MXCSR |= 0x8040) on the calling thread.
/// Call once on the real-time thread (JACK's thread-init callback).
void soundfit_enable_flush_denormals(void);

/// Returns 1 when FTZ and DAZ are both set on the calling thread.
int soundfit_flush_denormals_enabled(void);

/// Names the calling thread (at most 15 bytes are kept), so `top -H`, `perf` and
/// `/proc/PID/task/*/comm` tell JACK's process thread from the rest. Not real-time safe
/// (a write to procfs): call it once when the thread starts.
void soundfit_name_current_thread(const char *name);

/// CPU time consumed by the calling thread, in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
/// Does not block and does not allocate.
uint64_t soundfit_thread_cpu_time_ns(void);

/// Monotonic wall-clock time in nanoseconds (CLOCK_MONOTONIC).
uint64_t soundfit_monotonic_time_ns(void);

/// Marks the calling thread as inside the real-time process callback. Nestable.
/// The allocation counter used by the real-time safety test reads this marker;
/// in production it costs one thread-local increment.
void soundfit_realtime_section_enter(void);
void soundfit_realtime_section_leave(void);

/// Nonzero while the calling thread is inside a real-time section.
int soundfit_realtime_section_depth(void);

/// Number of real-time sections entered by any thread since start (process callbacks run).
uint64_t soundfit_realtime_sections_entered(void);

#endif
