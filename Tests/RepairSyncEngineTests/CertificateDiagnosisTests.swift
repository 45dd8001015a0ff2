import Foundation
import RepairSyncEngine
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

/// The sentence for a refused certificate, from chains made by a throwaway CA (the cases the HTTPS tests do not
/// reach through a server).
@Suite("Certificate diagnosis")
struct CertificateDiagnosisTests {
    /// The DER of the first certificate in a PEM file.
    static func der(_ path: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let body = text.components(separatedBy: "-----BEGIN CERTIFICATE-----")[1]
            .components(separatedBy: "-----END CERTIFICATE-----")[0]
        return Array(try #require(Data(base64Encoded: body.filter { !$0.isWhitespace })))
    }

    @Test("a self-signed certificate, one not valid yet, a wildcard that covers the host, and an empty chain")
    func cases() throws {
        let directory = try TemporaryDirectory(prefix: "diagnosis")
        let ca = try ThrowawayCA(directory: directory.path("ca"), name: "Lonely Server")
        let selfSigned = try Self.der(ca.certificatePath)
        #expect(
            CertificateDiagnosis(chain: [selfSigned], host: "api.example", now: Date()).reason.hasPrefix(
                "certificate for api.example is for Lonely Server, not api.example"),
            "a CA certificate names no host: the name is what fails first")
        let wildcard = try ca.issue(hosts: ["*.shop.example"], file: "wildcard")
        let chain = [try Self.der(wildcard.certificatePath), selfSigned]
        #expect(
            CertificateDiagnosis(chain: chain, host: "api.shop.example", now: Date()).reason
                == "unknown CA: the certificate for api.shop.example is issued by “Lonely Server”, which this machine does not trust: set api.ca_file to that CA's certificate"
        )
        #expect(
            CertificateDiagnosis(chain: [chain[0]], host: "api.shop.example", now: Date(), caFileSet: true).reason
                == "unknown CA: the certificate for api.shop.example is issued by “Lonely Server”, which this machine does not trust: add that CA's certificate to api.ca_file"
        )
        let future = try ca.issue(
            hosts: ["api.example"], notBefore: Date() + 86_400 * 2, notAfter: Date() + 86_400 * 30, file: "future")
        #expect(
            CertificateDiagnosis(chain: [try Self.der(future.certificatePath)], host: "api.example", now: Date()).reason
                .contains("is not valid before"))
        #expect(
            CertificateDiagnosis(chain: [], host: "api.example", now: Date()).reason
                == "the server at api.example presented no certificate")
    }

    @Test(
        "reading the certificate of a host that refuses the connection fails with the reason (doctor against an API that is down)"
    )
    func refusedConnection() async throws {
        // A port nothing listens on (as RunAndStatusTests' offline engine).
        let port = 9
        do {
            _ = try await ServerCertificate.fetch(baseURL: "https://127.0.0.1:\(port)", settings: TransportSettings())
            Issue.record("a certificate from a closed port")
        } catch {
            #expect("\(error)".contains("cannot connect to 127.0.0.1:\(port)"), "\(error)")
        }
    }
}
