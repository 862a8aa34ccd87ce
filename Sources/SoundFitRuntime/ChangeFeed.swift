import SoundFitModel
import SoundFitProcessing

/// Fans out applied changes to every listener (OSC subscribers, persistence, the current patch).
typealias ChangeFeed = Subscribers<ParameterChange<ParameterValue>>

extension ChangeFeed {
    /// Yields every change of `changes` in surface values (`convert`), each with the origin of
    /// the request that made it, until the stream ends or the task running this is cancelled.
    func forward<Value: Sendable>(_ changes: AsyncStream<ParameterChange<Value>>,
                                  convert: @escaping @Sendable (Value) -> ParameterValue) async {
        for await change in changes {
            yield(change.map(convert))
        }
    }
}
