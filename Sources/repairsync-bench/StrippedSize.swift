import Foundation

/// The size of a binary as installed without its symbols: a copy, stripped with `strip` (binutils, which the Swift
/// toolchain's linker needs anyway), measured, removed.
enum StrippedSize {
    static func of(_ binary: String, in directory: String) throws -> Int {
        let copy = (directory as NSString).appendingPathComponent("stripped-\(UUID().uuidString.prefix(8))")
        try FileManager.default.copyItem(atPath: binary, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let strip = Process()
        strip.executableURL = URL(fileURLWithPath: "/usr/bin/strip")
        strip.arguments = [copy]
        try strip.run()
        strip.waitUntilExit()
        guard strip.terminationStatus == 0 else {
            throw BenchError("strip \(binary) exited with \(strip.terminationStatus)")
        }
        return (try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? 0
    }
}
