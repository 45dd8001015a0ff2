import RepairSyncDaemon
import RepairSyncProtocol
import Testing

/// The daemon's router against the catalogue.
@Suite("Control catalogue in the daemon")
struct ControlCatalogueTests {
    @Test("the daemon has exactly one handler for every method of the catalogue")
    func oneHandlerPerMethod() {
        let handled = ControlHandlers.methodNames
        #expect(Set(handled).count == handled.count, "a method has two handlers")
        #expect(Set(handled) == Set(RPC.methods.map { $0.name }))
    }
}
