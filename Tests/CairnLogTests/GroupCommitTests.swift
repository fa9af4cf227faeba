import CairnTestSupport
import Testing
@testable import CairnLog

@Suite struct GroupCommitTests {
    @Test func sixtyFourConcurrentAppendersShareSyncsAndLoseNothing() async throws {
        let directory = TemporaryDirectory()
        let io = FaultyFileIO()
        var options = LogOptions()
        options.fileIO = io
        let log = try Log.open(at: directory.store(), options: options)
        let syncsBefore = io.syncCount
        let acknowledged = try await withThrowingTaskGroup(of: [(LSN, Int)].self) { group in
            for appender in 0..<64 {
                group.addTask {
                    var acks: [(LSN, Int)] = []
                    for index in 0..<20 {
                        let id = appender * 20 + index
                        acks.append((try await log.append(payload(id)), id))
                    }
                    return acks
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let syncs = io.syncCount - syncsBefore
        try await log.close()
        #expect(acknowledged.count == 1280)
        #expect(Set(acknowledged.map(\.0)).count == 1280, "every append got its own LSN")
        #expect(syncs < 1280, "appends were batched: \(syncs) syncs for 1280 appends")
        let records = try readAll(directory.store())
        #expect(records.map(\.lsn.rawValue) == Array(1...1280))
        let byLSN = Dictionary(uniqueKeysWithValues: records.map { ($0.lsn, $0.payload) })
        for (lsn, id) in acknowledged { #expect(byLSN[lsn] == payload(id)) }
    }
}
