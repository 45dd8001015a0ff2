internal import Crypto
public import Foundation
internal import SwiftASN1
internal import X509

/// A certificate authority made for one test or bench run, in a directory of its own: its certificate (`ca.pem`,
/// to give the daemon as `api.ca_file`) and server certificates it issues, valid or not, for any names. Keys are
/// made fresh each time, written 0600, and never leave the directory — nothing here is ever committed.
///
/// ```swift
/// let ca = try ThrowawayCA(directory: workspace.file("tls"))
/// let server = try ca.issue(hosts: ["localhost", "127.0.0.1"])
/// // repair-api-dev --tls-cert server.certificatePath --tls-key server.keyPath; api.ca_file: ca.certificatePath
/// ```
public struct ThrowawayCA: Sendable {
    /// A server's PEM certificate and PEM key (PKCS #8).
    public struct Issued: Sendable {
        public let certificatePath: String
        public let keyPath: String
    }

    public let directory: String
    public let name: String
    /// The CA's certificate (PEM).
    public let certificatePath: String
    private let keyPEM: String

    /// Makes a CA named `name`, valid from a day ago for ten years.
    public init(directory: String, name: String = "repairsyncd Throwaway Test CA") throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.name = name
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            OrganizationName("repairsyncd tests")
            CommonName(name)
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now - 86_400, notValidAfter: now + 3650 * 86_400, issuer: subject, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(key.publicKey))
            },
            issuerPrivateKey: .init(key))
        certificatePath = directory + "/ca.pem"
        keyPEM = key.pemRepresentation
        try Self.write(try certificate.serializeAsPEM().pemString, to: certificatePath, mode: 0o644)
    }

    /// A server certificate for `hosts` (DNS names and IP addresses), valid from `notBefore` to `notAfter`,
    /// written as `<file>.pem` and `<file>.key`.
    public func issue(
        hosts: [String] = ["localhost", "127.0.0.1", "::1"], notBefore: Date = Date() - 3600,
        notAfter: Date = Date() + 30 * 86_400, file: String = "server"
    ) throws -> Issued {
        let caKey = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
        let caName = try DistinguishedName {
            OrganizationName("repairsyncd tests")
            CommonName(name)
        }
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(hosts.first ?? "server") }
        let names: [GeneralName] = hosts.map { host in
            if let bytes = Self.ipBytes(host) { return .ipAddress(ASN1OctetString(contentBytes: ArraySlice(bytes))) }
            return .dnsName(host)
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: notBefore,
            notValidAfter: notAfter, issuer: caName, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: .init(caKey.publicKey)).keyIdentifier)
            },
            issuerPrivateKey: .init(caKey))
        let issued = Issued(certificatePath: directory + "/\(file).pem", keyPath: directory + "/\(file).key")
        try Self.write(try certificate.serializeAsPEM().pemString, to: issued.certificatePath, mode: 0o644)
        try Self.write(key.pemRepresentation, to: issued.keyPath, mode: 0o600)
        return issued
    }

    static func write(_ text: String, to path: String, mode: Int) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: mode])
        try Data((text.hasSuffix("\n") ? text : text + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The bytes of an IPv4 or IPv6 address in text, or nil for a host name.
    static func ipBytes(_ host: String) -> [UInt8]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, let bytes = Optional(parts.compactMap { UInt8($0) }), bytes.count == 4 { return bytes }
        guard host.contains(":") else { return nil }
        let halves = host.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ text: String) -> [UInt16]? {
            text.isEmpty
                ? []
                : text.split(separator: ":").map { UInt16($0, radix: 16) }.reduce(into: [UInt16]?([])) {
                    guard let group = $1 else {
                        $0 = nil
                        return
                    }
                    $0?.append(group)
                }
        }
        guard let head = groups(halves[0]), let tail = halves.count == 2 ? groups(halves[1]) : [] else { return nil }
        let zeros = halves.count == 2 ? 8 - head.count - tail.count : 0
        let all = head + Array(repeating: 0, count: max(0, zeros)) + tail
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
