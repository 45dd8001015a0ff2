/// The product's name and version, as printed by `--version` and sent as the HTTP `User-Agent`.
public enum ProductInfo {
    public static let version = "0.1.0"
    public static let userAgent = "repairsyncd/\(version)"
}
