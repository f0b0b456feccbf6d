import Foundation
import ModelStore

/// The store's history as a timeline, newest first: each transaction's number, time and author,
/// the models it inserted, updated (with the properties that changed) and deleted (with the values
/// their tombstones kept).
struct HistoryPage {
    /// Transactions on a page.
    static let pageSize = 50
    /// Changes listed per transaction (a batch insert may hold a million).
    static let changesShown = 100

    let store: StudioStore
    /// Show transactions older than this number, if given.
    let before: Int64?

    func render() throws -> String {
        guard store.keepsHistory else {
            return
                "<h1>History</h1><p class=\"muted\">The store (\(HTML.escape(store.storeTypeName))) keeps no history.</p>"
        }
        let transactions = try store.history(before: before, limit: Self.pageSize + 1)
        let shown = transactions.prefix(Self.pageSize)
        var items = ""
        for transaction in shown {
            var changes = ""
            for change in transaction.changes.prefix(Self.changesShown) {
                switch change {
                case .insert(let insert):
                    changes +=
                        "<li><span class=\"kind insert\">insert</span> \(ModelLink.anchor(insert.changedPersistentIdentifier))</li>"
                case .update(let update):
                    let edited = store.editedValue(inTransaction: transaction.transactionIdentifier)
                    let names = Self.updatedNames(update).map { name in
                        var text = "<code>\(HTML.escape(name))</code>"
                        if let edited, edited.attribute == name {
                            text += " \(HTML.value(edited.before)) → \(HTML.value(edited.after))"
                        }
                        return text
                    }.joined(separator: ", ")
                    changes +=
                        "<li><span class=\"kind update\">update</span> \(ModelLink.anchor(update.changedPersistentIdentifier)): \(names)</li>"
                case .delete(let delete):
                    let tombstone = Self.tombstone(delete).sorted { $0.key < $1.key }
                        .map { "\(HTML.escape($0.key)) was \(HTML.value($0.value))" }.joined(separator: ", ")
                    changes +=
                        "<li><span class=\"kind delete\">delete</span> \(HTML.escape(delete.changedPersistentIdentifier.description))"
                        + (tombstone.isEmpty ? "" : " (kept: \(tombstone))") + "</li>"
                }
            }
            items += """
                <div class="tx" data-transaction="\(transaction.transactionIdentifier)">
                <h3>#\(transaction.transactionIdentifier) · \(HTML.escape(transaction.timestamp.formatted(.iso8601))) · \
                author <code>\(HTML.escape(transaction.author ?? "none"))</code> · \(transaction.changes.count) change\(transaction.changes.count == 1 ? "" : "s")</h3>
                <ul>\(changes)</ul>\(more(transaction))</div>
                """
        }
        if items.isEmpty { items = "<p class=\"muted\">No transactions.</p>" }
        var pager = ""
        if transactions.count > Self.pageSize, let last = shown.last {
            pager = "<div class=\"pager\"><a href=\"/history?before=\(last.transactionIdentifier)\">older →</a></div>"
        }
        return """
            <h1>History</h1>
            <p class="muted">Updates list the properties that changed. The store's history keeps no earlier values
            (only the attributes of deleted models marked preserveValueOnDeletion); edits made through this studio since
            it started show their values before and after.</p>
            <div id="timeline">\(items)</div>\(pager)
            """
    }

    private func more(_ transaction: DefaultHistoryTransaction) -> String {
        let hidden = transaction.changes.count - Self.changesShown
        return hidden > 0 ? "<p class=\"muted\">… and \(hidden.formatted()) more changes</p>" : ""
    }

    private static func updatedNames(_ update: any HistoryUpdate) -> [String] {
        func names<U: HistoryUpdate>(_ update: U) -> [String] { update.updatedAttributes.names }
        return names(update)
    }

    private static func tombstone(_ delete: any HistoryDelete) -> [String: StoreValue] {
        func values<D: HistoryDelete>(_ delete: D) -> [String: StoreValue] { delete.tombstone.values }
        return values(delete)
    }
}
