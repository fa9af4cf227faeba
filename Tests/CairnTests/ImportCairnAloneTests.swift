import Cairn
import Testing

/// What Cairn's API speaks in must be usable with `import Cairn` alone (this file imports
/// nothing else): a store's LSNs, and an as-of open.
@Suite struct ImportCairnAloneTests {
    @Test func anLSNIsUsableWithImportCairnAlone() async throws {
        let store = Store(inMemory: try Model { Entity("Note") { Attribute("text", .string) } })
        let context = store.newBackgroundContext()
        try context.insert("Note").setValue("hello", forKey: "text")
        try await context.save()
        let lsn: LSN = store.lastSaveLSN
        #expect(lsn > LSN(0))
        var options = StoreOptions()
        options.asOf = LSN(1234)
        #expect(options.asOf == LSN(1234))
    }
}
