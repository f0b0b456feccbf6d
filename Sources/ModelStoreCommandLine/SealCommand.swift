import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore seal URL`: accepts a JSON store edited by hand, by writing its new checksum.
enum SealCommand: Command {
    static let name = "seal"
    static let arguments = ["URL"]
    static let summary = "accept a JSON store edited by hand: record the checksum of its current contents"
    static let details = """
        A JSON store keeps the checksum of its bytes in its header, so that a file changed after
        ModelStore wrote it (a flipped bit, a cut) is refused rather than opened with wrong values.
        After a deliberate hand edit, 'seal' records the checksum of the file as it is now, and the
        store opens again. The file must be valid JSON with a ModelStore header; its records are
        checked against the schema when the store next opens ('modelstore verify' checks them now).
        A file without a checksum gets one. The file is replaced atomically, under the store's lock.

        Examples:
          modelstore seal json:trips.json
          modelstore seal json:trips.json --json
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let reference = try StoreReference(invocation.arguments[0])
        let (maintenance, request) = try reference.maintenance(for: name)
        return MaintenanceCommandReport(url: reference.string, report: try maintenance.seal(request))
    }
}
