import Foundation
import HTTPTypes
import Hummingbird
import ModelStore
import ModelStoreSync
import ModelStoreSyncRequests

/// A refusal the sync server sends: an HTTP status and a JSON body `{"code", "message", "remedy"}`
/// that says what failed and how to fix it, never quoting a token or a stored value.
public struct SyncServerFailure: Error, Sendable, CustomStringConvertible, HTTPResponseError {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A code a client can match: `unauthorized`, `refused`, `schemaMismatch`, `badRequest`, …
    public var code: String
    /// What failed, on what.
    public var message: String
    /// What to do about it.
    public var remedy: String?
    /// Seconds a client should wait before retrying, for 429 and 503.
    public var retryAfter: Int?

    /// A failure.
    public init(
        _ status: HTTPResponse.Status, code: String, _ message: String, remedy: String? = nil, retryAfter: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.remedy = remedy
        self.retryAfter = retryAfter
    }

    /// `status code: message`.
    public var description: String { "\(status.code) \(code): \(message)" }

    /// The JSON response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        if let retryAfter { headers[.retryAfter] = "\(retryAfter)" }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"modelstore-sync\"" }
        let body = Body(code: code, message: message, remedy: remedy)
        let data = (try? JSONEncoder().encode(body)) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private struct Body: Encodable {
        var code: String
        var message: String
        var remedy: String?
    }

    // MARK: Common refusals

    /// The request needs a valid bearer token.
    static func unauthorized(_ message: String) -> SyncServerFailure {
        SyncServerFailure(
            .unauthorized, code: "unauthorized", message,
            remedy: "Send 'Authorization: Bearer TOKEN' with a token signed by the server's key, not expired")
    }

    /// The request carries more than a limit allows.
    static func tooLarge(_ message: String, remedy: String) -> SyncServerFailure {
        SyncServerFailure(.contentTooLarge, code: "tooLarge", message, remedy: remedy)
    }

    /// The failure to send for an error the sync host or the store threw; messages of store errors
    /// are left out, since they may quote stored values.
    static func from(_ error: any Error, path: String) -> SyncServerFailure {
        if let failure = error as? SyncServerFailure { return failure }
        if let refusal = error as? SyncRequestRefusal {
            return SyncServerFailure(
                HTTPResponse.Status(code: refusal.status), code: refusal.code, refusal.message, remedy: refusal.remedy)
        }
        if let error = error as? SyncError {
            if error.code == .schemaMismatch || error.code == .remoteChanged {
                return SyncServerFailure(.conflict, code: error.code.name, error.message, remedy: error.remedy)
            }
            if error.code == .refused {
                return SyncServerFailure(.forbidden, code: "refused", error.message, remedy: error.remedy)
            }
            if error.isTransient {
                return SyncServerFailure(
                    .serviceUnavailable, code: "busy", "the '\(path)' request met a concurrent write",
                    remedy: "Retry; nothing of the request was stored", retryAfter: 1)
            }
            if let store = error.underlyingError as? DataStoreError {
                return storeFailure(store, path: path)
            }
            return SyncServerFailure(
                .internalServerError, code: error.code.name, "the '\(path)' request failed (\(error.code))",
                remedy: "The server's log says more")
        }
        if let store = error as? DataStoreError { return storeFailure(store, path: path) }
        return SyncServerFailure(
            .internalServerError, code: "internal", "the '\(path)' request failed",
            remedy: "The server's log says more")
    }

    private static func storeFailure(_ error: DataStoreError, path: String) -> SyncServerFailure {
        switch error.code {
        case .conflict, .locked, .io:
            return SyncServerFailure(
                .serviceUnavailable, code: "busy", "the '\(path)' request met a concurrent write or a busy store",
                remedy: "Retry; nothing of the request was stored", retryAfter: 1)
        case .uniqueConstraintViolation, .denyRuleViolation, .relationshipCountViolation, .invalidValue, .notFound,
            .invalidPredicate, .unsupportedFeature, .readOnly:
            return SyncServerFailure(
                .unprocessableContent, code: "rejected",
                "the store rejected the '\(path)' request's changes (\(error.code))",
                remedy: "Check the pushed values against the schema's rules; nothing was stored")
        default:
            return SyncServerFailure(
                .internalServerError, code: "store", "the store failed on the '\(path)' request (\(error.code))",
                remedy: "The server's log says more")
        }
    }
}
