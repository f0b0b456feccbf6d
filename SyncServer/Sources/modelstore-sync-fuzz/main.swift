import Foundation

// `modelstore-sync-fuzz`: the sync server's request decoder under fuzzing (SyncRequestFuzzing).
//
// Built with `-DMODELSTORE_FUZZING` and libFuzzer (scripts/fuzz-syncserver.sh), the command line
// goes to libFuzzer's driver. Otherwise:
//   modelstore-sync-fuzz seed DIR                         writes the seed inputs
//   modelstore-sync-fuzz replay FILE...                   runs each file once
//   modelstore-sync-fuzz mutate CORPUS FINDINGS [--seconds S] [--seed N]
//       a seeded mutation runner: mutates the corpus's inputs for S seconds (default 20), keeps
//       those that end in a refusal or acceptance not seen before in CORPUS, and writes each input
//       to FINDINGS/last-input before running it, so a crash leaves the input that caused it.

#if MODELSTORE_FUZZING
    /// libFuzzer's driver, from `libclang_rt.fuzzer_no_main` (which scripts/fuzz-syncserver.sh links).
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(
        runFuzzerDriver(&argc, &argv) { data, size in
            _ = SyncRequestFuzzing.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            return 0
        })
#else
    let arguments = Array(CommandLine.arguments.dropFirst())
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("modelstore-sync-fuzz: \(message)\n".utf8))
        exit(2)
    }
    func files(in directory: URL) -> [URL] {
        ((try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? [])
            .filter { !$0.lastPathComponent.hasPrefix(".") }.sorted { $0.path < $1.path }
    }
    switch arguments.first {
    case "seed" where arguments.count == 2:
        do {
            try SyncRequestFuzzing.writeSeeds(to: URL(fileURLWithPath: arguments[1]))
        } catch {
            fail("cannot write the seeds into '\(arguments[1])': \(error)")
        }
    case "replay" where arguments.count >= 2:
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read '\(path)'") }
            print("\(path): \(SyncRequestFuzzing.run([UInt8](data)))")
        }
        print("modelstore-sync-fuzz: \(arguments.count - 1) inputs, no failure")
    case "mutate" where arguments.count >= 3:
        let corpus = URL(fileURLWithPath: arguments[1])
        let findings = URL(fileURLWithPath: arguments[2])
        func option(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        guard let seconds = Double(option("--seconds") ?? "20"), seconds > 0 else { fail("'--seconds' needs a number") }
        guard let seed = UInt64(option("--seed") ?? "1") else { fail("'--seed' needs a whole number") }
        try? FileManager.default.createDirectory(at: findings, withIntermediateDirectories: true)
        var inputs = files(in: corpus).compactMap { FileManager.default.contents(atPath: $0.path).map { [UInt8]($0) } }
        guard !inputs.isEmpty else { fail("the corpus '\(corpus.path)' is empty: write seeds with 'seed DIR'") }
        let last = findings.appendingPathComponent("last-input")
        var seen = Set(inputs.map(SyncRequestFuzzing.run))
        var mutator = FuzzMutator(seed: seed)
        let deadline = Date().addingTimeInterval(seconds)
        var runs = 0
        while Date() < deadline {
            for _ in 0..<100 {
                let input = mutator.mutate(
                    inputs[mutator.below(inputs.count)], other: inputs[mutator.below(inputs.count)])
                try? Data(input).write(to: last)
                runs += 1
                if seen.insert(SyncRequestFuzzing.run(input)).inserted, inputs.count < 5_000 {
                    inputs.append(input)
                    try? Data(input).write(to: corpus.appendingPathComponent("found-\(seed)-\(runs)"))
                }
            }
        }
        try? FileManager.default.removeItem(at: last)
        print(
            "modelstore-sync-fuzz: \(runs) inputs in \(Int(seconds)) s (seed \(seed)), \(seen.count) outcomes, "
                + "corpus \(inputs.count) inputs, no failure")
    default:
        fail(
            """
            usage: modelstore-sync-fuzz seed DIR | replay FILE...
                   modelstore-sync-fuzz mutate CORPUS FINDINGS [--seconds S] [--seed N]
            """)
    }
#endif
