import Foundation

/// The store's own part of a migration stage: stored models of one schema version rewritten as models
/// of the next, computed once from the two schemas.
///
/// Entities match by name. A property of the new schema takes the value of the old property with
/// its name, else of the one its `originalName` names, else its default. Optional to required
/// gives a stored `nil` the new default; to-one to to-many wraps the reference; to-many to to-one
/// works for models with at most one related model. An attribute that becomes
/// `@Attribute(.encrypted)` has its stored values sealed, and one that stops being encrypted has
/// them opened (both need the attribute key, ``AttributeSealing``). A changed attribute type is
/// refused for any model that stores a value: that change needs a custom stage.
package struct LightweightMapping {
    /// Where each property of a new entity takes its value from.
    private enum Source {
        case copy(slot: Int)
        case requiredFromOptional(slot: Int, default: StoreValue)
        case toManyFromToOne(slot: Int)
        case toOneFromToMany(slot: Int)
        case changedType(slot: Int, from: String, to: String)
        case initialValue(StoreValue)
        /// A plaintext value to seal (`@Attribute(.encrypted)` added).
        case sealed(slot: Int)
        /// A sealed value to open (`.encrypted` removed); it was sealed under the old name.
        case opened(slot: Int, sealedAs: String)
    }

    private struct EntityPlan {
        let entity: Schema.Entity
        let sources: [Source]
    }

    private let plans: [String: EntityPlan]
    /// The entities whose stored shape changes, and how.
    package let changes: [EntityMigrationReport]
    /// Names the step in errors: `stage from '1.0.0' to '2.0.0'`.
    package let stageName: String

    package init(from old: Schema, to new: Schema, stageName: String) {
        self.stageName = stageName
        var plans: [String: EntityPlan] = [:]
        var changes: [EntityMigrationReport] = []
        for entity in new.entities {
            guard let source = old.entity(named: entity.name) else {
                plans[entity.name] = EntityPlan(entity: entity, sources: [])
                changes.append(EntityMigrationReport(entityName: entity.name, isAdded: true))
                continue
            }
            var report = EntityMigrationReport(entityName: entity.name)
            var used: Set<String> = []
            let sources = entity.properties.map { property -> Source in
                let match =
                    source.property(named: property.name)
                    ?? property.originalName.flatMap { source.property(named: $0) }
                guard let match else {
                    report.attributesAdded.append(property.name)
                    return .initialValue(property.initialValue)
                }
                used.insert(match.name)
                if match.name != property.name { report.attributesRenamed.append("\(match.name) -> \(property.name)") }
                return Self.source(from: match, to: property)
            }
            report.attributesRemoved = source.properties.map(\.name).filter { !used.contains($0) }
            plans[entity.name] = EntityPlan(entity: entity, sources: sources)
            // Sealing or opening rewrites every stored model's value, as a change of shape does.
            let reseals = sources.contains {
                switch $0 {
                case .sealed, .opened: true
                default: false
                }
            }
            if report.changesShape || reseals { changes.append(report) }
        }
        for entity in old.entities where new.entity(named: entity.name) == nil {
            changes.append(EntityMigrationReport(entityName: entity.name, isRemoved: true))
        }
        self.plans = plans
        self.changes = changes
    }

    private static func source(from old: Schema.Property, to new: Schema.Property) -> Source {
        switch (old, new) {
        case (.attribute(let old), .attribute(let new)):
            switch (old.options.contains(.encrypted), new.options.contains(.encrypted)) {
            case (false, true): return .sealed(slot: old.slot)
            case (true, false): return .opened(slot: old.slot, sealedAs: old.name)
            default: break
            }
            if old.valueType == new.valueType || new.valueType == .optional(old.valueType) {
                return .copy(slot: old.slot)
            }
            if old.valueType == .optional(new.valueType) {
                return .requiredFromOptional(slot: old.slot, default: new.defaultValue)
            }
            return .changedType(slot: old.slot, from: old.valueType.description, to: new.valueType.description)
        case (.relationship(let old), .relationship(let new)) where old.destination == new.destination:
            if old.isToOne == new.isToOne { return .copy(slot: old.slot) }
            return new.isToOne ? .toOneFromToMany(slot: old.slot) : .toManyFromToOne(slot: old.slot)
        default:
            return .changedType(slot: old.slot, from: old.typeDescription, to: new.typeDescription)
        }
    }

    /// The mapping from a store's recorded schema to the app's when an attribute of the app's schema
    /// gains or loses `.encrypted` against the attribute it matches (by name or `originalName`), so
    /// that a store opened without a migration stage seals or opens its values; `nil` when none does.
    package static func resealing(from stored: Schema, to schema: Schema) -> LightweightMapping? {
        let changes = schema.entities.contains { entity in
            guard let old = stored.entity(named: entity.name) else { return false }
            return entity.properties.contains { property in
                guard case .attribute(let new) = property,
                    case .attribute(let previous)? = old.property(named: new.name)
                        ?? new.originalName.flatMap({ old.property(named: $0) })
                else { return false }
                return previous.options.contains(.encrypted) != new.options.contains(.encrypted)
            }
        }
        guard changes else { return nil }
        return LightweightMapping(
            from: stored, to: schema,
            stageName: "lightweight migration from '\(stored.version)' to '\(schema.version)'")
    }

    /// The models rewritten for the new schema; models of removed entities are dropped.
    package func map(_ snapshots: [DefaultSnapshot]) throws -> [DefaultSnapshot] {
        var mapped: [DefaultSnapshot] = []
        mapped.reserveCapacity(snapshots.count)
        for snapshot in snapshots {
            guard let plan = plans[snapshot.entity.name] else { continue }
            let values = try plan.sources.enumerated().map { index, source in
                try value(of: source, in: snapshot, property: plan.entity.properties[index])
            }
            mapped.append(
                DefaultSnapshot(
                    persistentIdentifier: snapshot.persistentIdentifier, entity: plan.entity, values: values))
        }
        return mapped
    }

    private func value(
        of source: Source, in snapshot: DefaultSnapshot, property: Schema.Property
    ) throws -> StoreValue {
        switch source {
        case .initialValue(let value):
            return value
        case .copy(let slot):
            return snapshot.values[slot]
        case .requiredFromOptional(let slot, let initial):
            let value = snapshot.values[slot]
            return value.isNull ? initial : value
        case .toManyFromToOne(let slot):
            if case .reference(let id) = snapshot.values[slot] { return .references([id]) }
            return .references([])
        case .toOneFromToMany(let slot):
            guard case .references(let ids) = snapshot.values[slot] else { return .null }
            if ids.count > 1 {
                throw DataStoreError(
                    .invalidValue,
                    "the \(stageName) makes '\(snapshot.entity.name).\(property.name)' to-one, "
                        + "but the model '\(snapshot.persistentIdentifier.primaryKey)' has \(ids.count) related models",
                    remedy: "Keep one related model per model in the stage's willMigrate, or keep the relationship "
                        + "to-many", entityName: snapshot.entity.name, propertyNames: [property.name])
            }
            return ids.first.map { .reference($0) } ?? .null
        case .sealed(let slot):
            guard case .attribute(let attribute) = property, !snapshot.values[slot].isNull else {
                return property.isOptionalAttribute ? .null : property.initialValue
            }
            return try AttributeSealing.sealForMigration(
                snapshot.values[slot], attribute: attribute.name, entity: snapshot.entity.name, stageName: stageName)
        case .opened(let slot, let sealedAs):
            switch snapshot.values[slot] {
            case .data(let data) where !data.isEmpty:
                return try AttributeSealing.openForMigration(
                    data, attribute: property.name, sealedAs: sealedAs, entity: snapshot.entity.name,
                    stageName: stageName)
            case .null where property.isOptionalAttribute:
                return .null
            default:
                // Empty Data is the declaration's initial value, which the new declaration gives too.
                return property.initialValue
            }
        case .changedType(let slot, let from, let to):
            guard !snapshot.values[slot].isNull else { return property.initialValue }
            throw DataStoreError(
                .invalidSchema,
                "the \(stageName) changes '\(snapshot.entity.name).\(property.name)' from '\(from)' "
                    + "to '\(to)', and a stored model has a value for it",
                remedy: "Add the new property under a new name and fill it in a custom stage's didMigrate from the "
                    + "old one", entityName: snapshot.entity.name, propertyNames: [property.name])
        }
    }
}

extension Schema.Property {
    /// What a model that never set the property stores: the attribute's default, or no related model.
    var initialValue: StoreValue {
        switch self {
        case .attribute(let attribute): attribute.defaultValue
        case .relationship(let relationship): relationship.isToOne ? .null : .references([])
        }
    }

    /// Whether the property is an optional attribute.
    var isOptionalAttribute: Bool {
        if case .attribute(let attribute) = self { return attribute.isOptional }
        return false
    }

    /// The name the property had in an earlier schema version, if it declares one.
    var originalName: String? {
        switch self {
        case .attribute(let attribute): attribute.originalName
        case .relationship(let relationship): relationship.originalName
        }
    }
}
