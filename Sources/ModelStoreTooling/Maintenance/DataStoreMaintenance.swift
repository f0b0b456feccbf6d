import Foundation
import ModelStore

/// What a store's adapter offers tools such as `modelstore`, which have no model types: the schema
/// its stores record, the files they keep, and inspection, verification, repair, compaction and
/// sealing. Register it with `StoreScheme.maintained(by:)`.
///
/// Every requirement but ``storedSchema(_:)`` has a default: a tool then opens the store with the
/// schema it records and reads it in full, and reports that the store is not repaired, compacted
/// or sealed. An implementation:
///
/// - MUST NOT create or change anything in ``storedSchema(_:)``, ``files(_:)``, ``inspect(_:)`` and
///   ``verify(_:)``, and MUST throw `DataStoreError.Code.notFound` when there is no store.
/// - MUST throw `DataStoreError.Code.unsupportedFeature` naming the store and saying what to do
///   instead from an operation its stores do not support.
/// - MUST leave the store as it was when ``repair(_:)``, ``compact(_:)`` or ``seal(_:)`` throws.
public protocol DataStoreMaintenance: Sendable {
    /// The schema the store was last written with, read from its own files.
    func storedSchema(_ request: StoreMaintenanceRequest) throws -> Schema.Description

    /// Whether the scheme's stores are files at the URL's location (the default), rather than data
    /// a server keeps (PostgreSQL): tools look for the path, and list and remove files, only for
    /// stores that are files. An implementation for a server MUST throw
    /// `DataStoreError.Code.notFound` from ``storedSchema(_:)`` when the server holds no store
    /// at the URL, since no path tells the tool that first.
    var storesFiles: Bool { get }

    /// The files the store keeps, with their sizes, relative to its directory (or to the folder of
    /// its file); empty when there is nothing at the location. The default lists everything under
    /// a directory, or a file and the files beside it whose names start with its name and a dot.
    func files(_ request: StoreMaintenanceRequest) -> [StoreFile]

    /// The configuration a tool opens the store with: the default is `configuration` itself; an
    /// adapter may turn off what would race with the tool, such as background compaction.
    func configurationForMaintenance(_ configuration: any DataStoreConfiguration) -> any DataStoreConfiguration

    /// Closes a store a tool opened, releasing its lock at once. The default does nothing: the
    /// store closes when it is released.
    func close(_ store: any DataStore)

    /// What the store holds, read without opening it; `nil` (the default) lets the tool open the
    /// store and count its models.
    func inspect(_ request: StoreMaintenanceRequest) throws -> StoreInspection?

    /// How many models of each entity the store holds, found without reading a large table whole:
    /// counted where that is cheap, estimated from the store's statistics past that (marked
    /// ``StoreEntityCount/isEstimate``); `nil` (the default) for a store without statistics, whose
    /// tool then bounds its counts itself. It MUST NOT read a whole large table, since a tool shows
    /// it at once (a store browser's first page).
    func estimatedCounts(_ request: StoreMaintenanceRequest) throws -> [StoreEntityCount]?

    /// The store's own account of how it runs a query, one line per step (an SQL store's `EXPLAIN`,
    /// then what the store does on the rows afterwards), for a store of this scheme that a tool
    /// opened; `nil` (the default) when the adapter gives none. It MUST NOT change anything.
    func queryPlan(for query: StoreQuery, in store: any DataStore) throws -> [String]?

    /// Checks the store's files. A result that is not ``StoreVerification/isComplete`` (the
    /// default: no problems) lets the tool go on to open the store and read it in full.
    func verify(_ request: StoreMaintenanceRequest) throws -> StoreVerification

    /// The damaged place an error thrown while opening or reading the store describes, when the
    /// adapter knows it better than the error's message; `nil` (the default) otherwise.
    func problem(describing error: DataStoreError, _ request: StoreMaintenanceRequest) -> StoreProblem?

