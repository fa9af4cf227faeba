import CairnModelsMacros
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest

/// What `@Managed` writes, and what it refuses with a message.
final class ManagedMacroTests: XCTestCase {
    let macros: [String: any Macro.Type] = [
        "Managed": ManagedMacro.self, "_PersistedProperty": PersistedPropertyMacro.self, "Attribute": MarkerMacro.self,
        "Relationship": MarkerMacro.self, "Transient": MarkerMacro.self, "Unique": ConstraintMacro.self
    ]

    /// (The expansion test support drops a property's initial value once accessors are added;
    /// the compiler keeps it for the `init` accessor: the other tests read such defaults.)
    func testAPropertyGetsAccessorsAStoredPeerAndASchemaEntry() {
        assertMacroExpansion(
            """
            @Managed final class Note {
                @Attribute(.unique) var title: String
                var tags: [String] = []
                @Transient var draft = false
                #Unique<Note>([\\.title, \\.tags])
                init(title: String) { self.title = title }
            }
            """,
            expandedSource: """
                final class Note {
                    var title: String {
                        @storageRestrictions(initializes: _title, accesses: _managedState)
                        init(initialValue) {
                            _managedState.initialize(0, to: initialValue)
                            _title = CairnModels.ManagedSlot()
                        }
                        get {
                            _$observation.access(self, keyPath: \\.title)
                            return CairnModels.ManagedState.value(0, of: self)
                        }
                        set {
                            guard let observation = _$observation.existing else {
                                return CairnModels.ManagedState.setValue(newValue, 0, of: self)
                            }
                            observation.registrar.withMutation(of: self, keyPath: \\.title) {
                                CairnModels.ManagedState.setValue(newValue, 0, of: self)
                            }
                        }
                    }

                    private var _title: CairnModels.ManagedSlot
                    var tags: [String] {
                        @storageRestrictions(initializes: _tags, accesses: _managedState)
                        init(initialValue) {
                            _managedState.initialize(1, to: initialValue)
                            _tags = CairnModels.ManagedSlot()
                        }
                        get {
                            _$observation.access(self, keyPath: \\.tags)
                            return CairnModels.ManagedState.value(1, of: self)
                        }
                        set {
                            guard let observation = _$observation.existing else {
                                return CairnModels.ManagedState.setValue(newValue, 1, of: self)
                            }
                            observation.registrar.withMutation(of: self, keyPath: \\.tags) {
                                CairnModels.ManagedState.setValue(newValue, 1, of: self)
                            }
                        }
                    }

                    private var _tags: CairnModels.ManagedSlot
                    var draft = false
                    init(title: String) { self.title = title }

                    @exclusivity(unchecked) public var _managedState = CairnModels.ManagedState(propertyCount: 2)

                    private let _$observation = CairnModels.ObservationSlot()

                    /// Makes the object of a fetch: its values are read from `managedState`'s context.
                    public init(managedState: CairnModels.ManagedState) {
                        self._managedState = managedState
                        self._title = CairnModels.ManagedSlot()
                        self._tags = CairnModels.ManagedSlot()
                    }

                    /// The class's persisted properties and constraints, from which Cairn derives its entity.
                    public static let managedSchema = CairnModels.ManagedSchema(
                        Note.self,
                        properties: [CairnModels.ManagedProperty("title", \\Note.title, ordinal: 0, attribute: CairnModels.AttributeOptions(.unique)),
                            CairnModels.ManagedProperty("tags", \\Note.tags, ordinal: 1)],
                        uniqueness: [[\\.title, \\.tags]] as [[PartialKeyPath<Note>]],
                        indexes: [] as [[PartialKeyPath<Note>]]
                    )

                    /// Tells observers that every persisted property may have changed (a save merged).
                    public func _managedPropertiesChanged() {
                        guard let registrar = _$observation.existing?.registrar else {
                            return
                        }
                        registrar.willSet(self, keyPath: \\.title)
                        registrar.willSet(self, keyPath: \\.tags)
                        registrar.didSet(self, keyPath: \\.title)
                        registrar.didSet(self, keyPath: \\.tags)
                    }
                }

                extension Note: CairnModels.ManagedModel, Observation.Observable {
                }
                """,
            macros: macros)
    }

