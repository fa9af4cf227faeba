/// Every entity's ``EntityDescription/storedKinds`` in one array, made once per model: a walk
/// over many rows (checking a base's chunks) borrows it once, where reading a description and
/// its kinds for each row retained and released them each time.
struct StoredKindTable: Sendable {
    /// The kinds of every entity, one entity after the other.
    let kinds: [StoredKind]
    /// Where each entity's kinds are in `kinds`, by entity index.
    let ranges: [Range<Int>]

    init(_ descriptions: [EntityDescription]) {
        kinds = descriptions.flatMap(\.storedKinds)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(descriptions.count)
        for description in descriptions {
            let start = ranges.last?.upperBound ?? 0
            ranges.append(start..<start + description.storedKinds.count)
        }
        self.ranges = ranges
    }
}
