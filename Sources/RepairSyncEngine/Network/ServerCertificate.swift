public import Foundation
internal import SwiftASN1
internal import X509

/// The certificate an HTTPS server presents, read without trusting it (through the configured proxy, if any): for
/// `doctor`, which says whom it is for, who issued it and when it expires.
///
/// ```swift
/// let certificate = try await ServerCertificate.fetch(baseURL: "https://api.example", settings: settings)
/// certificate.notValidAfter  // 2026-09-01 00:00:00 +0000
/// ```
public struct ServerCertificate: Sendable {
    public var host: String
    /// The names it covers (DNS names and IP addresses).
    public var names: [String]
    /// The issuing CA's common name.
    public var issuer: String
    public var notValidBefore: Date
    public var notValidAfter: Date

    /// Connects to the host and port of `baseURL` (an https URL) and reads the certificate it presents.
    public static func fetch(baseURL: String, settings: TransportSettings) async throws -> ServerCertificate {
        guard let url = URL(string: baseURL), let host = url.host else {
            throw PeerCertificates.Failure(description: "\(baseURL) has no host")
        }
        let chain = try await PeerCertificates.fetch(
            host: host, port: url.port ?? 443, settings: settings, timeout: settings.connectTimeout)
        guard let der = chain.first else {
            throw PeerCertificates.Failure(description: "\(host) presented no certificate")
        }
        let leaf = try Certificate(derEncoded: der)
        return ServerCertificate(
            host: host, names: CertificateDiagnosis.names(leaf), issuer: CertificateDiagnosis.name(leaf.issuer),
            notValidBefore: leaf.notValidBefore, notValidAfter: leaf.notValidAfter)
    }

    /// `2026-09-01 00:00:00 UTC`.
    public static func format(_ date: Date) -> String { CertificateDiagnosis.format(date) }
}
