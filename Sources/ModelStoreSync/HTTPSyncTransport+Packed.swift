import Foundation
import ModelStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// How a client and a sync server agree on the packed form of change sets (see SyncPushRequest's
// and SyncPullReply's coding). Every request of a transport that packs names the form in
// `ModelStore-Sync-Forms: packed`: a server of this version or later then answers pulls, pushes
// with a pull, and carried announcements (`GET changes?carry=1`) packed, and an older one, which
// looks at no such header, answers JSON arrays as always. Every answer of a server that reads the
// form carries the same header, and a transport sends a push packed only after such an answer.
extension HTTPSyncTransport {
    /// The header through which both sides name the forms of change sets they read, beside the
    /// JSON arrays every version reads: `ModelStore-Sync-Forms: packed`.
    ///
    /// A client sends it with every request to ask for packed replies (a server that does not read
    /// the form ignores it); a server sends it with every answer to say that it reads packed
    /// pushes. Both forms decode with the same `JSONDecoder`, so a reader needs nothing more.
    public static let formsHeader = "ModelStore-Sync-Forms"

    /// The value of ``formsHeader`` that names the packed form.
    public static let packedForm = "packed"

    /// The `JSONEncoder` user info key that makes it write a push's changes and a pulled page's
    /// models packed: set it to `true` only for a reader known to read the form (a server sets it
    /// for a request whose ``formsHeader`` names ``packedForm``).
    public static var packedCodingKey: CodingUserInfoKey { SyncMessageCoding.packedChanges }

    /// Whether a ``formsHeader`` value (a comma-separated list) names the packed form.
    public static func namesPackedForm(_ value: String?) -> Bool {
        guard let value else { return false }
        return value.split(separator: ",").contains {
            $0.trimmingCharacters(in: .whitespaces).lowercased() == packedForm
        }
    }

    /// Whether the server's answer says it reads packed pushes.
    static func readsPacked(_ response: HTTPURLResponse) -> Bool {
        namesPackedForm(response.value(forHTTPHeaderField: formsHeader))
    }

    /// Whether the next push goes packed: the transport packs, and the server's last answer said
    /// it reads the form.
    var sendsPacked: Bool { packedChanges && serverReadsPacked.withLock { $0 } == true }
}
