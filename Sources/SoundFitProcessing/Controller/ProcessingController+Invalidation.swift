import SoundFitModel

/// Recovery after a handler invalidated parameters (see `invalidate(parameters:cause:)`).
extension ProcessingController {
    func recover(_ session: ProcessingSession, invalidating names: Set<SessionParameter.Name>,
                 cause: (any Error)?) async -> InvalidationReport? {
        guard let handler, let applicators = session.handlerApplicators, self.session === session else { return nil }
        var report = InvalidationReport(invalidated: names, cause: cause)
        var outOfDate: Set<SessionParameter.Name> = names.contains(.preset) ? [.preset] : []
        for readable in SessionParameter.Readable.allCases where names.contains(readable.name) {
            do {
                let reading = try await read(readable, from: handler)
                report.readings[readable] = .success(reading)
                switch reading {
                case .isEnabled(let value) where value != session.isEnabled.value: outOfDate.insert(.isEnabled)
                case .intensity(let value) where value != session.intensity.value: outOfDate.insert(.intensity)
                case .canEnable(let value) where value != session.canEnable: outOfDate.insert(.preset)
                case .techLevel(let value) where value != session.techLevel: report.techLevelMismatch = value
                default: break
                }
            } catch {
                report.readings[readable] = .failure(error)
                switch readable {
                case .isEnabled: outOfDate.insert(.isEnabled)
                case .intensity: outOfDate.insert(.intensity)
                case .canEnable: outOfDate.insert(.preset)
                case .techLevel: break
                }
            }
        }
        for name in SessionParameter.Name.applicationOrder where outOfDate.contains(name) {
            do {
                switch name {
                case .preset:
                    session.preset.invalidate(applicators.preset)
                    try await session.preset.synchronizeApplicators()
                case .intensity:
                    session.intensity.invalidate(applicators.intensity)
                    try await session.intensity.synchronizeApplicators()
                default:
                    session.isEnabled.invalidate(applicators.isEnabled)
                    try await session.isEnabled.synchronizeApplicators()
                }
                report.reapplied.append(name)
            } catch {
                report.failures[name] = error
            }
        }
        return report
    }

    /// One read from the handler, bounded by the delivery timeout.
    func read(_ readable: SessionParameter.Readable,
                      from handler: any ProcessingHandler) async throws -> SessionParameter.ReadValue {
        let timeout = config.deliveryTimeout
        let reading = try await race(
            deadline: processingClock.now() + timeout, clock: processingClock,
            timeoutError: ProcessingError.readTimeoutExceeded(timeout)
        ) { try await handler.get(readable) }
        guard reading.parameter == readable else {
            throw ProcessingError.unexpectedReading(requested: readable, received: reading)
        }
        return reading
    }
}
