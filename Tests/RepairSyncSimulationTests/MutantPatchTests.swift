import Foundation
import Testing

/// The mutation table's patches (`scripts/mutants/*.patch`) each revert one fix in today's code, and the power-cut
/// mutants (`scripts/mutants/power-cut/*.patch`) each break one durability guarantee. A fix whose code moves leaves
/// its patch behind, and `scripts/mutants/run` could only say so after an hour — the power-cut one only when someone
/// runs it, which is how `ack-before-commit` stood stale after the lone write's change (`af8f3a7`); this says it at
/// once.
///
/// Checked here without `git apply --check`: spawning 32 processes through Foundation's `Process` in the test
/// process is 32 more chances of its over-read in `Process.run()` on Linux (swift-corelibs-foundation #5472, in
/// this toolchain), which crashed a full run of the suite once.
@Suite("Simulator: mutant patches")
struct MutantPatchTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var patches: [URL] { patches(in: "scripts/mutants") }
    static var powerCutPatches: [URL] { patches(in: "scripts/mutants/power-cut") }

    static func patches(in folder: String) -> [URL] {
        let directory = repository.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".patch") }.sorted().map { directory.appendingPathComponent($0) }
    }

    /// One file's hunks of a unified diff: the lines each hunk expects (context and removed lines, in order).
    struct FilePatch {
        var path: String
        var hunks: [[Substring]] = []
    }

    static func parse(_ text: String) -> [FilePatch] {
        var files: [FilePatch] = []
        var inHunk = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("+++ ") {
                files.append(FilePatch(path: String(line.dropFirst(4).drop { $0 != "/" }.dropFirst())))
                inHunk = false
            } else if line.hasPrefix("@@"), !files.isEmpty {
                files[files.count - 1].hunks.append([])
                inHunk = true
            } else if inHunk, let first = line.first, first == " " || first == "-" {
                files[files.count - 1].hunks[files[files.count - 1].hunks.count - 1].append(line.dropFirst())
            } else if inHunk, line.hasPrefix("+") || line.hasPrefix("\\") {
                continue
            } else {
                inHunk = false
            }
        }
        return files
    }

    /// Whether `expected` occurs as consecutive lines of `lines` (what `git apply` needs, wherever the hunk moved).
    static func contains(_ lines: [Substring], _ expected: [Substring]) -> Bool {
        guard !expected.isEmpty, expected.count <= lines.count else { return expected.isEmpty }
        return (0...(lines.count - expected.count)).contains { start in
            zip(lines[start...], expected).allSatisfy { $0 == $1 }
        }
    }

    @Test(
        "every mutant patch, the power-cut ones too, applies to today's sources (each hunk's lines are there), and touches only Sources/"
    )
    func patchesApply() throws {
        let patches = Self.patches
        let powerCutPatches = Self.powerCutPatches
        try #require(patches.count >= 30, "the patches were found: \(patches.count) in scripts/mutants")
        try #require(powerCutPatches.count >= 2, "the power-cut patches were found: \(powerCutPatches.count)")
        for patch in patches + powerCutPatches {
            let files = Self.parse(try String(contentsOf: patch, encoding: .utf8))
            #expect(
                !files.isEmpty && files.allSatisfy { $0.path.hasPrefix("Sources/") && !$0.hunks.isEmpty },
                "\(patch.lastPathComponent): \(files.map(\.path))")
            for file in files {
                let source = try String(contentsOf: Self.repository.appendingPathComponent(file.path), encoding: .utf8)
                let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
                for (index, hunk) in file.hunks.enumerated() {
                    let applies = Self.contains(lines, hunk)
                    #expect(
                        applies,
                        "\(patch.lastPathComponent) no longer applies: hunk \(index + 1) of \(file.path) is not in today's code"
                    )
                }
            }
        }
    }

    @Test("the check can fail: a hunk whose lines the code no longer has is found")
    func staleHunkFound() {
        let lines: [Substring] = ["a", "b", "c", "d"]
        let patch = Self.parse("--- a/Sources/X.swift\n+++ b/Sources/X.swift\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
        #expect(patch.map(\.path) == ["Sources/X.swift"])
        #expect(Self.contains(lines, patch[0].hunks[0]))
        let stale = Self.parse("--- a/Sources/X.swift\n+++ b/Sources/X.swift\n@@ -1,3 +1,3 @@\n a\n-x\n+B\n c\n")
        #expect(!Self.contains(lines, stale[0].hunks[0]))
    }
}