    func testWhatCannotBeManagedIsRefusedWithAMessage() {
        assertMacroExpansion(
            """
            @Managed class Loose {
                let id: Int
                var untyped = 1
                @Transient var cache: [Int]
            }
            """,
            expandedSource: """
                class Loose {
                    let id: Int
                    var untyped = 1
                    var cache: [Int]
                }

                extension Loose: CairnModels.ManagedModel, Observation.Observable {
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "a @Managed class must be final (its objects are made by Cairn when it fetches them)", line: 1, column: 16),
                DiagnosticSpec(message: "a stored 'let' cannot be persisted: write 'var', or mark it @Transient", line: 2, column: 5),
                DiagnosticSpec(message: "the persisted property 'untyped' needs a type annotation ('var untyped: String')", line: 3, column: 9),
                DiagnosticSpec(
                    message: "a @Transient property needs an initial value (Cairn makes fetched objects without calling your initializers)", line: 4,
                    column: 5)
            ],
            macros: macros)
    }

    func testAStructIsRefused() {
        assertMacroExpansion(
            "@Managed struct Point { var x: Int }",
            expandedSource: "struct Point { var x: Int \n}",
            diagnostics: [DiagnosticSpec(message: "@Managed applies to a final class", line: 1, column: 1)],
            macros: macros)
    }

    func testACompositeListsItsElementsAndReadsEachByPosition() {
        assertMacroExpansion(
            """
            @Composite public struct Location {
                public var latitude: Double
                var label: String? { didSet {} }
                let unit = "deg"
                let datum: String
                var text: String { "" }
                static var zero = 0
            }
            """,
            expandedSource: """
                public struct Location {
                    public var latitude: Double
                    var label: String? { didSet {} }
                    let unit = "deg"
                    let datum: String
                    var text: String { "" }
                    static var zero = 0
                }

                extension Location: CairnModels.CompositeAttribute {
                    /// The struct's elements, in declaration order.
                    public static let compositeElements: [CairnModels.CompositeElement] = [
                        CairnModels.CompositeElement("latitude", \\Location.latitude),
                        CairnModels.CompositeElement("label", \\Location.label),
                        CairnModels.CompositeElement("datum", \\Location.datum)
                    ]
                    /// Makes a value of its elements' stored values.
                    public init(compositeValues: CairnModels.CompositeValues) throws {
                        self.latitude = try compositeValues.value(0)
                        self.label = try compositeValues.value(1)
                        self.datum = try compositeValues.value(2)
                    }
                }
                """,
            macros: ["Composite": CompositeMacro.self])
    }

    func testWhatCannotBeACompositeIsRefusedWithAMessage() {
        assertMacroExpansion(
            "@Composite final class Box { var x: Int = 0 }",
            expandedSource: "final class Box { var x: Int = 0 \n}",
            diagnostics: [DiagnosticSpec(message: "@Composite applies to a struct", line: 1, column: 1)],
            macros: ["Composite": CompositeMacro.self])
        assertMacroExpansion(
            "@Composite struct Empty { static let shared = 1 }",
            expandedSource: "struct Empty { static let shared = 1 \n}",
            diagnostics: [DiagnosticSpec(message: "a @Composite struct needs a stored property: each is an element of the composite", line: 1, column: 19)],
            macros: ["Composite": CompositeMacro.self])
        assertMacroExpansion(
            "@Composite struct Pair<T> { var x: T }",
            expandedSource: "struct Pair<T> { var x: T \n}",
            diagnostics: [
                DiagnosticSpec(
                    message: "a @Composite struct cannot be generic, nor be declared in a generic type: it is one composite type of the model", line: 1,
                    column: 19)
            ],
            macros: ["Composite": CompositeMacro.self])
    }

    func testAnElementNamedByAKeywordIsStoredUnderItsName() {
        assertMacroExpansion(
            "@Composite struct Slot { var `default`: Int }",
            expandedSource: """
                struct Slot { var `default`: Int \("")
                }

                extension Slot: CairnModels.CompositeAttribute {
                    /// The struct's elements, in declaration order.
                    static let compositeElements: [CairnModels.CompositeElement] = [
                        CairnModels.CompositeElement("default", \\Slot.`default`)
                    ]
                    /// Makes a value of its elements' stored values.
                    init(compositeValues: CairnModels.CompositeValues) throws {
                        self.`default` = try compositeValues.value(0)
                    }
                }
                """,
            macros: ["Composite": CompositeMacro.self])
    }

    func testAConditionalElementIsRefused() {
        assertMacroExpansion(
            """
            @Composite struct Reading {
                var value: Double
                #if DEBUG
                var probe: String?
                #endif
            }
            """,
            expandedSource: """
                struct Reading {
                    var value: Double
                    #if DEBUG
                    var probe: String?
                    #endif
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "declare a @Composite struct's elements outside #if: the model's composite type cannot vary", line: 3, column: 5)
            ],
            macros: ["Composite": CompositeMacro.self])
    }

    func testAPropertyNamedByAKeywordIsStoredUnderItsName() {
        assertMacroExpansion(
            "@_PersistedProperty(0) var `default`: Int",
            expandedSource: """
                var `default`: Int {
                    @storageRestrictions(initializes: _default, accesses: _managedState)
                    init(initialValue) {
                        _managedState.initialize(0, to: initialValue)
                        _default = CairnModels.ManagedSlot()
                    }
                    get {
                        _$observation.access(self, keyPath: \\.`default`)
                        return CairnModels.ManagedState.value(0, of: self)
                    }
                    set {
                        guard let observation = _$observation.existing else {
                            return CairnModels.ManagedState.setValue(newValue, 0, of: self)
                        }
                        observation.registrar.withMutation(of: self, keyPath: \\.`default`) {
                            CairnModels.ManagedState.setValue(newValue, 0, of: self)
                        }
                    }
                }

                private var _default: CairnModels.ManagedSlot
                """,
            macros: macros)
    }
}
