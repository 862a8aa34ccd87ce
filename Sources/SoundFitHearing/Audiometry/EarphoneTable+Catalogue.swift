/// The earphone tables SoundFit knows by name (`/test/earphone NAME`, `/test/config earphone
/// NAME`, `soundfit run --earphone NAME`), each with the standard or sheet its values come from.
///
/// Every value below was read from the source named in its doc comment; where two sources were
/// found they agree. Tables that could not be sourced are left out rather than guessed: TDH-49/50
/// (ANSI S3.6) — no public copy of their RETSPL values was found; use a user table from the
/// sheet of the audiometer or earphone for those.
extension EarphoneTable {
    /// A supra-aural earphone of the TDH-39 type on an IEC 60318-3 (NBS 9-A) coupler, ANSI S3.6 /
    /// ISO 389-1: the default. The values agree with Interacoustics' AA222 instructions for use
    /// ("Valores de referencia para calibración de estímulos", TDH39 column,
    /// https://manualslib.mx/manual/38281/Interacoustics-Aa222.html?page=77) and with the Sound
    /// Scouts audiometer specification (https://soundscouts.com/audiometer-specifications) at every
    /// frequency they list (750 Hz is listed by neither). Interaural attenuation: the supra-aural
    /// minimum, 40 dB (hearing.md).
    public static let tdh39 = EarphoneTable(name: "TDH-39", checked: [
        (125, 45.0), (250, 25.5), (500, 11.5), (750, 8.0), (1000, 7.0), (1500, 6.5), (2000, 9.0),
        (3000, 10.0), (4000, 9.5), (6000, 15.5), (8000, 13.0),
    ], interauralAttenuation: supraAuralInterauralAttenuation,
       source: "ANSI S3.6 / ISO 389-1, IEC 60318-3 coupler (as in Interacoustics AA222 instructions)")

    /// RadioEar DD45 supra-aural earphone: Interacoustics' AA222 instructions for use, stimulus
    /// calibration reference values, DD45 column
    /// (https://manualslib.mx/manual/38281/Interacoustics-Aa222.html?page=77). ISO 389-1:2017 gives
    /// DD45 values of its own; the standard's text was not available to compare. 750 Hz is not
    /// listed (interpolated). Interaural attenuation: the supra-aural minimum, 40 dB (hearing.md).
    public static let dd45 = EarphoneTable(name: "DD45", checked: [
        (125, 47.5), (250, 27.0), (500, 13.0), (1000, 6.0), (1500, 8.0), (2000, 8.0), (3000, 8.0),
        (4000, 9.0), (6000, 20.5), (8000, 12.0),
    ], interauralAttenuation: supraAuralInterauralAttenuation,
       source: "Interacoustics AA222 instructions for use, DD45 reference values (ISO 389-1:2017 model)")

    /// RadioEar DD65 v2 circumaural earphone: the Sound Scouts audiometer specification's RETSPL
    /// table, RadioEar DD65v2 column (https://soundscouts.com/audiometer-specifications).
    /// Interaural attenuation: no source for circumaural earphones was found, so the supra-aural
    /// minimum, 40 dB, the conservative margin.
    public static let dd65v2 = EarphoneTable(name: "DD65v2", checked: [
        (125, 30.6), (250, 16.9), (500, 7.8), (1000, 5.3), (2000, 2.3), (3000, 2.0), (4000, 9.3),
        (6000, 20.8), (8000, 20.9),
    ], interauralAttenuation: supraAuralInterauralAttenuation,
       source: "Sound Scouts audiometer specification, RadioEar DD65v2 RETSPL")

    /// Sennheiser HD 300 headphones: the Sound Scouts audiometer specification's RETSPL table,
    /// Sennheiser HD300 column (https://soundscouts.com/audiometer-specifications). Interaural
    /// attenuation: not sourced, the supra-aural minimum, 40 dB (conservative).
    public static let hd300 = EarphoneTable(name: "HD300", checked: [
        (125, 30.5), (250, 13.7), (500, 6.7), (1000, 0.4), (2000, 1.4), (3000, -3.7), (4000, -1.1),
        (6000, 3.8), (8000, 19.0),
    ], interauralAttenuation: supraAuralInterauralAttenuation,
       source: "Sound Scouts audiometer specification, Sennheiser HD300 RETSPL")

