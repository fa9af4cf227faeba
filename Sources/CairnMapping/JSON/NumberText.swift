import CCairnSupport

/// Numbers read from their text without making a String.
enum NumberText {
    /// The nearest finite `Double` to JSON number text (checked against JSON's grammar by the
    /// scanner), read in the POSIX locale; nil when it is beyond `Double`'s range or longer than
    /// 63 bytes (the caller then takes the general path).
    static func double(_ bytes: UnsafeRawBufferPointer) -> Double? {
        guard !bytes.isEmpty, bytes.count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> Double? in
            guard let base = buffer.baseAddress else { return nil }
            for index in 0..<bytes.count { base[index] = CChar(bitPattern: bytes[index]) }
            base[bytes.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = cairn_strtod_posix(base, &end)
            guard let end, end - base == bytes.count, value.isFinite else { return nil }
            return value
        }
    }
}
