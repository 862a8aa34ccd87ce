#ifndef SOUNDFIT_CHILD_PROCESS_H
#define SOUNDFIT_CHILD_PROCESS_H

#include <sys/types.h>

/// Starts `argv[0]` (searched in PATH) with `argv`, its stdout and stderr appended to
/// `log_path` (or /dev/null when NULL), in a new process group, and asks the kernel to send it
/// SIGTERM if the calling thread's process dies (PR_SET_PDEATHSIG), so a private JACK server
/// never outlives SoundFit, even after `kill -9`. Returns the child's pid, or -1 with errno set.
pid_t soundfit_spawn_child(char *const argv[], const char *log_path);

/// Waits up to `timeout_ms` for `pid` to exit; returns 1 if it exited (and was reaped), 0 if not.
int soundfit_wait_child(pid_t pid, int timeout_ms);

#endif
