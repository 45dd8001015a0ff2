/// One configured class: the changes of `collection` named by `subject` (a field, `create`, `public` or `internal`).
public struct PushPriorityRule: Sendable, Hashable {
    public var collection: SyncCollection
    public var subject: String
    public var priority: PushPriority

    /// Every subject with its default class.
    public static var defaults: [PushPriorityRule] {
        PushPriority.subjects.map {
            PushPriorityRule($0.collection, $0.subject, PushPriority.defaultPriority($0.collection, $0.subject))
        }
    }

    public init(_ collection: SyncCollection, _ subject: String, _ priority: PushPriority) {
        self.collection = collection
        self.subject = subject
        self.priority = priority
    }
}
