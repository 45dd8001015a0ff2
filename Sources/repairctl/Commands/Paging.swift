import ArgumentParser

/// Paging options of the list commands.
struct Paging: ParsableArguments {
    @Option(help: "At most this many rows (1…1000).") var limit = 50
    @Option(help: "Skip this many rows.") var offset = 0
}
