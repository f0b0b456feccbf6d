import Foundation
import Testing

/// A network namespace of the test's own, joined to this one by a veth pair: the server listens
/// on this side's address, clients run in the namespace (`ip netns exec`), and the link can be
/// throttled (a token-bucket qdisc, so requests stay in flight long enough to cut) and cut.
struct NetworkNamespace {
    let name: String
    let hostSide: String
    let clientSide: String
    let hostAddress: String
    let clientAddress: String

    /// Whether this machine lets the tests create namespaces (root, or CAP_NET_ADMIN and CAP_SYS_ADMIN).
    static let isAvailable: Bool = {
        let probe = "mss-probe-\(getpid())"
        guard (try? run("ip", "netns", "add", probe)) != nil else { return false }
        _ = try? run("ip", "netns", "del", probe)
        return true
    }()

    static let skipMessage: Comment = "this machine cannot create network namespaces ('ip netns add' failed)"

    init() throws {
        let tag = String(format: "%05d", Int.random(in: 0..<100_000))
        let subnet = Int.random(in: 1...250)
        name = "mss\(tag)"
        hostSide = "mssh\(tag)"
        clientSide = "mssc\(tag)"
        hostAddress = "10.231.\(subnet).1"
        clientAddress = "10.231.\(subnet).2"
        try Self.run("ip", "netns", "add", name)
        try Self.run("ip", "link", "add", hostSide, "type", "veth", "peer", "name", clientSide)
        try Self.run("ip", "link", "set", clientSide, "netns", name)
        try Self.run("ip", "addr", "add", "\(hostAddress)/30", "dev", hostSide)
        try Self.run("ip", "link", "set", hostSide, "up")
        try inside("ip", "addr", "add", "\(clientAddress)/30", "dev", clientSide)
        try inside("ip", "link", "set", clientSide, "up")
        try inside("ip", "link", "set", "lo", "up")
    }

    /// Limits both directions to `rate` (such as `1mbit`).
    func throttle(_ rate: String) throws {
        try Self.run(
            "tc", "qdisc", "add", "dev", hostSide, "root", "tbf", "rate", rate, "burst", "4kb", "latency", "5s")
        try inside(
            "tc", "qdisc", "add", "dev", clientSide, "root", "tbf", "rate", rate, "burst", "4kb", "latency", "5s")
    }

    /// Lifts the limit ``throttle(_:)`` set.
    func unthrottle() throws {
        try Self.run("tc", "qdisc", "del", "dev", hostSide, "root")
        try inside("tc", "qdisc", "del", "dev", clientSide, "root")
    }

    /// Cuts the link (both ends down) or restores it.
    func link(up: Bool) throws {
        try Self.run("ip", "link", "set", hostSide, up ? "up" : "down")
        try inside("ip", "link", "set", clientSide, up ? "up" : "down")
    }

    /// Waits (up to about ten seconds) until a TCP connection from the namespace to `port` on
    /// ``hostAddress`` opens: a link set up again carries traffic only once both ends have their
    /// carrier and the namespace's route back, which takes a moment the kernel does not wait for.
    /// Throws when it never opens.
    func waitUntilReachable(port: Int) async throws {
        for _ in 0..<100 {
            let probe = "exec 3<>/dev/tcp/\(hostAddress)/\(port)"
            if (try? inside("timeout", "1", "bash", "-c", probe)) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CommandFailure(
            command: ["connect", "\(hostAddress):\(port)"],
            output: "no TCP connection from the namespace opened in 10 s")
    }

    /// Starts `arguments` in the namespace.
    func start(_ arguments: [String], output: Pipe) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = ["netns", "exec", name] + arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return process
    }

    /// Runs `arguments` in the namespace to the end; returns what it printed.
    @discardableResult
    func inside(_ arguments: String...) throws -> String { try inside(arguments) }

    /// Runs `arguments` in the namespace to the end; returns what it printed.
    @discardableResult
    func inside(_ arguments: [String]) throws -> String {
        try Self.run(["ip", "netns", "exec", name] + arguments)
    }

    func remove() {
        _ = try? Self.run("ip", "netns", "del", name)
        _ = try? Self.run("ip", "link", "del", hostSide)
    }

    @discardableResult
    static func run(_ arguments: String...) throws -> String { try run(arguments) }

    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let (status, text) = try command(arguments)
        guard status == 0 else { throw CommandFailure(command: arguments, output: text) }
        return text
    }

    struct CommandFailure: Error, CustomStringConvertible {
        let command: [String]
        let output: String
        var description: String { "'\(command.joined(separator: " "))' failed: \(output)" }
    }
}
