import Foundation
import ModelStore

/// Reads the studio's filter language into a store-neutral `StoreFilter`, checked against the schema.
///
/// The language is the body of a `#Predicate` over one model, without `$0.`:
///
/// ```
/// age >= 65 && name.contains("a")
/// !(city == "Rome" || city == nil) && destination.country.starts(with: "It")
/// age in 18...65 && status in ["active", "new"] && email.contains(/@example\.(com|org)$/)
/// visits.contains { rating > 3 } && flagged
/// ```
///
/// Comparisons `== != < <= > >=` take a property path on one side and a value on the other (a number,
/// a string in double quotes, `true`, `false` or `nil`; dates, UUIDs and URLs as strings); paths go
/// through to-one relationships with dots; `contains(_:)`, `starts(with:)` and `contains(/regex/)`
/// test strings; `in` takes a list or a range; `contains { … }` and `allSatisfy { … }` test the
/// models of a to-many relationship; a Boolean attribute alone means `== true`. Every error names
/// what is wrong and where (``FilterSyntaxError/position``).
public struct FilterParser: Sendable {
    /// The schema paths are checked against.
    public let schema: Schema

    /// A parser for filters over a schema's entities.
    public init(schema: Schema) {
        self.schema = schema
    }

    /// The filter `text` means on models of `entity`; `nil` for an empty text.
    public func parse(_ text: String, entity: Schema.Entity) throws(FilterSyntaxError) -> StoreFilter? {
        guard !text.allSatisfy(\.isWhitespace) else { return nil }
        let tokens: [FilterToken]
        do {
            tokens = try FilterLexer.tokens(text)
        } catch let error as FilterSyntaxError {
            throw error
        } catch {
            throw FilterSyntaxError(String(describing: error), at: 0, in: text)
        }
        var reader = Reader(tokens: tokens, text: text, schema: schema)
        let filter = try reader.disjunction(entity)
        guard case .end = reader.current.kind else {
            throw reader.error("expected '&&', '||' or the end of the filter, found '\(reader.current.spelling)'")
        }
        return filter
    }
}

/// The recursive-descent reader over a filter's tokens.
private struct Reader {
    let tokens: [FilterToken]
    let text: String
    let schema: Schema
    var index = 0

    init(tokens: [FilterToken], text: String, schema: Schema) {
        self.tokens = tokens
        self.text = text
        self.schema = schema
    }

    var current: FilterToken { tokens[index] }

    func error(_ message: String, at token: FilterToken? = nil) -> FilterSyntaxError {
        FilterSyntaxError(message, at: (token ?? current).position, in: text)
    }

