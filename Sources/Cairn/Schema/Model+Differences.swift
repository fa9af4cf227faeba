extension Model {
    /// The differences from `other` to this model, one line each, for mismatch errors:
    /// `+ entity Book`, `- attribute Author.born`, `~ attribute Author.name: string → integer64`.
    public func differences(from other: Model) -> [String] {
        var lines: [String] = []
        let old = Dictionary(uniqueKeysWithValues: other.entities.map { ($0.name, $0) })
        let new = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0) })
        for name in Set(old.keys).union(new.keys).sorted() {
            switch (old[name], new[name]) {
            case (nil, _?): lines.append("+ entity \(name)")
            case (_?, nil): lines.append("- entity \(name)")
            case (let before?, let after?): lines += Self.differences(before, after)
            default: break
            }
        }
        if userInfo != other.userInfo { lines.append("~ model user info") }
        for composite in Set(composites.map(\.name)).union(other.composites.map(\.name)).sorted() {
            let before = other.composites.first { $0.name == composite }, after = composites.first { $0.name == composite }
            if before != after {
                lines.append(before == nil ? "+ composite \(composite)" : after == nil ? "- composite \(composite)" : "~ composite \(composite)")
            }
        }
        if configurations != other.configurations { lines.append("~ configurations \(other.configurations) → \(configurations)") }
        return lines
    }

    private static func differences(_ before: Entity, _ after: Entity) -> [String] {
        var lines: [String] = []
        let name = after.name
        if before.parent != after.parent { lines.append("~ entity \(name): parent \(before.parent ?? "none") → \(after.parent ?? "none")") }
        if before.isAbstract != after.isAbstract { lines.append("~ entity \(name): abstract \(before.isAbstract) → \(after.isAbstract)") }
        if before.uniquenessConstraints != after.uniquenessConstraints {
            lines.append("~ entity \(name): uniqueness constraints \(before.uniquenessConstraints) → \(after.uniquenessConstraints)")
        }
        let oldAttributes = Dictionary(before.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let newAttributes = Dictionary(after.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for key in Set(oldAttributes.keys).union(newAttributes.keys).sorted() {
            switch (oldAttributes[key], newAttributes[key]) {
            case (nil, let added?): lines.append("+ attribute \(name).\(key) (\(added.type))")
            case (_?, nil): lines.append("- attribute \(name).\(key)")
            case (let a?, let b?) where a != b:
                var changes: [String] = []
                if a.type != b.type { changes.append("\(a.type) → \(b.type)") }
                if a.isOptional != b.isOptional { changes.append(b.isOptional ? "now optional" : "now required") }
                if a.defaultValue != b.defaultValue {
                    changes.append("default \(a.defaultValue?.description ?? "none") → \(b.defaultValue?.description ?? "none")")
                }
                if a.isIndexed != b.isIndexed { changes.append(b.isIndexed ? "now indexed" : "no longer indexed") }
                if a.isTransient != b.isTransient { changes.append(b.isTransient ? "now transient" : "no longer transient") }
                if a.userInfo != b.userInfo { changes.append("user info") }
                if a.renamingIdentifier != b.renamingIdentifier || a.elementID != b.elementID { changes.append("renaming identifier or element ID") }
                if a.customClassName != b.customClassName { changes.append("custom class") }
                lines.append("~ attribute \(name).\(key): " + changes.joined(separator: ", "))
            default: break
            }
        }
        if before.attributes.map(\.name) != after.attributes.map(\.name),
            Set(before.attributes.map(\.name)) == Set(after.attributes.map(\.name))
        {
            lines.append("~ entity \(name): attribute order")
        }
        let oldRelationships = Dictionary(before.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let newRelationships = Dictionary(after.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for key in Set(oldRelationships.keys).union(newRelationships.keys).sorted() {
            switch (oldRelationships[key], newRelationships[key]) {
            case (nil, let added?): lines.append("+ relationship \(name).\(key) → \(added.destination)")
            case (_?, nil): lines.append("- relationship \(name).\(key)")
            case (let a?, let b?) where a != b: lines.append("~ relationship \(name).\(key)")
            default: break
            }
        }
        if before.userInfo != after.userInfo { lines.append("~ entity \(name): user info") }
        if before.fetchIndexes != after.fetchIndexes { lines.append("~ entity \(name): fetch indexes") }
        if before.renamingIdentifier != after.renamingIdentifier || before.elementID != after.elementID {
            lines.append("~ entity \(name): renaming identifier or element ID")
        }
        return lines
    }
}
