@testable import CairnSupport
import Dispatch
import Foundation
import Glibc
import Testing
@testable import CairnLog

/// The threads Cairn runs replay and halves of large saves on: a job never waits for another,
/// and an idle thread takes the next job (so that it reuses the memory its last job freed).
@Suite struct WorkerThreadsTests {
    @Test func aJobNeverWaitsForAnotherToEnd() {
        let pool = WorkerThreads()
        let released = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let outcome = Protected<[String]>([])
        // The first job waits for the second: with one thread for both, it would wait forever.
        pool.run {
            let freed = released.wait(timeout: .now() + 20) == .success
            outcome.withLock { $0.append(freed ? "first freed" : "first timed out") }
            done.signal()
        }
        pool.run {
            outcome.withLock { $0.append("second ran") }
            released.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(outcome.current == ["second ran", "first freed"])
        #expect(pool.threadCount == 2)
    }

    @Test func anIdleThreadTakesTheNextJob() {
        let pool = WorkerThreads()
        let threads = Protected<[pthread_t]>([])
        for _ in 0..<5 {
            let done = DispatchSemaphore(value: 0)
            pool.run {
                threads.withLock { $0.append(pthread_self()) }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 30) == .success)
            // Let the thread go back to waiting before the next job comes.
            let deadline = Date(timeIntervalSinceNow: 10)
            while pool.idleCount == 0 && Date() < deadline { usleep(1_000) }
        }
        #expect(Set(threads.current.map { UInt($0) }).count == 1)
        #expect(pool.threadCount == 1)
    }
}