    mutating func advance() -> FilterToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let found) = current.kind { return found == symbol }
        return false
    }

    mutating func expect(_ symbol: String, _ context: String) throws(FilterSyntaxError) {
        guard isSymbol(symbol) else { throw error("expected '\(symbol)' \(context), found '\(current.spelling)'") }
        _ = advance()
    }

    // MARK: Boolean structure

    mutating func disjunction(_ entity: Schema.Entity) throws(FilterSyntaxError) -> StoreFilter {
        var items = [try conjunction(entity)]
        while isSymbol("||") {
            _ = advance()
            items.append(try conjunction(entity))
        }
        return items.count == 1 ? items[0] : .or(items)
    }

    mutating func conjunction(_ entity: Schema.Entity) throws(FilterSyntaxError) -> StoreFilter {
        var items = [try unary(entity)]
        while isSymbol("&&") {
            _ = advance()
            items.append(try unary(entity))
        }
        return items.count == 1 ? items[0] : .and(items)
    }

    mutating func unary(_ entity: Schema.Entity) throws(FilterSyntaxError) -> StoreFilter {
        if isSymbol("!") {
            _ = advance()
            return try unary(entity).negated
        }
        return try primary(entity)
    }

    mutating func primary(_ entity: Schema.Entity) throws(FilterSyntaxError) -> StoreFilter {
        let start = current
        switch start.kind {
        case .symbol("("):
            _ = advance()
            let inner = try disjunction(entity)
            try expect(")", "to close the '(' at character \(start.position + 1)")
            return inner
        case .identifier("true") where !isPathContinuation(at: index + 1):
            _ = advance()
            return .constant(true)
        case .identifier("false") where !isPathContinuation(at: index + 1):
            _ = advance()
            return .constant(false)
        case .identifier("nil"), .number, .string:
            // A value first: `65 <= age`.
            let literal = advance()
            guard case .symbol(let symbol) = current.kind, let op = StoreComparisonOperator(rawValue: symbol) else {
                throw error("expected a comparison ('==', '<', …) after the value '\(literal.spelling)'")
            }
            _ = advance()
            let path = try self.path(entity)
            return try comparison(path, op.swapped, literal)
        case .identifier:
            let path = try self.path(entity)
            return try condition(on: path)
        case .end:
            throw error("the filter ends where a condition was expected")
        default:
            throw error("expected a property name, a value or '(', found '\(start.spelling)'")
        }
    }

    func isPathContinuation(at position: Int) -> Bool {
        if case .symbol(let symbol) = tokens[position].kind { return symbol == "." }
        return false
    }

    // MARK: Paths

    /// A resolved path: its names, the entity each step starts at, and where it ends.
    struct ResolvedPath {
        var components: [String]
        var tokens: [FilterToken]
        var end: Schema.Property
        var entity: Schema.Entity
        var storePath: StorePath { StorePath(components) }
        var display: String { components.joined(separator: ".") }
    }

    /// Reads `a.b.c` (an optional `$0.` first), stopping before a method call (`.contains(`), and
    /// checks each step against the schema.
    mutating func path(_ entity: Schema.Entity) throws(FilterSyntaxError) -> ResolvedPath {
        if case .identifier("$0") = current.kind, isPathContinuation(at: index + 1) {
            _ = advance()
            _ = advance()
        }
        var components: [String] = []
        var pathTokens: [FilterToken] = []
        var entity = entity
        var end: Schema.Property?
        while true {
            let token = advance()
            guard case .identifier(let name) = token.kind else {
                throw error("expected a property name, found '\(token.spelling)'", at: token)
            }
            if let previous = end {
                guard case .relationship(let relationship) = previous, relationship.isToOne else {
                    throw error(
                        "'\(components.joined(separator: "."))' is not a to-one relationship, so it has no property "
                            + "'\(name)'", at: token)
                }
                entity = try destination(of: relationship, at: token)
            }
            guard let property = entity.property(named: name) else {
                let names = entity.properties.map { "'\($0.name)'" }.joined(separator: ", ")
                throw error("'\(entity.name)' has no property '\(name)'; its properties are \(names)", at: token)
            }
            components.append(name)
            pathTokens.append(token)
            end = property
            // `.name` continues the path; `.contains(` / `.starts(` / `.allSatisfy {` ends it.
            guard isPathContinuation(at: index), case .identifier = tokens[index + 1].kind else { break }
            if case .symbol(let next) = tokens[min(index + 2, tokens.count - 1)].kind, next == "(" || next == "{" {
                break
            }
            _ = advance()
        }
        return ResolvedPath(components: components, tokens: pathTokens, end: end!, entity: entity)
    }

    func destination(
        of relationship: Schema.Relationship, at token: FilterToken
    ) throws(FilterSyntaxError) -> Schema.Entity {
        guard let destination = schema.entities.first(where: { $0.name == relationship.destination }) else {
            throw error("the schema has no entity '\(relationship.destination)'", at: token)
        }
        return destination
    }

    // MARK: Conditions

    /// What follows a path: a comparison, `in`, a method, or nothing (a Boolean attribute).
    mutating func condition(on path: ResolvedPath) throws(FilterSyntaxError) -> StoreFilter {
        if case .symbol(let symbol) = current.kind, let op = StoreComparisonOperator(rawValue: symbol) {
            _ = advance()
            let literal = advance()
            return try comparison(path, op, literal)
        }
        if case .identifier("in") = current.kind {
            _ = advance()
            return try membership(path)
        }
        if isSymbol(".") {
            _ = advance()
            return try method(path)
        }
        if case .attribute(let attribute) = path.end, attribute.valueType.unwrapped == .bool {
            return .compare(path.storePath, .equal, .bool(true))
        }
        throw error("expected a comparison ('==', '<', …), 'in' or a method after '\(path.display)'")
    }

    func comparison(
        _ path: ResolvedPath, _ op: StoreComparisonOperator, _ literal: FilterToken
    ) throws(FilterSyntaxError) -> StoreFilter {
        switch path.end {
        case .attribute(let attribute):
            let value = try self.value(literal, for: attribute, path: path)
            return .compare(path.storePath, op, value)
        case .relationship(let relationship):
            guard relationship.isToOne, case .identifier("nil") = literal.kind, op == .equal || op == .notEqual else {
                throw error(
                    "'\(path.display)' is a relationship: compare a to-one relationship with '== nil' or '!= nil', "
                        + "or test a to-many one with '.contains { … }'", at: path.tokens.last)
            }
            return .compare(path.storePath, op, .null)
        }
    }

    mutating func membership(_ path: ResolvedPath) throws(FilterSyntaxError) -> StoreFilter {
        guard case .attribute(let attribute) = path.end else {
            throw error("'in' needs an attribute, and '\(path.display)' is a relationship", at: path.tokens.last)
        }
        if isSymbol("[") {
            _ = advance()
            var values: [StoreValue] = []
            while !isSymbol("]") {
                values.append(try value(advance(), for: attribute, path: path))
                if isSymbol(",") {
                    _ = advance()
                } else if !isSymbol("]") {
                    throw error("expected ',' or ']' in the list, found '\(current.spelling)'")
                }
            }
            _ = advance()
            return .isIn(path.storePath, values)
        }
        // A range: `a...b`, `a..<b`, `a...`, `...b`, `..<b`.
        var lower: StoreValue?
        if !isSymbol("...") && !isSymbol("..<") {
            lower = try value(advance(), for: attribute, path: path)
        }
        guard case .symbol(let symbol) = current.kind, symbol == "..." || symbol == "..<" else {
            throw error("expected a list '[…]' or a range 'a...b' after 'in', found '\(current.spelling)'")
        }
        _ = advance()
        var upper: StoreValue?
        if case .number = current.kind {
            upper = try value(advance(), for: attribute, path: path)
        } else if case .string = current.kind {
            upper = try value(advance(), for: attribute, path: path)
        }
        guard lower != nil || upper != nil else { throw error("a range needs at least one bound") }
        if symbol == "..<" && upper == nil { throw error("'..<' needs an upper bound") }
        return .range(path.storePath, StoreRange(lower: lower, upper: upper, includesUpper: symbol == "..."))
    }

    mutating func method(_ path: ResolvedPath) throws(FilterSyntaxError) -> StoreFilter {
        let nameToken = advance()
        guard case .identifier(let name) = nameToken.kind else {
            throw error("expected a method name after '.', found '\(nameToken.spelling)'", at: nameToken)
        }
        if (name == "contains" || name == "allSatisfy") && isSymbol("{") {
            guard case .relationship(let relationship) = path.end, !relationship.isToOne else {
                throw error(
                    "'\(name) { … }' tests the models of a to-many relationship, and '\(path.display)' is not one",
                    at: nameToken)
            }
            let destination = try self.destination(of: relationship, at: nameToken)
            _ = advance()
            let inner = try disjunction(destination)
            try expect("}", "to close '\(name) {'")
            return name == "contains" ? .any(path.storePath, inner) : .all(path.storePath, inner)
        }
        guard case .attribute(let attribute) = path.end, attribute.valueType.unwrapped == .string else {
            throw error("'\(name)' tests text, and '\(path.display)' is not a String attribute", at: nameToken)
        }
        try expect("(", "after '\(name)'")
        let operation: StoreTextOperation
        switch name {
        case "contains":
            let argument = advance()
            switch argument.kind {
            case .string(let text): operation = .contains(text)
            case .regex(let pattern):
                do {
                    _ = try Regex(pattern)
                } catch {
                    throw self.error("the regular expression '/\(pattern)/' is not valid: \(error)", at: argument)
                }
                operation = .matchesRegex(pattern)
            default: throw error("'contains' takes a string or a /regular expression/", at: argument)
            }
        case "starts", "hasPrefix":
            if name == "starts" {
                guard case .identifier("with") = current.kind else { throw error("write 'starts(with: \"text\")'") }
                _ = advance()
                try expect(":", "after 'with'")
            }
            let argument = advance()
            guard case .string(let text) = argument.kind else {
                throw error("'\(name)' takes a string in double quotes", at: argument)
            }
            operation = .hasPrefix(text)
        default:
            throw error(
                "unknown method '\(name)'; use 'contains(\"text\")', 'contains(/regex/)' or 'starts(with: \"text\")'",
                at: nameToken)
        }
        try expect(")", "to close '\(name)('")
        return .text(path.storePath, operation)
    }

    // MARK: Values

    /// A literal as a value of an attribute's type.
    func value(
        _ literal: FilterToken, for attribute: Schema.Attribute, path: ResolvedPath
    ) throws(FilterSyntaxError) -> StoreValue {
        if case .identifier("nil") = literal.kind {
            guard attribute.valueType.isOptional else {
                throw error(
                    "'\(path.display)' is not optional (\(attribute.valueType)), so it is never nil", at: literal)
            }
            return .null
        }
        do {
            return try ValueText.value(of: literal, as: attribute.valueType)
        } catch {
            throw self.error("\(error.message) for '\(path.display)' (\(attribute.valueType))", at: literal)
        }
    }
}
