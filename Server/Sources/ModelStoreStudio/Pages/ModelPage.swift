import Foundation
import ModelStore

/// One model: its attributes, its relationships as links (to-many ones listed up to a bound, with
/// their count), and with writes allowed, a form per attribute and a delete button.
struct ModelPage {
    /// Related models listed per to-many relationship.
    static let relatedBound = 100

    let store: StudioStore
    let snapshot: DefaultSnapshot
    /// The access token, put in forms so that a write proves it comes from a studio page.
    let formToken: String?
    /// A message about the last write, if any.
    let notice: String?

    func render() throws -> String {
        let entity = snapshot.entity
        let id = snapshot.persistentIdentifier
        let expected = ExpectedValues(entity.attributes.map { snapshot.values[$0.slot] }).token
        let hierarchy = ClassHierarchy(entity)
        let className = hierarchy?.className(of: snapshot)
        // A model of a class in a hierarchy has the properties its class and superclasses declare; the
        // entity stores the other classes' properties empty for it.
        func shows(_ property: Schema.Property) -> Bool {
            guard let hierarchy, let className else { return true }
            return property.name != hierarchy.classAttribute.name && hierarchy.has(property, inClass: className)
        }
        var attributeRows = ""
        for attribute in entity.attributes where shows(.attribute(attribute)) {
            let value = snapshot.values[attribute.slot]
            var cell = HTML.value(value)
            if let formToken, ValueText.isEditable(attribute.valueType) {
                let nilBox =
                    attribute.isOptional
                    ? "<label><input type=\"checkbox\" name=\"nil\" value=\"1\"\(value.isNull ? " checked" : "")> nil</label>"
                    : ""
                cell = """
                    <form class="inline" method="post" action="\(ModelLink.path(id))/edit">
                    <input type="hidden" name="token" value="\(HTML.escape(formToken))">
                    <input type="hidden" name="attribute" value="\(HTML.escape(attribute.name))">
                    <input type="hidden" name="expected" value="\(expected)">
                    <input type="text" name="value" id="edit-\(HTML.escape(attribute.name))"
                     oninput="if (this.form.nil) this.form.nil.checked = false"
                     value="\(HTML.escape(ValueText.editText(value)))"> \(nilBox) <button type="submit">Save</button></form>
                    """
            }
            attributeRows += """
                <tr><th>\(HTML.escape(attribute.name))</th><td class="muted">\(HTML.escape(attribute.valueType.description))\
                \(attribute.options.names.isEmpty ? "" : " · " + attribute.options.names.joined(separator: ", "))</td>
                <td id="value-\(HTML.escape(attribute.name))">\(cell)</td></tr>
                """
        }
        var relationshipRows = ""
        for relationship in entity.relationships where shows(.relationship(relationship)) {
            let related = snapshot.values[relationship.slot].referencedIdentifiers
            let links: String
            if relationship.isToOne {
                links = related.first.map { ModelLink.anchor($0) } ?? HTML.value(.null)
            } else {
                let shown = related.prefix(Self.relatedBound).map { ModelLink.anchor($0) }.joined(separator: ", ")
                let more = related.count > Self.relatedBound ? " … (\(related.count - Self.relatedBound) more)" : ""
                links =
                    "\(related.count) model\(related.count == 1 ? "" : "s")" + (related.isEmpty ? "" : ": ")
                    + shown + more
            }
            relationshipRows += """
                <tr><th>\(HTML.escape(relationship.name))</th><td class="muted">\
                \(relationship.isToOne ? "" : "[")\(HTML.escape(relationship.destination))\(relationship.isToOne ? "?" : "]") \
                · \(relationship.deleteRule.rawValue)</td><td id="rel-\(HTML.escape(relationship.name))">\(links)</td></tr>
                """
        }
        let delete =
            formToken.map { token in
                """
                <form method="post" action="\(ModelLink.path(id))/delete" onsubmit="return confirm('Delete this model?')">
                <input type="hidden" name="token" value="\(HTML.escape(token))">
                <button type="submit" id="delete">Delete \(HTML.escape(entity.name)) \(HTML.escape(id.primaryKey.description))</button></form>
                """
            } ?? ""
        return """
            <h1><a href="/entities/\(HTML.component(entity.name))">\(HTML.escape(entity.name))</a> \
            \(HTML.escape(id.primaryKey.description))</h1>
            \(notice.map { "<div class=\"notice\" id=\"notice\">\(HTML.escape($0))</div>" } ?? "")
            \(hierarchy.map { lineage($0, className: className) } ?? "")
            <h2>Attributes</h2><table id="attributes">\(attributeRows)</table>
            \(relationshipRows.isEmpty ? "" : "<h2>Relationships</h2><table id=\"relationships\">\(relationshipRows)</table>")
            <p class="muted mono">\(HTML.escape(id.description))</p>
            \(delete)
            """
    }

    /// The model's class and the classes it inherits from, each a link to the entity's models of that class.
    private func lineage(_ hierarchy: ClassHierarchy, className: String?) -> String {
        guard let className else {
            return "<p id=\"class\" class=\"muted\">Its class is not recorded.</p>"
        }
        let entityPath = "/entities/\(HTML.component(snapshot.entity.name))"
        let chain = hierarchy.lineage(of: className)
        guard !chain.isEmpty else {
            return "<p id=\"class\">Class <b>\(HTML.escape(className))</b> "
                + "<span class=\"muted\">(not a class of the store's schema)</span></p>"
        }
        let links = chain.map { modelClass in
            "<a data-class=\"\(HTML.escape(modelClass.name))\" href=\"\(entityPath)\(HTML.query([("class", modelClass.name)]))\">"
                + "\(HTML.escape(modelClass.name))</a>"
        }
        return "<p id=\"class\">Class <b>\(links[0])</b>"
            + links.dropFirst().map { " · is a \($0)" }.joined() + "</p>"
    }
}

/// The attribute values a page showed, sent back with an edit so that the store refuses it if the
/// model changed meanwhile.
struct ExpectedValues: Codable {
    /// The values in attribute order.
    var values: [StoreValue]

    init(_ values: [StoreValue]) { self.values = values }

    /// The values as a form field: base64 of their JSON.
    var token: String { ((try? JSONEncoder().encode(self)) ?? Data()).base64EncodedString() }

    /// Values from a form field; throws ``StudioError/Kind/badRequest`` for anything else.
    init(token: String) throws {
        guard let data = Data(base64Encoded: token), let decoded = try? JSONDecoder().decode(Self.self, from: data)
        else {
            throw StudioError(.badRequest, "the form's expected values are malformed", remedy: "Reload the page")
        }
        self = decoded
    }
}
