import SoundFitModel
import SoundFitProcessing

/// Fans out applied changes to every listener (OSC subscribers, persistence, the current patch).
typealias ChangeFeed = Subscribers<ParameterChange<ParameterValue>>

extension ProcessingParameter {
    /// Publishes every change of this parameter to `feed`, in surface values (`convert`), until
    /// the parameter goes away. Each change carries the origin of the request that made it.
    func publishChanges(to feed: ChangeFeed, convert: @escaping @Sendable (Value) -> ParameterValue) {
        let changes = changeUpdates()
        Task {
            for await change in changes {
                feed.yield(change.map(convert))
            }
        }
    }
}
