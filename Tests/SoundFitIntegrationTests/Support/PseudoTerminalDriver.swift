/// The start of the Python scripts that run `soundfit` in a pseudo-terminal (Python's `pty`),
/// shared by the terminal tests. It runs `argv[2:]` in a pseudo-terminal (`argv[1]` is the
/// script's own) and defines `pump(seconds)`, which reads the child's output into `output` for
/// `seconds` (false once the terminal is gone), and `finish(status)`, which prints that output
/// and `EXIT <status>`. A driver is this followed by its own steps.
enum PseudoTerminalDriver {
    static let prelude = """
        import os, json, pty, select, sys, time
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(sys.argv[2], sys.argv[2:])
        # Non-blocking: a terminal that stops taking input, or a read that finds nothing
        # after all, cannot hold the driver past its own time limits.
        os.set_blocking(fd, False)
        output = b""
        def pump(seconds):
            global output
            end = time.time() + seconds
            while time.time() < end:
                ready, _, _ = select.select([fd], [], [], 0.02)
                if ready:
                    try:
                        output += os.read(fd, 4096)
                    except BlockingIOError:
                        continue
                    except OSError:
                        return False
            return True
        def finish(status):
            sys.stdout.write(output.decode("utf-8", "replace"))
            sys.stdout.write("\\nEXIT %d\\n" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1))

        """
}
