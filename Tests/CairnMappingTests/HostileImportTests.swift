import Cairn
import CairnMapping
import Foundation
import Testing

/// Hostile JSON gives an error with its position and writes nothing: never a trap, a hang, or
/// memory beyond what the input itself holds.
@Suite struct HostileImportTests {
    let model: Model
    let mapping: Mapping

    init() throws {
        model = try MapperFixtures.model()
        mapping = try MapperFixtures.mapping(model)
    }

    func failure(_ bytes: [UInt8], lenient: Bool = false) async -> MappingError? {
        let store = Store(inMemory: model)
        var options = ImportOptions()
        options.lenient = lenient
        do {
            _ = try await store.importJSON(bytes, into: "Person", mapping: mapping, options: options)
            return nil
        } catch {
            #expect((try? store.viewContext.count(FetchRequest("Person"))) == 0, "nothing written")
            return error as? MappingError
        }
    }

    @Test func truncatedInputFailsAtEveryLength() async throws {
        let whole = Array(#"[{"ticket": 1, "name": "Ada", "hired": "2020-01-01T00:00:00Z", "salary": "12.5"}, {"ticket": 2, "active": true}]"#.utf8)
        for length in 1..<whole.count {
            let error = await failure(Array(whole[..<length]))
            #expect(error?.code == .invalidJSON, "cut at \(length)")
            #expect((error?.offset ?? -1) <= length)
        }
    }

    @Test func invalidUTF8() async throws {
        var bytes = Array(#"[{"ticket": 1, "name": "Ad"#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(#""}]"#.utf8)
        let error = await failure(bytes)
        #expect(error?.code == .invalidJSON && error?.message.contains("UTF-8") == true, "\(String(describing: error))")
    }

    @Test func deepNesting() async throws {
        let deep = Array((#"[{"ticket": 1, "name": "#.utf8)) + [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        let error = await failure(deep)
        #expect(error?.code == .invalidJSON && error?.message.contains("deep") == true, "\(String(describing: error))")
        let deepObject = Array((#"[{"ticket": 1, "pricing": "#.utf8)) + Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(await failure(deepObject)?.code == .invalidJSON)
    }

    @Test func numbersBeyondTheirTypes() async throws {
        let beyondInt64 = await failure(Array(#"[{"ticket": 99999999999999999999}]"#.utf8))
        #expect(beyondInt64?.code == .invalidValue && beyondInt64?.message.contains("out of the range of integer64") == true)
        let beyondDouble = await failure(Array(#"[{"ticket": 1, "hired": 1e400}]"#.utf8))
        #expect(beyondDouble?.code == .invalidValue && beyondDouble?.path == "$[0].hired")
        let hugeDecimal = await failure(Array(#"[{"ticket": 1, "salary": 1234567890123456789012345678901234567890.5}]"#.utf8))
        #expect(hugeDecimal?.code == .invalidValue && hugeDecimal?.message.contains("digits") == true)
    }

    @Test func aHundredMegabyteStringAndTenMillionKeys() async throws {
        // A 100 MB string where a number belongs: refused, with its path, the string never copied.
        var big = Array(#"[{"ticket": 1, "visits": ""#.utf8)
        big += [UInt8](repeating: UInt8(ascii: "7"), count: 100_000_000)
        big += Array(#""}]"#.utf8)
        let error = await failure(big)
        #expect(error?.code == .invalidValue && error?.path == "$[0].visits")
        #expect((error?.message.count ?? .max) < 300, "the message quotes a prefix, not the whole value")
        big = []
        // Ten million keys in one object: unknown keys are skipped as they are read.
        let thousand = (0..<1000).flatMap { Array(",\"k\($0)\":0".utf8) }
        var keys: [UInt8] = Array(#"[{"ticket": 1"#.utf8)
        keys.reserveCapacity(10_000 * thousand.count + 16)
        for _ in 0..<10_000 { keys.append(contentsOf: thousand) }
        keys += Array(#","visits": 1e999999}]"#.utf8)
        #expect(await failure(keys)?.path == "$[0].visits", "after ten million keys, the error still names its place")
        keys.removeLast(Array(#","visits": 1e999999}]"#.utf8).count)
        keys += Array("}]".utf8)
        let store = Store(inMemory: model)
        let result = try await store.importJSON(keys, into: "Person", mapping: mapping)
        #expect(result.inserted == 1)
    }

    @Test func wrongShapes() async throws {
        // A record given as a key names an object (ImportByIdentifiersTests): here, none.
        #expect(await failure(Array("42".utf8))?.code == .unresolvedReference)
        #expect(await failure(Array("[1, 2]".utf8))?.code == .unresolvedReference)
        #expect(await failure(Array("[[1], null]".utf8))?.code == .unexpectedShape)
        #expect(await failure(Array("[null]".utf8))?.code == .unexpectedShape)
        #expect(await failure(Array("".utf8)) == nil, "no input: nothing to import")
        #expect(await failure(Array(#"[{"ticket": 1}] trailing"#.utf8))?.code == .invalidJSON)
    }
}
