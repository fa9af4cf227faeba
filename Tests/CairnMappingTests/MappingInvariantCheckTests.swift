import CairnSupport
import Testing

@testable import CairnMapping

/// The mapper's structures with rules check them: each holds as built and fails when damaged on
/// purpose (so that a check cannot pass by checking nothing).
@Suite struct MappingInvariantCheckTests {
    @Test func theContainerStackChecksItsBitsAndDeepContainers() throws {
        var stack = JSONContainerStack()
        for level in 0..<70 { stack.push(isObject: level % 3 == 0) }
        for _ in 0..<3 { stack.pop() }
        #expect(throws: Never.self) { try stack.checkInvariants() }
        var damaged = stack
        damaged.deep.append(true)
        #expect(throws: InvariantViolation.self) { try damaged.checkInvariants() }  // a deep container too many
        while stack.count > 10 { stack.pop() }
        #expect(throws: Never.self) { try stack.checkInvariants() }
        damaged = stack
        damaged.shallow |= 1 << 12
        #expect(throws: InvariantViolation.self) { try damaged.checkInvariants() }  // a bit past the open containers
    }

    @Test func dateFieldsCheckTheirLiterals() throws {
        let pattern = try DatePattern("'at 'yyyy-MM-dd' T 'HH")
        var fields = pattern.fields
        #expect(throws: Never.self) { try fields.checkInvariants() }
        #expect(throws: Never.self) { try pattern.inline?.checkInvariants() }
        fields.literals.append(0x20)
        #expect(throws: InvariantViolation.self) { try fields.checkInvariants() }  // a byte no field reads
        fields = pattern.fields
        fields.fields.insert(.literal(start: 0, count: 3), at: 1)
        #expect(throws: InvariantViolation.self) { try fields.checkInvariants() }  // two literal fields side by side
    }
}
