// soundfit-bench: offline timing of the SoundFit DSP kernels.
//
//     swift run -c release --scratch-path .build-dsp soundfit-bench [--kernels | --all] [--runs N]
//                                                                  [--channels 2,8] [--blocks 64,256]
//
// Sections:
//   --kernels  (default) kernel throughput on arrays, ns per sample-channel, beside a C reference
//              biquad compiled -O3, median of N runs (default 7); the biquad on both SIMD paths
//              (baseline and avx2-fma where the CPU has it) with their ratio.
//   --personalization
//              the multiband personalization processor per tech level beside its Faust-compiled
//              equivalent (build it first: Benchmarks/Faust/build.sh), plus group delays.
//   --audiometry
//              the hearing test simulated over 200 listeners: threshold error and duration,
//              SoundFit's procedure beside the fixed modified Hughson-Westlake.
//   --audiometry-clinical
//              the hearing test with cross-hearing listeners: threshold error,
//              shadows, masking, reliability verdicts and duration per ear.
//   --all      every section (a JACK process-callback timing section is planned:
//              add it as another `case` below with its own function).
//
// Timing goals are checked here, never in tests (timed tests flake on shared machines).

import Foundation

enum Section: String, CaseIterable {
    case kernels
    case personalization
    case audiometry
    case audiometryClinical
}

var sections: [Section] = []
var runs = 7
var channelCounts = [2, 8]
var blockSizes = [64, 256]
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--kernels": sections.append(.kernels)
    case "--personalization": sections.append(.personalization)
    case "--audiometry": sections.append(.audiometry)
    case "--audiometry-clinical": sections.append(.audiometryClinical)
    case "--all": sections = Section.allCases
    case "--runs":
        guard let value = arguments.popFirst().flatMap(Int.init), value >= 1 else {
            FileHandle.standardError.write(Data("--runs needs a positive integer\n".utf8))
            exit(2)
        }
        runs = value
    case "--channels", "--blocks":
        guard let list = arguments.popFirst()?.split(separator: ",").compactMap({ Int($0) }), !list.isEmpty,
              list.allSatisfy({ $0 >= 1 && $0 <= (argument == "--channels" ? 64 : 8192) }) else {
            FileHandle.standardError.write(Data("\(argument) needs a comma-separated list like 2,8\n".utf8))
            exit(2)
        }
        if argument == "--channels" { channelCounts = list } else { blockSizes = list }
    case "-h", "--help":
        print("usage: soundfit-bench [--kernels | --personalization | --audiometry | --audiometry-clinical | --all] [--runs N] [--channels 2,8] [--blocks 64,256]")
        exit(0)
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
        exit(2)
    }
}
if sections.isEmpty { sections = [.kernels] }

print("# soundfit-bench")
print("command: swift run -c release --scratch-path .build-dsp soundfit-bench \(CommandLine.arguments.dropFirst().joined(separator: " "))")
print("machine: \(MachineInfo.processorCount) cores (nproc), \(MachineInfo.cpuModel); build: \(MachineInfo.swiftBuild)")
print("")

for section in sections {
    switch section {
    case .kernels:
        var benchmark = KernelBenchmarks()
        benchmark.runs = runs
        benchmark.channelCounts = channelCounts
        benchmark.blockSizes = blockSizes
        print("## Kernels (ns per sample-channel, median of \(runs) runs, 48 kHz)")
        print("")
        print(KernelBenchmarks.table(benchmark.run()))
    case .personalization:
        var benchmark = PersonalizationBenchmarks()
        benchmark.runs = runs
        benchmark.channelCounts = channelCounts
        benchmark.blockSizes = blockSizes
        print("## Personalization (ns per sample-channel, median of \(runs) runs, 48 kHz)")
        print("")
        print(benchmark.run())
    case .audiometry:
        print("## Hearing test, simulated")
        print("")
        print(AudiometryBenchmarks().run())
    case .audiometryClinical:
        print("## Hearing test with cross-hearing, simulated")
        print("")
        print(ClinicalAudiometryBenchmarks().run())
    }
}
