// `import CairnModels` is all a file of typed models needs: the store and contexts (Cairn),
// `#Predicate` and `SortDescriptor` (Foundation), and `Observable` (Observation).
@_exported import Cairn
@_exported import Foundation
@_exported import Observation
