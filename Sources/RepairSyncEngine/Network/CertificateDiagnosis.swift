public import Foundation
internal import NIOCore
internal import SwiftASN1
internal import X509

/// Why a server's certificate was refused, in a sentence a shop's admin can act on — from the chain the server
/// presented, the name the daemon asked for and the time.
///
/// ```swift
/// CertificateDiagnosis(chain: der, host: "api.example", now: Date()).reason
/// // "certificate for api.example has expired on 2026-03-01 00:00:00 UTC"
/// // "unknown CA: the certificate for api.example is issued by “Shop Proxy CA”, which this machine does not trust: set api.ca_file to that CA's certificate"
/// ```
public struct CertificateDiagnosis: Sendable {
    /// The certificates the server sent, its own first (DER).
    public var chain: [[UInt8]]
    public var host: String
    public var now: Date
    /// The verifier accepted the chain but not the name (the certificate is for another host).
    public var nameMismatch: Bool
    /// Whether `api.ca_file` is set (the advice differs).
    public var caFileSet: Bool

    public init(chain: [[UInt8]], host: String, now: Date, nameMismatch: Bool = false, caFileSet: Bool = false) {
        self.chain = chain
        self.host = host
        self.now = now
        self.nameMismatch = nameMismatch
        self.caFileSet = caFileSet
    }

    public var reason: String {
        let certificates = chain.compactMap { try? Certificate(derEncoded: $0) }
        guard let leaf = certificates.first else {
            return chain.isEmpty
                ? "the server at \(host) presented no certificate"
                : "the certificate for \(host) cannot be read (not X.509 DER)"
        }
        if now > leaf.notValidAfter {
            return "certificate for \(host) has expired on \(Self.format(leaf.notValidAfter))"
        }
        if now < leaf.notValidBefore {
            return
                "certificate for \(host) is not valid before \(Self.format(leaf.notValidBefore)): check this workstation's clock (timedatectl)"
        }
        for issuer in certificates.dropFirst() where now > issuer.notValidAfter {
            return
                "certificate for \(host): the CA certificate “\(Self.name(issuer.subject))” in its chain expired on \(Self.format(issuer.notValidAfter))"
        }
        let names = Self.names(leaf)
        if nameMismatch || !Self.covers(names, host) {
            return
                "certificate for \(host) is for \(names.isEmpty ? "no host name" : names.joined(separator: ", ")), not \(host): check api.base_url"
        }
        let advice = caFileSet ? "add that CA's certificate to api.ca_file" : "set api.ca_file to that CA's certificate"
        let top = certificates.last!
        if top.issuer == top.subject {
            // The server sent its CA too (or its certificate is self-signed): that CA is not trusted here.
            let what =
                certificates.count == 1
                ? "is self-signed (“\(Self.name(leaf.subject))”)" : "is issued by “\(Self.name(top.subject))”"
            return "unknown CA: the certificate for \(host) \(what), which this machine does not trust: \(advice)"
        }
        return
            "unknown CA: the certificate for \(host) is issued by “\(Self.name(top.issuer))”, which this machine does not trust: \(advice)"
    }

    /// `2026-03-01 00:00:00 UTC`.
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }

    /// The common name, else the whole distinguished name.
    static func name(_ name: DistinguishedName) -> String {
        for rdn in name.reversed() {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                if let text = String(attribute.value) { return text }
            }
        }
        return name.description
    }

    /// The DNS names and IP addresses a certificate is for (its common name when it has no alternative names).
    static func names(_ certificate: Certificate) -> [String] {
        guard let alternatives = try? certificate.extensions.subjectAlternativeNames, !alternatives.isEmpty else {
            return [name(certificate.subject)]
        }
        return alternatives.compactMap { entry in
            switch entry {
            case .dnsName(let name): return name
            case .ipAddress(let octets):
                let bytes = Array(octets.bytes)
                if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
                if bytes.count == 16 {
                    return stride(from: 0, to: 16, by: 2).map {
                        String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
                    }
                    .joined(separator: ":")
                }
                return nil
            default: return nil
            }
        }
    }

    /// A name matches exactly (case-insensitively) or through a wildcard in its first label.
    static func covers(_ names: [String], _ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return names.contains { name in
            let name = name.lowercased()
            if name == host { return true }
            if name.hasPrefix("*."), let dot = host.firstIndex(of: ".") { return host[dot...] == name.dropFirst() }
            // IPv6 written in full vs. compressed: compare parsed bytes.
            guard let ours = try? SocketAddress(ipAddress: host, port: 0),
                let theirs = try? SocketAddress(ipAddress: name, port: 0)
            else { return false }
            return ours == theirs
        }
    }
}
