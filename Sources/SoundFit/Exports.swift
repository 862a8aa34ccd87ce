// `import SoundFit` brings the whole library: the layers below, and the composition root that
// wires them into a running SoundFit.
@_exported import OSCCore
@_exported import SoundFitModel
@_exported import SoundFitDSP
@_exported import SoundFitEngine
@_exported import SoundFitHearing
@_exported import SoundFitJSON
@_exported import SoundFitJack
@_exported import SoundFitOSC
@_exported import SoundFitProcessing
@_exported import SoundFitRuntime
@_exported import SoundFitState
@_exported import SoundFitWeb
