import Foundation
import ModelStore

/// Two (or more) contexts on one container.
enum ContextCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .contexts, "saveSeenByOtherContext",
            "A save in one context is seen by the next fetch in another context of the same container."
        ) { env in
            let container = try env.openContainer()
            let reader = env.freshContext(container)
            let before = try env.step("fetching from the second context") {
                try reader.fetch(FetchDescriptor<LogEntry>())
            }
            try env.checkEqual(before.count, 0, "a new store is not empty")
            let writer = env.freshContext(container)
            let entry = LogEntry()
            entry.sequence = 1
            writer.insert(entry)
            try env.step("saving in the first context") { try writer.save() }
            let after = try env.step("fetching again from the second context") {
                try reader.fetch(FetchDescriptor<LogEntry>())
            }
            try env.checkEqual(
                after.map(\.sequence), [1], "a save in one context was not seen by another context's next fetch")
        },
        CaseDefinition(
            .contexts, "registeredModelsAreRefreshed",
            "A model registered in one context shows another context's saved change on the next fetch."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let reader = env.freshContext(container)
            let held = try env.fetchSeeded(\Specimen.code, "S03", in: reader)
            let writer = env.freshContext(container)
            let changed = try env.fetchSeeded(\Specimen.code, "S03", in: writer)
            changed.title = "from the writer"
            try env.step("saving the change in the writing context") { try writer.save() }
            _ = try env.step("fetching again in the reading context") { try reader.fetch(FetchDescriptor<Specimen>()) }
            try env.checkEqual(
                held.title, "from the writer",
                "a model registered in another context kept its old value after a fetch: not refreshed")
        },
        CaseDefinition(
            .contexts, "unsavedChangesSurviveOtherSaves",
            "A context's unsaved change is not overwritten when another context saves the same model."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let mine = env.freshContext(container)
            let held = try env.fetchSeeded(\Specimen.code, "S04", in: mine)
            held.nickname = "mine, unsaved"
            let theirs = env.freshContext(container)
            let other = try env.fetchSeeded(\Specimen.code, "S04", in: theirs)
            other.title = "theirs"
            try env.step("saving in the second context") { try theirs.save() }
            _ = try env.step("fetching again in the first context") { try mine.fetch(FetchDescriptor<Specimen>()) }
            try env.checkEqual(
                held.nickname, "mine, unsaved", "another context's save overwrote this context's unsaved change")
        },
        CaseDefinition(
            .contexts, "deleteSeenByOtherContext",
            "A model deleted and saved in one context is no longer fetched by another."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let reader = env.freshContext(container)
            _ = try env.step("fetching in the reading context") { try reader.fetch(FetchDescriptor<LogEntry>()) }
            let writer = env.freshContext(container)
            let doomed = try env.fetchSeeded(\LogEntry.sequence, 7, in: writer)
            writer.delete(doomed)
            try env.step("saving the delete") { try writer.save() }
            let after = try env.step("fetching again in the reading context") {
                try reader.fetch(FetchDescriptor<LogEntry>())
            }
            try env.check(
                !after.contains { $0.sequence == 7 },
                "a model deleted and saved in one context was still fetched by another: delete ignored")
        },
        CaseDefinition(
            .contexts, "concurrentContextsLoseNothing",
            "Contexts saving at the same time on different threads lose no insert and share no identifier."
        ) { env in
            let container = try env.openContainer()
            let errors = LockedValue<[String]>([])
            let identifiers = LockedValue<[(PersistentIdentifier, Int)]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                let context = ModelContext(container)
                for round in 0..<5 {
                    var batch: [LogEntry] = []
                    for item in 0..<10 {
                        let entry = LogEntry()
                        entry.sequence = worker * 1000 + round * 10 + item
                        entry.label = "worker-\(worker)-\(round)-\(item)"
                        context.insert(entry)
                        batch.append(entry)
                    }
                    do {
                        try context.save()
                        identifiers.withLock { $0 += batch.map { ($0.persistentModelID, $0.sequence) } }
                    } catch {
                        errors.withLock { $0.append("worker \(worker), round \(round): \(error)") }
                    }
                }
            }
            let failures = errors.withLock { $0 }
            try env.check(failures.isEmpty, "saves from concurrent contexts failed", found: failures.first)
            let saved = identifiers.withLock { $0 }
            try env.checkEqual(
                Set(saved.map(\.0)).count, 200,
                "concurrent contexts were given the same identifier for different models")
            let stored = try env.byIdentifier(LogEntry.self, in: container)
            try env.checkEqual(
                stored.count, 200,
                "4 contexts each saving 50 entries concurrently left the wrong number stored: inserts lost")
            let misplaced = saved.filter { id, sequence in stored[id]?.sequence != sequence }
            try env.check(
                misplaced.isEmpty,
                "after concurrent saves, \(misplaced.count) identifier(s) lead to another entry than the one saved "
                    + "under them: rows of concurrent saves were mixed up",
                found: misplaced.prefix(3).map { "\($0.0) saved as \($0.1), reads \(stored[$0.0]?.sequence ?? -1)" }
                    .joined(separator: "; "))
        },
    ]
}
