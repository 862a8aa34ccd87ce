import SoundFitModel

/// Recovery after a handler invalidated parameters (see `invalidate(parameters:cause:)`).
extension ProcessingController {
    func recover(_ session: ProcessingSession, invalidating names: Set<SessionParameter.Name>,
                 cause: (any Error)?) async -> InvalidationReport? {
        guard let handler, self.session === session else { return nil }
        var report = InvalidationReport(invalidated: names, cause: cause)
        var outOfDate: Set<SessionParameter.Name> = names.contains(.preset) ? [.preset] : []
        for readable in SessionParameter.Readable.allCases where names.contains(readable.name) {
            do {
                let reading = try await read(readable, from: handler)
                report.readings[readable] = .success(reading)
                guard reading != session.expectedReading(readable) else { continue }
                if case .techLevel(let level) = reading { report.techLevelMismatch = level }
                if let name = readable.restoredBy { outOfDate.insert(name) }
            } catch {
                report.readings[readable] = .failure(error)
                if let name = readable.restoredBy { outOfDate.insert(name) }
            }
        }
        for name in SessionParameter.Name.applicationOrder where outOfDate.contains(name) {
            do {
                try await session.writable(name)?.reapplyToHandler()
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