    /// Sennheiser HDA 200 circumaural earphone, ISO 389-8:2004: the table `hda200` of the
    /// Auditory Modeling Toolbox (`defaults/arg_absolutethreshold.m`, "ISO 389-8:2004", data
    /// collected by Claus Elberling; read in AudioGroupCologne/SUpDEq,
    /// thirdParty/amtoolbox-full-1.4.0), at the audiometric frequencies. The same file's ER-3A
    /// table agrees with `er3a`'s sources. Interaural attenuation: not sourced for circumaural
    /// earphones, the supra-aural minimum, 40 dB (conservative).
    public static let hda200 = EarphoneTable(name: "HDA200", checked: [
        (125, 30.5), (250, 18.0), (500, 11.0), (750, 6.0), (1000, 5.5), (1500, 5.5), (2000, 4.5),
        (3000, 2.5), (4000, 9.5), (6000, 17.0), (8000, 17.5),
    ], interauralAttenuation: supraAuralInterauralAttenuation,
       source: "ISO 389-8:2004 (Auditory Modeling Toolbox, arg_absolutethreshold.m, hda200)")

    /// ER-3A (E-A-RTONE 3A/5A) insert earphones on an IEC 60318-4 (IEC 711) occluded-ear
    /// simulator, ISO 389-2:1994: the E-A-RTONE 5A instructions for use, "ANSI S3.6-1996 and ISO
    /// 389-2:1994 Calibration Values", IEC 711 coupler, given for 70 dB HL (70 subtracted here;
    /// https://www.manualslib.com/manual/1816149/E-A-R-Auditory-Systems-E-A-Rtone-5a.html?page=7).
    /// The same values are quoted from BS EN ISO 389-2:1997 in BenGurer/toy_works
    /// (auditory-functions/getdBHLinSPL_inserts.m) and the Auditory Modeling Toolbox's `er3a`
    /// table (link as `hda200`). Interaural attenuation: the insert minimum's
    /// lower end, 50 dB (hearing.md).
    public static let er3a = EarphoneTable(name: "ER-3A", checked: [
        (125, 28.0), (250, 17.5), (500, 9.5), (750, 6.0), (1000, 5.5), (1500, 9.5), (2000, 11.5),
        (3000, 13.0), (4000, 15.0), (6000, 16.0), (8000, 15.5),
    ], interauralAttenuation: insertInterauralAttenuation,
       source: "ISO 389-2:1994, IEC 60318-4 occluded-ear simulator (E-A-RTONE 5A instructions)")

    /// ER-3A insert earphones on an HA-2 2 cc coupler (B&K DB-0138), ANSI S3.6 / ISO 389-2: the
    /// E-A-RTONE 5A instructions' "Coupler 2cc DB-0138" column, given for 70 dB HL (70 subtracted;
    /// link as `er3a`); the same values are the EARtone 3A column of Interacoustics' AA222
    /// instructions (link as `dd45`). Interaural attenuation: 50 dB, as `er3a`.
    public static let er3aHA2 = EarphoneTable(name: "ER-3A-HA2", checked: [
        (125, 26.0), (250, 14.0), (500, 5.5), (750, 2.0), (1000, 0.0), (1500, 2.0), (2000, 3.0),
        (3000, 3.5), (4000, 5.5), (6000, 2.0), (8000, 0.0),
    ], interauralAttenuation: insertInterauralAttenuation,
       source: "ANSI S3.6 / ISO 389-2:1994, HA-2 2 cc coupler (E-A-RTONE 5A instructions)")

    /// Every table known by name, the default first.
    public static let catalogue: [EarphoneTable] = [tdh39, dd45, dd65v2, hda200, hd300, er3a, er3aHA2]

    /// The table called `name`, ignoring case, spaces and hyphens (`tdh39`, `DD65 v2`); nil for
    /// a name not in the catalogue.
    public static func named(_ name: String) -> EarphoneTable? {
        let key = catalogueKey(name)
        return catalogue.first { catalogueKey($0.name) == key }
    }

    /// The catalogue's names, for messages and help.
    public static var catalogueNames: String { catalogue.map(\.name).joined(separator: ", ") }

    private static func catalogueKey(_ name: String) -> String {
        String(name.lowercased().filter { $0 != "-" && $0 != " " && $0 != "_" })
    }
}
