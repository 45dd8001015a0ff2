import Foundation

/// The parts of an ELF64 little-endian executable that say what it links: the libraries it needs (`DT_NEEDED`) and
/// the names in its symbol tables. Read straight from the file, so the check needs no tool on the machine.
struct ELFFile {
    let needed: [String]
    let symbols: [String]

    enum Failure: Error, CustomStringConvertible {
        case notELF64(String)
        var description: String {
            switch self {
            case .notELF64(let path): "\(path) is not a 64-bit little-endian ELF file"
            }
        }
    }

    init(path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        let bytes = [UInt8](data)
        guard bytes.count > 64, bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46, bytes[4] == 2,
            bytes[5] == 1
        else { throw Failure.notELF64(path) }
        func integer(_ offset: Int, _ size: Int) -> Int {
            (0..<size).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
        func string(_ table: (offset: Int, size: Int), _ index: Int) -> String {
            var end = table.offset + index
            while end < table.offset + table.size, bytes[end] != 0 { end += 1 }
            return String(decoding: bytes[(table.offset + index)..<end], as: UTF8.self)
        }
        struct Section {
            var type: Int
            var offset: Int
            var size: Int
            var link: Int
        }
        let sectionOffset = integer(0x28, 8)
        let sectionSize = integer(0x3A, 2)
        let sections = (0..<integer(0x3C, 2)).map { index -> Section in
            let base = sectionOffset + index * sectionSize
            return Section(
                type: integer(base + 4, 4), offset: integer(base + 24, 8), size: integer(base + 32, 8),
                link: integer(base + 40, 4))
        }
        var needed: [String] = []
        var symbols: [String] = []
        for section in sections {
            let strings = (sections[section.link].offset, sections[section.link].size)
            switch section.type {
            case 6:  // SHT_DYNAMIC: 16-byte entries; DT_NEEDED = 1
                for entry in stride(from: section.offset, to: section.offset + section.size, by: 16)
                where integer(entry, 8) == 1 {
                    needed.append(string(strings, integer(entry + 8, 8)))
                }
            case 2, 11:  // SHT_SYMTAB, SHT_DYNSYM: 24-byte entries, the name first
                for entry in stride(from: section.offset, to: section.offset + section.size, by: 24) {
                    let name = integer(entry, 4)
                    if name != 0 { symbols.append(string(strings, name)) }
                }
            default: continue
            }
        }
        self.needed = needed
        self.symbols = symbols
    }

    /// What of `libraries` (name prefixes, e.g. `libsqlite3`) and `modules` (Swift module names) this file links.
    func links(libraries: [String], modules: [String]) -> [String] {
        let libraryHits = libraries.filter { library in needed.contains { $0.hasPrefix(library + ".") || $0 == library }
        }
        // What a Swift module defines is mangled with the module first: `$s7NIOCore…`.
        let moduleHits = modules.filter { module in
            let prefix = "$s\(module.utf8.count)\(module)"
            return symbols.contains { $0.hasPrefix(prefix) }
        }
        let cHits = ["sqlite3_open", "sd_notify"].filter { name in
            symbols.contains { $0 == name || $0.hasPrefix(name + "@") }
        }
        return libraryHits + moduleHits + cHits
    }
}
