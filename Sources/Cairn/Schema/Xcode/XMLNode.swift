import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An XML element read into memory with the line it starts on, for reading small documents
/// such as Xcode model files and reporting problems by line.
struct XMLNode {
    var name: String
    var attributes: [String: String]
    var children: [XMLNode]
    /// The line (1-based) the parser was on at the element's start tag.
    var line: Int

    /// The children with this element name.
    func children(named name: String) -> [XMLNode] { children.filter { $0.name == name } }
    /// The first child with this element name.
    func child(named name: String) -> XMLNode? { children.first { $0.name == name } }

    /// What a document may hold: parsing stops at the first element past a limit, with an error
    /// naming the limit, so that a forged file costs little more than a real one.
    struct Limits {
        /// How deep elements may nest: no model nests more than a few levels.
        var maximumDepth = 64
        /// How many elements the document may hold in all.
        var maximumElements = 1 << 20
        /// How many children of the root element may have each of these names.
        var rootChildren: [String: Int] = [:]
    }

    /// Parses a whole document and returns its root element.
    ///
    /// The document is decoded first (``XMLText``), and the parser reads the decoded text, so
    /// that every check below sees the text the parser reads, whatever the file's encoding.
    ///
    /// - Throws: ``ModelError`` (``ModelError/Code/invalidFormat``) naming the file and line: a
    ///   document type or entity declaration, an encoding Cairn does not read, a document past
    ///   one of `limits`, XML that is not well formed.
    static func parse(_ data: Data, file: String?, limits: Limits = Limits()) throws(ModelError) -> XMLNode {
        let text = try XMLText.utf8(data, file: file)
        // Model files never declare a document type; one that does could expand entities
        // without bound (a "billion laughs"), so it is refused before parsing.
        if let declaration = text.firstRange(of: Array("<!DOCTYPE".utf8)) ?? text.firstRange(of: Array("<!ENTITY".utf8)) {
            let line = text[..<declaration.lowerBound].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            throw ModelError(
                .invalidFormat, "the document declares a document type or entities, which model files never do",
                file: file, line: line)
        }
        // Read as a stream, in chunks: libxml2 refuses a single chunk of more than 10,000,000 bytes.
        let parser = XMLParser(stream: InputStream(data: text))
        let builder = XMLTreeBuilder(limits: limits)
        parser.delegate = builder
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let succeeded = parser.parse()
        if let limit = builder.limitReached {
            throw ModelError(.invalidFormat, limit.message, file: file, line: max(limit.line, 1))
        }
        guard succeeded, builder.failure == nil, let root = builder.root else {
            let line = builder.failure?.line ?? parser.lineNumber
            var reason = builder.failure?.message ?? parser.parserError.map(describe) ?? "the document has no root element"
            if text.count > Self.parserTokenLimit {
                reason += " (the parser also stops at a name, value, comment or text of more than \(Self.parserTokenLimit) bytes)"
            }
            throw ModelError(.invalidFormat, "malformed XML: \(reason)", file: file, line: max(line, 1))
        }
        return root
    }

    /// libxml2 stops, saying no more than an error number, at a single name, value, comment or
    /// text longer than this.
    static let parserTokenLimit = 10_000_000

    static func describe(_ error: any Error) -> String {
        let code = (error as NSError).code
        let description = (error as NSError).localizedDescription
        return description.isEmpty || description.hasPrefix("The operation") ? "XML parser error \(code)" : description
    }
}

/// Collects elements as the parser reports them.
private final class XMLTreeBuilder: NSObject, XMLParserDelegate {
    var root: XMLNode?
    var failure: (message: String, line: Int)?
    /// The limit the document went past, where.
    var limitReached: (message: String, line: Int)?
    private var stack: [XMLNode] = []
    private let limits: XMLNode.Limits
    private var elements = 0
    private var rootChildren: [String: Int] = [:]

    init(limits: XMLNode.Limits) { self.limits = limits }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        guard limitReached == nil else { return }
        elements += 1
        if stack.count >= limits.maximumDepth {
            stop(parser, "elements nest deeper than \(limits.maximumDepth) levels, the most a model file may")
            return
        }
        if elements > limits.maximumElements {
            stop(parser, "the document holds more than \(limits.maximumElements) elements, the most a model file may")
            return
        }
        if stack.count == 1, let limit = limits.rootChildren[elementName] {
            let count = rootChildren[elementName, default: 0] + 1
            rootChildren[elementName] = count
            if count > limit {
                stop(parser, "the <\(stack[0].name)> holds more than \(limit) <\(elementName)> elements, the most a model may have")
                return
            }
        }
        stack.append(XMLNode(name: elementName, attributes: attributes, children: [], line: parser.lineNumber))
    }

    private func stop(_ parser: XMLParser, _ message: String) {
        limitReached = (message, parser.lineNumber)
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard let node = stack.popLast() else { return }
        if stack.isEmpty {
            root = node
        } else {
            stack[stack.count - 1].children.append(node)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if failure == nil { failure = (XMLNode.describe(parseError), parser.lineNumber) }
    }
}
