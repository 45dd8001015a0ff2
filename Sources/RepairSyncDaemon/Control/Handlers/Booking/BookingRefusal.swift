internal import RepairSyncEngine

/// The engine names a refused field by its API name (`first_name`); the booking methods take camelCase params
/// (`firstName`), so the refusal's `data.field` is the name the caller sent.
enum BookingRefusal {
    static func naming<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch EngineError.invalidValue(let field, let reason) {
            throw EngineError.invalidValue(field: camelCase(field), reason: reason)
        }
    }

    /// `assigned_user_id` → `assignedUserId`.
    static func camelCase(_ name: String) -> String {
        let words = name.split(separator: "_")
        guard let first = words.first else { return name }
        return String(first) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}
