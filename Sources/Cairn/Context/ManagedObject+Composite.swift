extension ManagedObject {
    /// The whole value of a composite attribute: each element's value by its key path from the
    /// attribute (`latitude`; `point.x` for an element of a nested composite). One element reads
    /// as any attribute does: `value(forKey: "location.latitude")`.
    ///
    /// - Throws: ``StoreError/Code/unknownName`` when `key` is not a composite attribute.
    public func compositeValue(forKey key: String) throws -> [String: Value] {
        var result: [String: Value] = [:]
        for (path, position) in try compositeElements(key) {
            result[path] = try value(forKey: entity.attributes[position].name, as: Value.self)
        }
        return result
    }

    /// Sets the whole value of a composite attribute: each element named in `values` (by its
    /// key path from the attribute) to its value, every other element to nil. Nothing is set
    /// when a key is not an element or a value does not fit.
    ///
    /// - Throws: ``StoreError/Code/unknownName`` for a key that is not an element,
    ///   ``StoreError/Code/typeMismatch`` naming the element whose value does not fit.
    public func setCompositeValue(_ values: [String: Value], forKey key: String) throws {
        let elements = try compositeElements(key)
        let paths = Set(elements.map(\.path))
        if let stray = values.keys.sorted().first(where: { !paths.contains($0) }) {
            throw StoreError(
                .unknownName, "\(entity.name).\(key) has no element \(stray) (it has \(elements.map(\.path).joined(separator: ", ")))",
                entity: entity.name, property: key + "." + stray)
        }
        for (path, position) in elements {
            let type = entity.attributes[position].type
            let value = values[path] ?? .null
            guard value.converted(to: type) != nil else {
                throw StoreError(.typeMismatch, "\(entity.name).\(key).\(path): \(value.misfit(type))", entity: entity.name, property: key + "." + path)
            }
        }
        for (path, position) in elements { try setValue(values[path] ?? .null, forKey: entity.attributes[position].name) }
    }

    private func compositeElements(_ key: String) throws -> [(path: String, position: Int)] {
        let elements = entity.compositeElements(key)
        guard !elements.isEmpty, entity.attributePosition(key) == nil else {
            throw StoreError(.unknownName, "\(entity.name) has no composite attribute \(key)", entity: entity.name, property: key)
        }
        return elements
    }
}
