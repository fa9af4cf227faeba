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

    /// Parses a whole document and returns its root element.
    ///
    /// - Throws: ``ModelError`` (``ModelError/Code/invalidFormat``) with the line where the
    ///   parser stopped, for XML that is not well formed.
    static func parse(_ data: Data, file: String?) throws(ModelError) -> XMLNode {
        // Model files never declare a document type; one that does could expand entities
        // without bound (a "billion laughs"), so it is refused before parsing.
        if let declaration = data.range(of: Data("<!DOCTYPE".utf8)) ?? data.range(of: Data("<!ENTITY".utf8)) {
            let line = data[..<declaration.lowerBound].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            throw ModelError(
                .invalidFormat, "the document declares a document type or entities, which model files never do",
                file: file, line: line)
        }
        let parser = XMLParser(data: data)
        let builder = XMLTreeBuilder()
        parser.delegate = builder
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let succeeded = parser.parse()
        guard succeeded, builder.failure == nil, let root = builder.root else {
            let line = builder.failure?.line ?? parser.lineNumber
            let reason = builder.failure?.message ?? parser.parserError.map(describe) ?? "the document has no root element"
            throw ModelError(.invalidFormat, "malformed XML: \(reason)", file: file, line: max(line, 1))
        }
        return root
    }

    private static func describe(_ error: any Error) -> String {
        let code = (error as NSError).code
        let description = (error as NSError).localizedDescription
        return description.isEmpty || description.hasPrefix("The operation") ? "XML parser error \(code)" : description
    }
}

/// Collects elements as the parser reports them.
private final class XMLTreeBuilder: NSObject, XMLParserDelegate {
    var root: XMLNode?
    var failure: (message: String, line: Int)?
    private var stack: [XMLNode] = []
    /// Deeper documents are refused: no model nests more than a few levels.
    private let maximumDepth = 64

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        guard stack.count < maximumDepth else {
            failure = failure ?? ("elements nest deeper than \(maximumDepth) levels", parser.lineNumber)
            parser.abortParsing()
            return
        }
        stack.append(XMLNode(name: elementName, attributes: attributes, children: [], line: parser.lineNumber))
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
        if failure == nil {
            let description = (parseError as NSError).localizedDescription
            failure = (description.isEmpty ? "XML parser error \((parseError as NSError).code)" : description, parser.lineNumber)
        }
    }
}
