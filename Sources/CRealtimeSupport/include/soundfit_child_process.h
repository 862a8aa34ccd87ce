#ifndef SOUNDFIT_CHILD_PROCESS_H
#define SOUNDFIT_CHILD_PROCESS_H

#include <sys/types.h>

/// Starts `argv[0]` (searched in PATH) with `argv` and the environment `envp`, its stdout and stderr appended to
/// `log_path` (or /dev/null when NULL), in a new process group, and asks the kernel to send it
/// SIGTERM when the calling *thread* ends (PR_SET_PDEATHSIG), so a private JACK server never
/// outlives SoundFit, even after `kill -9`. Call it from a thread that lives as long as the
/// child should. Returns the child's pid, or -1 with errno set.
pid_t soundfit_spawn_child(char *const argv[], char *const envp[], const char *log_path);

/// Blocks until `pid` exits and reaps it; returns its wait status, or -1 on error.
int soundfit_wait_child(pid_t pid);

#endif
