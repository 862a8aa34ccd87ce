/// The masked threshold at one frequency of one ear by the plateau method (Hood), as
/// ISO 8253-1 describes it: narrow-band noise in the
/// non-test ear starting at that ear's threshold + 10 dB effective masking (EM), raised in 5 dB
/// steps while the tone is re-measured at each; the masked threshold is where the tone's level
/// stays unchanged over 15 dB of masking (four masking levels in a row).
///
/// How each masking level is measured (the clinical shortcut of the plateau method): the tone is
/// presented at the current level; heard → the masking rises 5 dB; missed → the tone rises 5 dB.
/// When the tone was heard at one level at four masking levels in a row, a full
/// `ThresholdSearch` (2 of 3 ascending) at the highest of them confirms it; a confirmed threshold
/// more than 5 dB above the plateau means the plateau was not one (a lucky run of answers), and
/// the stepping goes on from the confirmed level.
///
/// Limits, each ending in a masking dilemma (reported as such, never as a number) when no
/// plateau was found before it:
/// - the next masking level exceeds what the output can present at this frequency
///   (`maximumMasking`, rounded down to the 5 dB grid);
/// - over-masking: the masking minus the interaural attenuation reaches the test ear's
///   threshold. Without bone conduction the test ear's cochlear (bone) threshold is not known;
///   the assumption made here is that it equals the tone level currently heard (no air-bone gap,
///   a sensorineural loss). With a conductive component the real over-masking begins earlier; it
///   then shows as a threshold that keeps rising with the masking, which never forms a plateau
///   and so ends as a dilemma too;
/// - 60 presentations without a plateau.
///
/// The tone not heard twice at the maximum level with the masking on is "no response at the
/// maximum" (masked): neither ear heard it, so it is no shadow.
public struct PlateauSearch: Sendable, Equatable {
    /// How a masked search ended.
    public enum Outcome: Sendable, Equatable {
        /// `maskingLevel`: the highest masking level of the plateau, where the threshold was confirmed.
        case threshold(level: Double, maskingLevel: Double)
        case noResponse(level: Double, maskingLevel: Double)
        case dilemma
    }

    /// Masking levels a plateau spans (15 dB in 5 dB steps).
    public static let plateauLength = 4
    public static let maximumPresentations = 60

    public let interauralAttenuation: Double
    public let minimumLevel: Double
    public let maximumLevel: Double
    public let maximumMasking: Double
    /// dB EM of the noise now.
    public private(set) var masking: Double
    /// dB HL of the tone now.
    public private(set) var level: Double
    public private(set) var outcome: Outcome?
    public private(set) var presentations = 0

    /// The tone level heard at each masking level since the level last changed.
    private var heardRun = 0
    private var missesAtMaximum = 0
    private var confirmation: ThresholdSearch?

    /// - Parameters:
    ///   - unmaskedThreshold: the test ear's threshold found without masking (dB HL).
    ///   - otherThreshold: the non-test ear's threshold at this frequency (dB HL).
    public init(unmaskedThreshold: Double, otherThreshold: Double, interauralAttenuation: Double,
                minimumLevel: Double, maximumLevel: Double, maximumMasking: Double) {
        self.interauralAttenuation = interauralAttenuation
        self.minimumLevel = ThresholdSearch.gridUp(minimumLevel)
        self.maximumLevel = max(self.minimumLevel, ThresholdSearch.gridDown(maximumLevel))
        self.maximumMasking = ThresholdSearch.gridDown(maximumMasking)
        masking = ThresholdSearch.gridUp(otherThreshold) + 10
        level = min(max(ThresholdSearch.gridUp(unmaskedThreshold), self.minimumLevel), self.maximumLevel)
        if masking > self.maximumMasking || overMasks(masking) { outcome = .dilemma }
    }

    /// The level to present now (the confirmation's while it runs).
    public var toneLevel: Double { confirmation?.level ?? level }

    public mutating func record(heard: Bool) {
        guard outcome == nil else { return }
        presentations += 1
        if var search = confirmation {
            search.record(heard: heard)
            confirmation = search
            switch search.outcome {
            case nil: break
            case .noResponse:
                outcome = .noResponse(level: maximumLevel, maskingLevel: masking)
            case .threshold(let confirmed):
                confirmation = nil
                if confirmed <= level + 5 {
                    outcome = .threshold(level: confirmed, maskingLevel: masking)
                } else {
                    level = confirmed
                    heardRun = 1
                    raiseMasking()
                }
            }
        } else if heard {
            heardRun += 1
            if heardRun >= Self.plateauLength {
                confirmation = ThresholdSearch(startLevel: level, minimumLevel: minimumLevel, maximumLevel: maximumLevel)
            } else {
                raiseMasking()
            }
        } else if level >= maximumLevel {
            missesAtMaximum += 1
            if missesAtMaximum >= 2 { outcome = .noResponse(level: maximumLevel, maskingLevel: masking) }
        } else {
            level += 5
            heardRun = 0
        }
        if outcome == nil && presentations >= Self.maximumPresentations { outcome = .dilemma }
    }

    private mutating func raiseMasking() {
        let next = masking + 5
        if next > maximumMasking || overMasks(next) {
            outcome = .dilemma
        } else {
            masking = next
        }
    }

    /// Whether noise at `masking` dB EM, attenuated by the head, reaches the test ear's cochlea at
    /// or above the tone level heard (assumed bone threshold).
    private func overMasks(_ masking: Double) -> Bool {
        masking - interauralAttenuation >= level
    }
}
