import Glibc

/// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`): what a packet cost
/// the receive thread, without the time other processes took the core from it (on a loaded
/// machine the wall clock would charge a source for its neighbours).
///
/// Thread rules: any thread except the JACK process callback (it is a system call).
public enum ThreadTime {
    public static func now() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