    /// Mends a damaged store. The default throws `DataStoreError.Code.unsupportedFeature`.
    func repair(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport

    /// Rewrites the store without the space dead data takes. The default throws
    /// `DataStoreError.Code.unsupportedFeature`.
    func compact(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport

    /// Accepts a store edited by hand, recording the checksum of its current contents. The
    /// default throws `DataStoreError.Code.unsupportedFeature`.
    func seal(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport

    /// Rewrites the store, opened with the key `request`'s configuration names (none for a
    /// plaintext store), under the key `target`'s configuration names (none to decrypt it):
    /// `modelstore encrypt`, `decrypt` and `rekey`. It MUST be atomic (a crash at any instant
    /// leaves the old store or the new one) and MUST leave the store as it was when it throws;
    /// `progress` takes the work done and the total, in any unit. The default throws
    /// `DataStoreError.Code.unsupportedFeature`.
    func changeEncryption(
        _ request: StoreMaintenanceRequest, to target: StoreMaintenanceRequest,
        progress: (_ done: Int, _ total: Int) -> Void
    ) throws -> StoreMaintenanceReport
}

extension DataStoreMaintenance {
    /// `true`: the stores are files at the URL's location.
    public var storesFiles: Bool { true }

    /// Everything under the store's directory, or its file and the files beside it; nothing for a
    /// store that is not files.
    public func files(_ request: StoreMaintenanceRequest) -> [StoreFile] {
        storesFiles ? StoreFile.all(at: request.location) : []
    }

    /// `configuration` itself.
    public func configurationForMaintenance(
        _ configuration: any DataStoreConfiguration
    ) -> any DataStoreConfiguration {
        configuration
    }

    /// Nothing: the store closes when it is released.
    public func close(_ store: any DataStore) {}

    /// `nil`: the tool opens the store and counts its models.
    public func inspect(_ request: StoreMaintenanceRequest) throws -> StoreInspection? { nil }

    /// `nil`: the store keeps no statistics, and the tool bounds its counts itself.
    public func estimatedCounts(_ request: StoreMaintenanceRequest) throws -> [StoreEntityCount]? { nil }

    /// `nil`: the adapter gives no plan.
    public func queryPlan(for query: StoreQuery, in store: any DataStore) throws -> [String]? { nil }

    /// No problems, and not complete: the tool opens the store and reads it in full.
    public func verify(_ request: StoreMaintenanceRequest) throws -> StoreVerification {
        StoreVerification(problems: [], isComplete: false)
    }

    /// `nil`: the error's message describes the damage.
    public func problem(describing error: DataStoreError, _ request: StoreMaintenanceRequest) -> StoreProblem? {
        nil
    }

    /// Throws `DataStoreError.Code.unsupportedFeature`.
    public func repair(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        throw request.unsupported("repaired")
    }

    /// Throws `DataStoreError.Code.unsupportedFeature`.
    public func compact(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        throw request.unsupported("compacted")
    }

    /// Throws `DataStoreError.Code.unsupportedFeature`.
    public func seal(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        throw request.unsupported("sealed")
    }

    /// Throws `DataStoreError.Code.unsupportedFeature`.
    public func changeEncryption(
        _ request: StoreMaintenanceRequest, to target: StoreMaintenanceRequest,
        progress: (_ done: Int, _ total: Int) -> Void
    ) throws -> StoreMaintenanceReport {
        throw request.unsupported("encrypted at rest by ModelStore")
    }
}

/// The store a maintenance operation works on.
public struct StoreMaintenanceRequest: Sendable {
    /// The store's URL as the user typed it, for messages (`log:trips-log`).
    public let name: String
    /// The parsed URL.
    public let url: StoreURL
    /// The configuration the URL names.
    public let configuration: any DataStoreConfiguration
    /// Whether ``DataStoreMaintenance/inspect(_:)`` must count every model exactly, even where that
    /// reads every row of a large table; when `false` (the default) an adapter may give the counts
    /// of large tables from its statistics, marked ``StoreEntityCount/isEstimate``.
    public var countsExactly: Bool

    /// A request for the store a URL names.
    public init(
        name: String, url: StoreURL, configuration: any DataStoreConfiguration, countsExactly: Bool = false
    ) {
        self.name = name
        self.url = url
        self.configuration = configuration
        self.countsExactly = countsExactly
    }

    /// The file or directory the store lives at.
    public var location: URL { url.fileURL }

    /// The error for an operation the store does not support, such as `"compacted"`.
    public func unsupported(_ operation: String) -> DataStoreError {
        DataStoreError(
            .unsupportedFeature, "'\(name)' is a '\(url.scheme):' store, which is not \(operation)",
            remedy: "Use another operation, or a store whose adapter supports it")
    }
}

/// A file a store keeps, relative to its directory (or to the folder of its file).
public struct StoreFile: Encodable, Hashable, Sendable {
    /// The relative path.
    public let path: String
    /// The size in bytes.
    public let byteCount: Int

    /// A file.
    public init(path: String, byteCount: Int) {
        self.path = path
        self.byteCount = byteCount
    }

    /// The size of a file, 0 if it cannot be read.
    public static func size(of url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Everything under a directory, or a file and the files beside it that share its name
    /// (`trips.json.backup`, `trips.json.lock`…); empty when nothing is at `location`.
    public static func all(at location: URL) -> [StoreFile] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: location.path, isDirectory: &isDirectory) else { return [] }
        if isDirectory.boolValue { return all(under: location, prefix: "") }
        let folder = location.deletingLastPathComponent()
        let name = location.lastPathComponent
        var files = [StoreFile(path: name, byteCount: size(of: location))]
        let siblings = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for sibling in siblings.sorted() where sibling.hasPrefix(name + ".") {
            let url = folder.appendingPathComponent(sibling)
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            files +=
                isDirectory.boolValue
                ? all(under: url, prefix: sibling + "/") : [StoreFile(path: sibling, byteCount: size(of: url))]
        }
        return files
    }

    /// Every regular file under a directory, by relative path with `prefix`, sorted.
    public static func all(under directory: URL, prefix: String) -> [StoreFile] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var files: [StoreFile] = []
        while let relative = enumerator.nextObject() as? String {
            let url = directory.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            files.append(StoreFile(path: prefix + relative, byteCount: size(of: url)))
        }
        return files.sorted { $0.path < $1.path }
    }
}

/// A damaged place in a store.
public struct StoreProblem: Encodable, Hashable, Sendable, CustomStringConvertible {
    /// The damaged file, relative to the store's directory, or the file's path.
    public let file: String
    /// The byte offset of the damage in the file, when known.
    public let offset: Int?
    /// The line of the damage (from 1), for text files.
    public let line: Int?
    /// The column of the damage (from 1), for text files.
    public let column: Int?
    /// What is wrong.
    public let reason: String

