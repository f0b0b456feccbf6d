import Foundation
import ModelStore
import ModelStoreSync

/// The clashes sync decided in this store: each with the model, the property, the value both sides
/// last agreed on, each side's value and what was kept; with `--write`, a form to keep either side.
struct ConflictsPage {
    let store: StudioStore
    /// Whether resolved conflicts are listed too.
    let includingResolved: Bool
    /// The access token for the resolve forms, when the studio writes.
    let formToken: String?
    /// A line to show above the list (after a resolve).
    let notice: String?

    func render() throws -> String {
        var html = "<h1>Conflicts</h1>"
        if let notice { html += "<p class=\"notice\" id=\"notice\">\(HTML.escape(notice))</p>" }
        guard let conflicts = try store.conflicts(includingResolved: includingResolved) else {
            return html
                + "<p class=\"muted\">This store was never synced: it has no sync records and no conflicts.</p>"
        }
        let toggle =
            includingResolved
            ? "<a href=\"/conflicts\">open only</a>" : "<a href=\"/conflicts?all=1\">resolved too</a>"
        html +=
            "<p class=\"muted\">Every clash the sync engine decided, oldest first; the kept value is what the "
            + "store holds until someone resolves it. Show \(toggle).</p>"
        guard !conflicts.isEmpty else {
            return html + "<p class=\"muted\" id=\"no-conflicts\">No \(includingResolved ? "" : "open ")conflicts.</p>"
        }
        var rows = ""
        for conflict in conflicts {
            let model =
                try store.model(forGlobalID: conflict.globalID, entity: conflict.entity).map { ModelLink.anchor($0) }
                ?? "\(HTML.escape(conflict.entity)) <code>\(HTML.escape(conflict.globalID))</code> (not here)"
            func shown(_ value: StoreValue?) -> String { value.map(HTML.value) ?? "<span class=\"muted\">none</span>" }
            var actions = conflict.isResolved ? "resolved" : ""
            if let formToken, !conflict.isResolved, !conflict.property.isEmpty {
                actions = ["local", "remote"].map { side in
                    """
                    <form method="post" action="/conflicts/\(HTML.component(conflict.id))/resolve" class="inline">\
                    <input type="hidden" name="token" value="\(HTML.escape(formToken))">\
                    <input type="hidden" name="take" value="\(side)">\
                    <button type="submit">keep \(side)</button></form>
                    """
                }.joined(separator: " ")
            }
            rows += """
                <tr data-conflict="\(HTML.escape(conflict.id))"><td>\(HTML.escape(conflict.kind.rawValue))</td>\
                <td>\(model)</td><td><code>\(HTML.escape(conflict.property))</code></td>\
                <td>\(shown(conflict.base))</td><td>\(shown(conflict.local))</td><td>\(shown(conflict.remote))</td>\
                <td>\(shown(conflict.chosen)) <span class="muted">(\(HTML.escape(conflict.outcome)))</span></td>\
                <td>\(HTML.escape(conflict.created.formatted(.iso8601)))</td><td>\(actions)</td></tr>
                """
        }
        return html + """
            <table><thead><tr><th>kind</th><th>model</th><th>property</th><th>base</th><th>local</th>\
            <th>remote</th><th>kept</th><th>when</th><th></th></tr></thead><tbody>\(rows)</tbody></table>
            """
    }
}
