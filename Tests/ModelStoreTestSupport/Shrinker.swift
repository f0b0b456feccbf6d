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
}
