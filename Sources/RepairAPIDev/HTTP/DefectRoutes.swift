internal import Foundation
internal import Hummingbird

/// `/admin/defects`: switches the deliberate contract departures (`Defect`) on and off, for the conformance tests.
struct DefectRoutes {
    let defects: DefectSwitches

    private struct Body: Codable {
        var defects: [String]
    }

    func register(on router: Router<DevRequestContext>) {
        let admin = router.group("admin")
        admin.get("defects") { _, _ in
            try BackendReply.json(200, Body(defects: defects.active.map(\.rawValue).sorted())).response()
        }
        admin.put("defects") { request, context in
            let data = try await APIRoutes.body(of: request, context)
            guard let body = try? JSONDecoder().decode(Body.self, from: data) else {
                return BackendReply.error(
                    400, "invalid_request", "expected {\"defects\": [names]}; known: \(Self.known)", field: "defects"
                ).response()
            }
            var chosen: Set<Defect> = []
            for name in body.defects {
                guard let defect = Defect(rawValue: name) else {
                    return BackendReply.error(
                        422, "invalid_value", "\(name) is not a defect; known: \(Self.known)", field: "defects"
                    ).response()
                }
                chosen.insert(defect)
            }
            defects.set(chosen)
            return try BackendReply.json(200, Body(defects: chosen.map(\.rawValue).sorted())).response()
        }
        admin.delete("defects") { _, _ in
            defects.set([])
            return try BackendReply.json(200, Body(defects: [])).response()
        }
    }

    private static var known: String { Defect.allCases.map(\.rawValue).joined(separator: ", ") }
}
