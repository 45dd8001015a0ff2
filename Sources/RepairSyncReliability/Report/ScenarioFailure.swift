/// A scenario could not run (a program did not start, a request failed): not a measured failure, a broken run.
public struct ScenarioFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
