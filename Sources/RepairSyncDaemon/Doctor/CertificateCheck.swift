internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncProtocol

/// `doctor`'s `certificate` line: a refused certificate named with the reason and what to do (an expired one, an
/// unknown CA, another host's), or for a good one whom it is for, who issued it and when it expires — a warning when
/// that is less than `warnWithin` away.
enum CertificateCheck {
    static let warnWithin: TimeInterval = 14 * 86_400

    /// `tlsFailure` is why the health request just made refused the certificate, `healthFailed` whether that
    /// request failed at all. Nil for plain http (loopback): there is no certificate to check.
    static func run(baseURL: String, settings: TransportSettings, tlsFailure: String?, healthFailed: Bool) async
        -> DoctorCheck?
    {
        if let reason = tlsFailure {
            return DoctorCheck("certificate", .fail, reason, fix: fix(for: reason))
        }
        guard baseURL.lowercased().hasPrefix("https://") else { return nil }
        let route = settings.proxy.map { " (through the proxy \($0))" } ?? ""
        let certificate: ServerCertificate
        do {
            certificate = try await ServerCertificate.fetch(baseURL: baseURL, settings: settings)
        } catch {
            return DoctorCheck("certificate", healthFailed ? .skipped : .warn, "could not read it\(route): \(error)")
        }
        let left = certificate.notValidAfter.timeIntervalSinceNow
        let summary =
            "certificate for \(certificate.host) issued by “\(certificate.issuer)”, valid until "
            + "\(ServerCertificate.format(certificate.notValidAfter))\(route)"
        if left < warnWithin, !healthFailed {
            return DoctorCheck(
                "certificate", .warn, "\(summary): \(max(0, Int(left / 86_400))) days left",
                fix: "the API's certificate must be renewed before then (by whoever runs the API, or the shop's proxy)")
        }
        return DoctorCheck("certificate", .ok, summary)
    }

    /// What to do about a refused certificate, by its reason (`CertificateDiagnosis`).
    static func fix(for reason: String) -> String {
        if reason.hasPrefix("unknown CA") {
            return
                "put that CA's certificate (PEM) in a file, set api.ca_file to it, and restart repairsyncd; ask whoever runs the API or the shop's proxy for it"
        }
        if reason.contains("has expired") || reason.contains("expired on") {
            return
                "the certificate must be renewed by whoever runs the API (or the shop's proxy); check this workstation's clock too (timedatectl)"
        }
        if reason.contains("not valid before") { return "set the clock: timedatectl set-ntp true" }
        if reason.contains(", not ") { return "api.base_url must name a host the certificate is for" }
        if reason.contains("api.tls_min_version") {
            return "the API should offer TLS 1.3; only if it cannot, set api.tls_min_version: 1.2"
        }
        return "see the journal (journalctl -u repairsyncd) for the TLS error"
    }
}
