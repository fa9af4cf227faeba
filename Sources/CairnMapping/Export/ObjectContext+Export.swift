import Cairn
import CairnSupport
import Foundation

extension ObjectContext {
    /// Writes the objects a request fetches as JSON, through `mapping`, handing the bytes to
    /// `write` in pieces of about 64 KiB as they are made (a file, a socket: the output is never
    /// held whole).
    ///
    /// ```swift
    /// let result = try context.exportJSON(FetchRequest("Person", sortKeys: [.ascending("ticket")]), mapping: mapping) { bytes in
    ///     try handle.write(contentsOf: bytes)
    /// }
    /// ```
    ///
    /// Keys are the mapping's (the first key path of each property; dotted paths become nested
    /// objects); dates, numbers and transformed values are written as the mapping reads them.
    /// docs/MAPPING.md lists how an export differs from the JSON an import read.
    @discardableResult
    public func exportJSON(
        _ request: FetchRequest, mapping: Mapping, options: ExportOptions = ExportOptions(), to write: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws -> ExportResult {
        try exportJSON(fetchIDs(request), mapping: mapping, options: options, to: write)
    }

    /// Writes the objects with these IDs as JSON (see ``exportJSON(_:mapping:options:to:)``).
    @discardableResult
    public func exportJSON(
        _ ids: [ObjectID], mapping: Mapping, options: ExportOptions = ExportOptions(), to write: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws -> ExportResult {
        guard mapping.model == model else {
            throw MappingError(.invalidMapping, "the mapping was built for another model than the context's")
        }
        var exporter = JSONExporter(context: self, mapping: mapping, options: options, writer: JSONWriter(sink: write))
        try exporter.write(ids)
        return ExportResult(objects: ids.count, bytes: exporter.writer.flushed)
    }

    /// Writes these objects as JSON (see ``exportJSON(_:mapping:options:to:)``).
    @discardableResult
    public func exportJSON(
        _ objects: [ManagedObject], mapping: Mapping, options: ExportOptions = ExportOptions(),
        to write: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws -> ExportResult {
        try exportJSON(objects.map(\.objectID), mapping: mapping, options: options, to: write)
    }

    /// The objects a request fetches as JSON bytes (see
    /// ``exportJSON(_:mapping:options:to:)-(FetchRequest,_,_,_)``).
    public func exportJSON(_ request: FetchRequest, mapping: Mapping, options: ExportOptions = ExportOptions()) throws -> [UInt8] {
        var out: [UInt8] = []
        try exportJSON(request, mapping: mapping, options: options) { out.append(contentsOf: $0) }
        return out
    }
}
