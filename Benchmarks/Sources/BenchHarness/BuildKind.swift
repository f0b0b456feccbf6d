/// What kind of build a benchmark binary is, for the line of a report that describes the run.
public enum BuildKind {
    /// `release build`, or for a debug build (which runs only `--smoke`) a warning that its timings
    /// are not to be quoted.
    public static var description: String {
        #if DEBUG
            "debug build (a smoke check of results: timings not to be quoted)"
        #else
            "release build"
        #endif
    }
}
