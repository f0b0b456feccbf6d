/// Shrinks a failing sequence of randomized test steps to a short one that still fails, so that a
/// failure prints as a reproduction a person can read.
public enum Shrinker {
    /// The sequence left after dropping runs of steps, halving the run length down to single steps,
    /// while `fails` still says the sequence fails. `steps` must fail to begin with.
    public static func shrink<Step>(_ steps: [Step], fails: ([Step]) -> Bool) -> [Step] {
        var current = steps
        var chunk = max(current.count / 2, 1)
        while chunk >= 1 {
            var start = 0
            var removedAny = false
            while start < current.count {
                var candidate = current
                candidate.removeSubrange(start..<min(start + chunk, current.count))
                if fails(candidate) {
                    current = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny { chunk /= 2 }
        }
        return current
    }

    /// What to print for a seeded run of `steps` that fails: the seed, the first problem `run`
    /// reports, and the shortest failing sequence found with its problem. `nil` when `run` finds none.
    public static func failureReport<Step>(seed: UInt64, _ steps: [Step], run: ([Step]) -> String?) -> String? {
        guard let failure = run(steps) else { return nil }
        let shortest = shrink(steps) { run($0) != nil }
        return "seed \(seed): \(failure)\nshrunk to \(shortest.count) steps: \(shortest)\n"
            + "fails with: \(run(shortest) ?? "?")"
    }
}
