import CairnLog

/// Deterministic payloads: `payload(i)` is always the same bytes, of varying length.
public func payload(_ index: Int, size: Int? = nil) -> [UInt8] {
    let length = size ?? (20 + (index &* 37) % 300)
    var value = UInt64(truncatingIfNeeded: index) &+ 0x9E37_79B9_7F4A_7C15
    var bytes = Array("record \(index) ".utf8)
    while bytes.count < length {
        value = value &* 6364136223846793005 &+ 1442695040888963407
        bytes.append(UInt8(ascii: "a") + UInt8((value >> 59) % 8))
    }
    return Array(bytes.prefix(length))
}

/// Every record of the log at `directory`.
public func readAll(_ directory: String, options: LogOptions = LogOptions()) throws -> [LogRecord] {
    var options = options
    options.readOnly = true
    let log = try Log.open(at: directory, options: options)
    var records: [LogRecord] = []
    try log.records().forEach { records.append($0) }
    return records
}

/// Options with small segments so that tests roll often.
public func smallSegments(_ size: Int = 4096, durability: Durability = .always) -> LogOptions {
    var options = LogOptions()
    options.segmentSize = size
    options.durability = durability
    return options
}

/// ``smallSegments(_:durability:)`` that also train a compression dictionary after 16 payloads
/// and train again at each roll of a segment of 2 KiB or more: tests meet several dictionaries.
package func retrainingDictionaries() -> LogOptions {
    var options = smallSegments(4096)
    options.dictionaryTraining.threshold = 16
    options.dictionaryTraining.retrainingSegmentSize = 2048
    return options
}
