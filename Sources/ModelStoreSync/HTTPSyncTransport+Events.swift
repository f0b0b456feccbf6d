import Foundation
import ModelStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One connection to a sync server's server-sent events: calls back once when it opens (changes
/// may have happened while it was closed) with an announcement without a number, and once per
/// event with what its data holds (a transaction number, or an announcement in JSON carrying
/// changes), until the server or the network ends it.
enum EventStream {
    /// How long the stream may stay silent; the server sends a comment more often than this.
    static let idleTimeout: TimeInterval = 45

    /// Reads the stream `request` opens, calling `onEvent` as described; returns whether the server
    /// accepted it (answered 200), once it has ended.
    static func run(_ request: URLRequest, onEvent: @escaping @Sendable (SyncAnnouncement) -> Void) async -> Bool {
        var request = request
        request.timeoutInterval = idleTimeout
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        let reader = EventReader(onEvent: onEvent)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = idleTimeout
        let session = URLSession(configuration: configuration, delegate: reader, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                reader.begin(continuation)
                session.dataTask(with: request).resume()
            }
        } onCancel: {
            reader.cancel()
        }
    }
}

/// Parses server-sent events as they arrive: every event that carries data is one announcement,
/// with the number its data holds (`nil` when it holds none), or the announcement its data spells
/// in JSON (an object, which carries changes).
private final class EventReader: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var buffer = Data()
        var opened = false
        var ended = false
        var continuation: CheckedContinuation<Bool, Never>?
        var task: URLSessionTask?
    }

    private let onEvent: @Sendable (SyncAnnouncement) -> Void
    private let state = LockedValue(State())

    init(onEvent: @escaping @Sendable (SyncAnnouncement) -> Void) {
        self.onEvent = onEvent
    }

    func begin(_ continuation: CheckedContinuation<Bool, Never>) {
        let ended = state.withLock { state in
            state.continuation = continuation
            return state.ended
        }
        if ended { finish() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.ended = true
            return state.task
        }
        task?.cancel()
        finish()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let accepted = (response as? HTTPURLResponse)?.statusCode == 200
        state.withLock { state in
            state.task = dataTask
            state.opened = accepted
        }
        completionHandler(accepted ? .allow : .cancel)
        if accepted { onEvent(SyncAnnouncement(transaction: nil)) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events = state.withLock { state -> [[Substring]] in
            state.buffer.append(data)
            var events: [[Substring]] = []
            // Events end with a blank line; lines end with LF (CRLF is folded to LF first).
            while let end = Self.eventEnd(in: state.buffer) {
                let event = String(decoding: state.buffer[state.buffer.startIndex..<end.lowerBound], as: UTF8.self)
                state.buffer.removeSubrange(state.buffer.startIndex..<end.upperBound)
                let lines = event.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
                let data = lines.filter { $0.hasPrefix("data:") }
                if !data.isEmpty { events.append(data.map { $0.dropFirst(5) }) }
            }
            return events
        }
        // Each event in order: one that carries changes must not be folded into the next.
        for data in events { onEvent(Self.announcement(data)) }
    }

    /// What an event's data lines say: a number, an announcement in JSON, or neither (an
    /// announcement without a number, which makes the engine pull).
    private static func announcement(_ data: [Substring]) -> SyncAnnouncement {
        guard data.count == 1 else { return SyncAnnouncement(transaction: nil) }
        let text = data[0].trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("{") {
            return (try? JSONDecoder().decode(SyncAnnouncement.self, from: Data(text.utf8)))
                ?? SyncAnnouncement(transaction: nil)
        }
        return SyncAnnouncement(transaction: Int64(text))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock { $0.ended = true }
        finish()
    }

    private func finish() {
        let (continuation, opened) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.opened)
        }
        continuation?.resume(returning: opened)
    }

    private static func eventEnd(in buffer: Data) -> Range<Data.Index>? {
        if let range = buffer.range(of: Data("\n\n".utf8)) { return range }
        return buffer.range(of: Data("\r\n\r\n".utf8))
    }
}
