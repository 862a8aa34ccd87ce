import SoundFitModel

/// Fans out applied changes to every listener (OSC subscribers, persistence, the current patch).
/// The parameters' changes reach it synchronously: a kernel parameter's from its own delivery
/// (`KernelParameter`), a session parameter's through `ProcessingParameter.observeChanges`.
typealias ChangeFeed = Subscribers<ParameterChange<ParameterValue>>
