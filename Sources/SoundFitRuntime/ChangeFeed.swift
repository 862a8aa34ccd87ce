import SoundFitModel
import SoundFitProcessing

/// Fans out applied changes to every listener (OSC subscribers, persistence, the current patch).
/// The parameters' changes reach it synchronously (`ProcessingParameter.observeChanges`).
typealias ChangeFeed = Subscribers<ParameterChange<ParameterValue>>
