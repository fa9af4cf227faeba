import struct Foundation.UUID

extension UUID {
    /// The UUID whose 16 bytes are the first 16 of `bytes` (a store ID as files hold it).
    init(bytes: UnsafeRawBufferPointer) {
        var uuid = UUID().uuid
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(16))) }
        self.init(uuid: uuid)
    }
}
