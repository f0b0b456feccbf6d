import Foundation
import Testing

@testable import ModelStoreSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the HTTP transport turns network failures and server answers into ``SyncError``s. The
/// transport against a real server is tested in the SyncServer package.
struct HTTPSyncTransportTests {
    private let url = URL(string: "http://127.0.0.1:9/sync")!

    private func answer(_ status: Int, _ body: String, headers: [String: String] = [:]) -> SyncError {
        let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        return HTTPSyncTransport.failure(
            status: status, body: Data(body.utf8), path: "push", url: url, response: response)
    }

    @Test func aServerThatCannotBeReachedIsATransientFailure() async throws {
        // Port 9 (discard) on loopback: nothing listens there on a test machine.
        let transport = HTTPSyncTransport(baseURL: url, token: "secret-token", timeout: 5)
        let hello = try JSONDecoder().decode(
            SyncHello.self, from: Data(#"{"replica":"r","schemaVersion":"1","schemaFingerprint":"f"}"#.utf8))
        let error = await #expect(throws: SyncError.self) { try await transport.hello(hello) }
        #expect(error?.code == .unreachable)
        #expect(error?.isTransient == true)
        #expect(error?.description.contains("secret-token") == false)
    }

    @Test func refusalsCarryTheServersMessageAndAreNotRetried() {
        let refused = answer(403, #"{"code":"refused","message":"outside the scope","remedy":"Change your own"}"#)
        #expect(refused.code == .refused)
        #expect(!refused.isTransient)
        #expect(refused.message.hasPrefix("outside the scope (403"))
        #expect(refused.remedy == "Change your own")
        let unauthorized = answer(401, "not json")
        #expect(unauthorized.code == .refused)
        #expect(unauthorized.remedy?.contains("MODELSTORE_SYNC_TOKEN") == true)
        let schema = answer(409, #"{"code":"schemaMismatch","message":"schemas differ"}"#)
        #expect(schema.code == .schemaMismatch)
        #expect(!schema.isTransient)
    }

    @Test func busyAndFailingServersAreRetried() {
        let limited = answer(429, #"{"code":"rateLimited","message":"too many"}"#, headers: ["Retry-After": "7"])
        #expect(limited.code == .busy)
        #expect(limited.isTransient)
        #expect(limited.remedy?.contains("7 s") == true)
        let unavailable = answer(503, "")
        #expect(unavailable.isTransient)
        let broken = answer(500, "<html>")
        #expect(broken.code == .unreachable)
        #expect(broken.isTransient)
    }

    @Test func messagesNameTheServerWithoutItsCredentials() {
        let address = URL(string: "https://user:pw@sync.example.com:8443/sync?key=1")!
        #expect(HTTPSyncTransport.describe(address) == "https://sync.example.com:8443/sync")
    }
}
