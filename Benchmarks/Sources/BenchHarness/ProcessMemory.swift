import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The memory of the current process, as the kernel reports it.
public enum ProcessMemory {
    /// The peak resident set size of this process so far, in bytes.
    ///
    /// Reads `VmHWM` from `/proc/self/status` on Linux, else `getrusage`'s `ru_maxrss`. A peak is
    /// per process, which is why every benchmark runs in a child process of its own.
    public static func peakResidentBytes() -> Int {
        if let kilobytes = statusField("VmHWM") { return kilobytes * 1024 }
        var usage = rusage()
        #if canImport(Darwin)
            getrusage(RUSAGE_SELF, &usage)
            return Int(usage.ru_maxrss)
        #else
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Int(usage.ru_maxrss) * 1024
        #endif
    }

    /// Starts a new peak: returns freed heap memory to the kernel (glibc's `malloc_trim`), then resets
    /// `VmHWM` to the present resident size by writing `5` to `/proc/self/clear_refs` (Linux 4.0+).
    /// Returns whether the peak was reset; elsewhere the peak stays the whole process's.
    @discardableResult
    public static func resetPeak() -> Bool {
        #if canImport(Glibc)
            // `malloc_trim` is glibc's, declared in `malloc.h`, which the Glibc module does not import.
            if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
                let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
                _ = trim(0)
            }
            let descriptor = open("/proc/self/clear_refs", O_WRONLY)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            return write(descriptor, "5", 1) == 1
        #else
            return false
        #endif
    }

    /// The current resident set size of this process, in bytes (`VmRSS`), or `nil` where unknown.
    public static func currentResidentBytes() -> Int? {
        statusField("VmRSS").map { $0 * 1024 }
    }

    /// A `kB` field of `/proc/self/status`.
    static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return parseStatusField(name, in: status)
    }

    /// The number of kilobytes of a `Name:   123 kB` line in a `/proc/<pid>/status` text.
    static func parseStatusField(_ name: String, in status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let fields = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" })
            return fields.first.flatMap { Int($0) }
        }
        return nil
    }
}
