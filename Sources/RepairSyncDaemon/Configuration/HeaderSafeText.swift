/// Text an HTTP header may carry as one opaque token: printable ASCII without space (`!` to `~`). Anything else is
/// refused, or split, on its way — and AsyncHTTPClient, refusing it, quotes it in its error (into `status` and the
/// journal). What the API token and a remembered event id must be.
enum HeaderSafeText {
    static func isToken(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
