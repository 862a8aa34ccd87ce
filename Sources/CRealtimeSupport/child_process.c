#define _GNU_SOURCE
#include "soundfit_child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t soundfit_spawn_child(char *const argv[], char *const envp[], const char *log_path) {
    pid_t parent = getpid();
    int log_fd = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(log_fd);
        return -1;
    }
    if (pid == 0) {
        // Child: only async-signal-safe calls until exec.
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(127);
        setpgid(0, 0);
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd >= 0) dup2(null_fd, 0);
        dup2(log_fd, 1);
        dup2(log_fd, 2);
        execvpe(argv[0], argv, envp);
        _exit(127);
    }
    close(log_fd);
    return pid;
}

int soundfit_wait_child(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return status;
}
