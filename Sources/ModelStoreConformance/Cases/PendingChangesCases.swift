import Foundation
import ModelStore

/// `includePendingChanges`: what a context that has not saved yet sees.
enum PendingChangesCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .pendingChanges, "unsavedInsertsAreFetched",
            "An inserted, unsaved model is fetched, counted and listed by default, and not with "
                + "includePendingChanges false."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let entry = LogEntry()
            entry.sequence = 100
            entry.label = "pending"
            entry.bucket = 1
            context.insert(entry)
            var descriptor = FetchDescriptor<LogEntry>(predicate: #Predicate { $0.bucket == 1 })
            let stored = Seed.make().entries.filter { $0.bucket == 1 }.count
            let found = try env.step("fetching 'bucket == 1' with a pending insert") { try context.fetch(descriptor) }
            try env.check(
                found.contains { $0 === entry }, "a fetch with includePendingChanges did not return the unsaved insert")
            try env.checkEqual(
                found.count, stored + 1, "a fetch with includePendingChanges returned the wrong number of entries")
            try env.checkEqual(
                try env.step("counting with a pending insert") { try context.fetchCount(descriptor) }, stored + 1,
                "fetchCount with includePendingChanges does not count the unsaved insert: count disagrees with fetch")
            let ids = try env.step("fetching identifiers with a pending insert") {
                try context.fetchIdentifiers(descriptor)
            }
            try env.check(
                ids.contains(entry.persistentModelID),
                "fetchIdentifiers with includePendingChanges does not list the unsaved insert's temporary identifier")
            descriptor.includePendingChanges = false
            let saved = try env.step("fetching 'bucket == 1' without pending changes") { try context.fetch(descriptor) }
            try env.check(
                !saved.contains { $0 === entry } && saved.count == stored,
                "a fetch with includePendingChanges false returned the unsaved insert",
                expected: "\(stored) entries", found: "\(saved.count) entries")
            try env.checkEqual(
                try env.step("counting without pending changes") { try context.fetchCount(descriptor) }, stored,
                "fetchCount with includePendingChanges false counts the unsaved insert")
        },
        CaseDefinition(
            .pendingChanges, "unsavedDeletesAreHidden",
            "A deleted, unsaved model is left out by default, and still fetched with includePendingChanges false."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let entries = try env.step("fetching log entries") { try context.fetch(FetchDescriptor<LogEntry>()) }
            let doomed = try env.require(entries.first { $0.sequence == 5 }, "the seeded entry 5 is missing")
            context.delete(doomed)
            let found = try env.step("fetching with a pending delete") {
                try context.fetch(FetchDescriptor<LogEntry>())
            }
            try env.check(
                !found.contains { $0 === doomed },
                "a fetch with includePendingChanges returned a deleted, unsaved model")
            try env.checkEqual(
                try env.step("counting with a pending delete") { try context.fetchCount(FetchDescriptor<LogEntry>()) },
                entries.count - 1, "fetchCount with includePendingChanges counts a deleted, unsaved model")
            var descriptor = FetchDescriptor<LogEntry>()
            descriptor.includePendingChanges = false
            let saved = try env.step("fetching without pending changes") { try context.fetch(descriptor) }
            try env.checkEqual(
                saved.count, entries.count,
                "a fetch with includePendingChanges false left out a model deleted but not saved")
        },
        CaseDefinition(
            .pendingChanges, "unsavedChangesAreMatched",
            "A changed, unsaved model is matched by its new values by default, and by its saved values otherwise."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let entries = try env.step("fetching log entries") { try context.fetch(FetchDescriptor<LogEntry>()) }
            let moved = try env.require(entries.first { $0.sequence == 1 }, "the seeded entry 1 is missing")
            moved.bucket = 2
            let inOne = try env.step("fetching 'bucket == 1' with a pending change") {
                try context.fetch(FetchDescriptor<LogEntry>(predicate: #Predicate { $0.bucket == 1 }))
            }
            let inTwo = try env.step("fetching 'bucket == 2' with a pending change") {
                try context.fetch(FetchDescriptor<LogEntry>(predicate: #Predicate { $0.bucket == 2 }))
            }
            try env.check(
                !inOne.contains { $0 === moved } && inTwo.contains { $0 === moved },
                "a model whose 'bucket' changed from 1 to 2 (unsaved) was matched by its old value")
            var saved = FetchDescriptor<LogEntry>(predicate: #Predicate { $0.bucket == 1 })
            saved.includePendingChanges = false
            let stored = try env.step("fetching 'bucket == 1' without pending changes") { try context.fetch(saved) }
            try env.check(
                stored.contains { $0 === moved },
                "with includePendingChanges false, a model whose saved 'bucket' is 1 was not matched")
        },
        CaseDefinition(
            .pendingChanges, "windowsIncludePendingModels",
            "Offset and limit apply after pending inserts are merged and sorted."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let entry = LogEntry()
            entry.sequence = 500
            entry.label = "newest"
            context.insert(entry)
            var descriptor = FetchDescriptor<LogEntry>(sortBy: [SortDescriptor(\.sequence, order: .reverse)])
            descriptor.fetchLimit = 3
            let top = try env.step("fetching the 3 highest sequences with a pending insert") {
                try context.fetch(descriptor)
            }
            try env.checkEqual(
                top.map(\.sequence), [500, 30, 29],
                "a sorted, limited fetch did not place the unsaved insert where it sorts")
            descriptor.fetchOffset = 1
            let next = try env.step("fetching with fetchOffset 1 and a pending insert") {
                try context.fetch(descriptor)
            }
            try env.checkEqual(
                next.map(\.sequence), [30, 29, 28],
                "a sorted fetch with fetchOffset 1 and an unsaved insert returned the wrong slice")
        },
        CaseDefinition(
            .pendingChanges, "countsAndIdentifiersFollowPendingChanges",
            "With unsaved inserts, changes and deletes, sorted and windowed fetches return Swift's order over the "
                + "pending state, and fetchCount and fetchIdentifiers agree with them in number and order."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let entries = try env.index(
                try env.step("fetching log entries") { try context.fetch(FetchDescriptor<LogEntry>()) }, by: \.sequence,
                "fetching the seeded log entries by sequence")
            for (sequence, label) in [(500, "B"), (501, "b"), (502, "e\u{301}x")] {
                let entry = LogEntry()
                entry.sequence = sequence
                entry.label = label
                entry.bucket = 1
                context.insert(entry)
            }
            entries[4]?.bucket = 1
            entries[6]?.label = "éx"
            if let doomed = entries[5] { context.delete(doomed) }
            let current =
                entries.values.filter { $0.sequence != 5 }
                + (try env.step("fetching pending inserts") {
                    try context.fetch(FetchDescriptor<LogEntry>(predicate: #Predicate { $0.sequence >= 500 }))
                })
            let sorts: [SortDescriptor<LogEntry>] = [
                SortDescriptor(\.bucket), SortDescriptor(\.label, comparator: .lexical),
                SortDescriptor(\.sequence, order: .reverse),
            ]
            let requests: [(String, Predicate<LogEntry>?, Int?, Int?)] = [
                ("bucket == 1, sorted by bucket, label, sequence descending", #Predicate { $0.bucket == 1 }, nil, nil),
                ("bucket == 1, sorted, fetchOffset 1, fetchLimit 4", #Predicate { $0.bucket == 1 }, 1, 4),
                ("every entry, sorted, fetchOffset 5, fetchLimit 6", nil, 5, 6),
            ]
            for (name, predicate, offset, limit) in requests {
                var descriptor = FetchDescriptor<LogEntry>(predicate: predicate, sortBy: sorts)
                descriptor.fetchOffset = offset
                descriptor.fetchLimit = limit
                let truth = sortedAsSwift(try current.filter { try predicate?.evaluate($0) ?? true }, by: sorts)
                let expected = Array(truth.dropFirst(offset ?? 0).prefix(limit ?? .max))
                let found = try env.step("fetching '\(name)' with pending changes") { try context.fetch(descriptor) }
                try env.checkEqual(
                    found.map(\.sequence), expected.map(\.sequence),
                    "a fetch '\(name)' with unsaved inserts, changes and deletes returned the wrong entries or order")
                let count = try env.step("counting '\(name)' with pending changes") {
                    try context.fetchCount(descriptor)
                }
                try env.checkEqual(
                    count, expected.count,
                    "fetchCount '\(name)' with pending changes disagrees with fetch: count disagrees with fetch")
                let ids = try env.step("fetching identifiers '\(name)' with pending changes") {
                    try context.fetchIdentifiers(descriptor)
                }
                try env.checkEqual(
                    ids, expected.map(\.persistentModelID),
                    "fetchIdentifiers '\(name)' with pending changes returned other identifiers, or another order, "
                        + "than fetch: identifiers disagree with fetch")
            }
        },
    ]
}