    /// A problem at a byte offset, a line and column, or no known place.
    public init(file: String, offset: Int?, line: Int? = nil, column: Int? = nil, reason: String) {
        self.file = file
        self.offset = offset
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// `'file' at line L, column C (byte N): reason`.
    public var description: String {
        var place = "'\(file)'"
        if let line, let column { place += " at line \(line), column \(column)" }
        if let offset { place += line == nil ? " at byte \(offset)" : " (byte \(offset))" }
        return "\(place): \(reason)"
    }
}

/// An entity and how many models of it a store holds, counted or estimated.
public struct StoreEntityCount: Encodable, Hashable, Sendable {
    /// The entity's name.
    public let name: String
    /// How many models of it the store holds, or about how many when ``isEstimate``.
    public let modelCount: Int
    /// Whether ``modelCount`` is an estimate from the store's statistics rather than a count (see
    /// ``StoreMaintenanceRequest/countsExactly``).
    public let isEstimate: Bool

    /// A count, or an estimate.
    public init(name: String, modelCount: Int, isEstimate: Bool = false) {
        self.name = name
        self.modelCount = modelCount
        self.isEstimate = isEstimate
    }

    private enum CodingKeys: String, CodingKey {
        case name, modelCount, estimated
    }

    /// `name` and `modelCount`, and `"estimated": true` for an estimate.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(modelCount, forKey: .modelCount)
        if isEstimate { try container.encode(true, forKey: .estimated) }
    }
}

/// A part of a report that only one kind of store has: encoded under ``key`` in a JSON report and
/// printed as ``lines``.
public struct StoreReportDetails: Encodable, Sendable {
    /// The key the details are encoded under (`"log"`).
    public let key: String
    /// The details for people, one line each.
    public let lines: [String]
    /// The details as data.
    public let value: any Encodable & Sendable

    /// Details.
    public init(key: String, lines: [String], value: any Encodable & Sendable) {
        self.key = key
        self.lines = lines
        self.value = value
    }

    /// Encodes ``value``.
    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

/// What ``DataStoreMaintenance/inspect(_:)`` found.
public struct StoreInspection: Sendable {
    /// The store's identifier.
    public let storeIdentifier: String
    /// The schema version the store was written with, when known.
    public let schemaVersion: Schema.Version?
    /// The entities and their counts, in schema order.
    public let entities: [StoreEntityCount]
    /// What only this kind of store has, such as an append log's segments.
    public let details: StoreReportDetails?
    /// Damage met while reading; ``DataStoreMaintenance/verify(_:)`` locates all of it.
    public let damage: [StoreProblem]

    /// An inspection.
    public init(
        storeIdentifier: String, schemaVersion: Schema.Version?, entities: [StoreEntityCount],
        details: StoreReportDetails? = nil, damage: [StoreProblem] = []
    ) {
        self.storeIdentifier = storeIdentifier
        self.schemaVersion = schemaVersion
        self.entities = entities
        self.details = details
        self.damage = damage
    }
}

/// What ``DataStoreMaintenance/verify(_:)`` found.
public struct StoreVerification: Sendable {
    /// Every damaged place found.
    public let problems: [StoreProblem]
    /// The entities and their counts as far as they could be read; `nil` when not counted.
    public let entities: [StoreEntityCount]?
    /// Something found that is not damage, such as an append log's torn tail.
    public let note: String?
    /// What to do about the damage.
    public let remedy: String?
    /// The schema version the store was written with, when known.
    public let schemaVersion: Schema.Version?
    /// Whether the check is all there is; when `false`, a tool goes on to open the store and read it.
    public let isComplete: Bool

    /// A verification.
    public init(
        problems: [StoreProblem], entities: [StoreEntityCount]? = nil, note: String? = nil, remedy: String? = nil,
        schemaVersion: Schema.Version? = nil, isComplete: Bool
    ) {
        self.problems = problems
        self.entities = entities
        self.note = note
        self.remedy = remedy
        self.schemaVersion = schemaVersion
        self.isComplete = isComplete
    }
}

/// What ``DataStoreMaintenance/repair(_:)``, ``DataStoreMaintenance/compact(_:)`` or
/// ``DataStoreMaintenance/seal(_:)`` did.
public struct StoreMaintenanceReport: Encodable, Sendable {
    /// The report for people, naming the store, without a final newline.
    public let text: String
    /// The report as data: its keys sit beside the tool's `url` in a JSON report.
    public let details: any Encodable & Sendable

    /// A report.
    public init(text: String, details: any Encodable & Sendable) {
        self.text = text
        self.details = details
    }

    /// Encodes ``details``.
    public func encode(to encoder: any Encoder) throws {
        try details.encode(to: encoder)
    }
}
