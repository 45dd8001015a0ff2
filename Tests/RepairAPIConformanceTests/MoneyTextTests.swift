import RepairAPIConformance
import RepairSyncProtocol
import Testing

/// Money exactness as the `money` check judges it (docs/api.md section 2.3).
@Suite("Money text")
struct MoneyTextTests {
    @Test(
        "exact decimals pass, as strings or as JSON numbers",
        arguments: [
            JSONValue.string("149.99"), .string("150"), .string("150.00"), .string("0.3"), .string("-0.5"),
            .number("149.99"), .number("0"), .number("1234.5"),
            // Long but exact: no binary float prints like this.
            .string("12345678901234567.89"), .number("1000000000000000.01"),
        ])
    func exact(_ value: JSONValue) {
        #expect(MoneyText.problem(value) == nil)
    }

    @Test(
        "digits a binary double leaves behind are refused",
        arguments: [
            "149.99000000000001", "99.989999999999995", "0.30000000000000004", "1234.5599999999999",
            "-0.10000000000000001",
        ])
    func binaryFloats(_ text: String) {
        #expect(MoneyText.problem(.number(text))?.contains("binary floating point") == true)
        #expect(MoneyText.problem(.string(text))?.contains("binary floating point") == true)
    }

    @Test(
        "what is not plain decimal text is refused",
        arguments: [
            JSONValue.string("1e2"), .number("1.5e2"), .string("12,50"), .string(" 1"), .string("+1"), .string(""),
            .bool(true), .null, .string("1."),
        ])
    func notDecimal(_ value: JSONValue) {
        #expect(MoneyText.problem(value) != nil)
    }
}
