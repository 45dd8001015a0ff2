import Foundation
import RepairSyncProtocol
import RepairSyncReliability
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The Debian package of `scripts/package`, named by `REPAIRSYNC_PACKAGE` (`scripts/test` sets it when it builds
/// one): what it holds, what it loads, that it runs with the Swift toolchain out of sight, and what its maintainer
/// scripts do — on a copy-on-write view of this machine (overlayfs in a private mount namespace), so nothing of the
/// install stays. Without a package (`REPAIRSYNC_PACKAGE` unset) each test is skipped and prints why; with one, they
/// must run: a missing prerequisite (root, `unshare --mount`, lintian) fails them, so CI cannot pass by skipping.
@Suite("The package", .serialized, .timeLimit(.minutes(10)))
struct PackageTests {
    /// The package, unpacked once per test into a temporary directory.
    struct Unpacked {
        let deb: String
        let root: String
        let control: [String: String]

        var depends: Set<String> {
            Set(
                (control["Depends"] ?? "").split(separator: ",").map {
                    String($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
                })
        }

        func path(_ file: String) -> String { root + file }
    }

    /// The package under test: `REPAIRSYNC_PACKAGE` (`scripts/test --package` sets it), nil when it is unset.
    static var packagePath: String? {
        guard let deb = ProcessInfo.processInfo.environment["REPAIRSYNC_PACKAGE"], !deb.isEmpty else { return nil }
        return deb
    }

    /// A prerequisite this machine lacks, thrown when the package's tests must run (`REPAIRSYNC_PACKAGE` is set).
    struct PrerequisiteMissing: Error, CustomStringConvertible {
        let description: String
    }

    /// Stops a test that cannot run here: without a package it is a skip (the reason printed, the test cancelled);
    /// with one (`REPAIRSYNC_PACKAGE` set, as in CI) the package's tests must run, so it is a failure.
    static func cannotRun(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
        if let deb = packagePath {
            throw PrerequisiteMissing(
                description:
                    "\(reason); REPAIRSYNC_PACKAGE=\(deb) is set, so the package's tests must run, not be skipped")
        }
        print("skipped: \(reason)")
        try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
    }

    /// Requires root, and mount namespaces that work (`unshare --mount`): hiding the toolchain and installing on a
    /// copy-on-write view of the system need both.
    static func requireMountNamespace(_ purpose: String, _ workspace: Workspace) async throws {
        guard isRoot else { try cannotRun("\(purpose) needs a mount namespace (unshare --mount), which needs root") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
            try cannotRun("\(purpose) needs /usr/bin/unshare (package util-linux)")
        }
        let probe = try await run(
            ["/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/true"], workspace)
        guard probe.status == 0 else {
            try cannotRun("\(purpose) needs a mount namespace, and unshare --mount fails here: \(probe.output)")
        }
    }

    static func unpack(_ workspace: Workspace) async throws -> Unpacked {
        guard let deb = packagePath else {
            try cannotRun(
                "no package (REPAIRSYNC_PACKAGE is unset; scripts/test --package builds one with scripts/package)")
        }
        try #require(FileManager.default.fileExists(atPath: deb), "REPAIRSYNC_PACKAGE=\(deb) does not exist")
        let root = workspace.file("root")
        let (status, output) = try await run(["/usr/bin/dpkg-deb", "-x", deb, root], workspace)
        try #require(status == 0, "dpkg-deb -x: \(output)")
        let fields = try await run(["/usr/bin/dpkg-deb", "-f", deb], workspace).output
        var control: [String: String] = [:]
        for line in fields.split(separator: "\n") where !line.hasPrefix(" ") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            control[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Unpacked(deb: deb, root: root, control: control)
    }

    /// Runs a command to its end; its exit status and what it wrote (stdout and stderr together).
    static func run(
        _ arguments: [String], _ workspace: Workspace,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        timeout: TimeInterval = 300
    ) async throws -> (status: Int32, output: String) {
        let log = workspace.file("run-\(UUID().uuidString.prefix(8)).log")
        let child = try ChildProcess(arguments, environment: environment, logPath: log)
        let status = await child.waitForExit(timeout: timeout) ?? -1
        return (status, child.log())
    }

    /// The Swift toolchain's root (the directory holding `usr/lib/swift`), from the `swift` on PATH.
    static func toolchainRoot() throws -> String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        let swift = try #require(
            directories.map { $0 + "/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) },
            "no swift on PATH")
        var url = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.path + "/usr/lib/swift") { return url.path }
            url.deleteLastPathComponent()
        }
        Issue.record("no usr/lib/swift above \(swift)")
        throw CancellationError()
    }

    /// A command prefix that runs a program in a private mount namespace with an empty tmpfs over the toolchain.
    static func withoutToolchain(_ toolchain: String) -> [String] {
        [
            "/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
            "mount -t tmpfs -o size=1m,mode=0755 toolchain-hidden \"$0\" && exec \"$@\"", toolchain,
        ]
    }

    static var isRoot: Bool { geteuid() == 0 }

    /// The repository this test was built from (its documents and examples are what the package ships).
    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// Runs `body` in a new workspace, removed afterwards.
    static func inWorkspace(_ name: String, _ body: (Workspace) async throws -> Void) async throws {
        let workspace = try Workspace(name)
        defer { workspace.remove() }
        try await body(workspace)
    }

    @Test(
        "contents: stripped binaries, units on /usr/bin, sysusers and tmpfiles, the conffile and its example, man pages, completions, docs and integration.md's examples"
    )
    func contents() async throws {
        try await Self.inWorkspace("package-contents") { workspace in
            let package = try await Self.unpack(workspace)
            #expect(
                package.deb.hasSuffix(
                    "repairsyncd_\(package.control["Version"] ?? "?")_\(package.control["Architecture"] ?? "?").deb"))
            for file in [
                "/usr/bin/repairsyncd", "/usr/bin/repairctl", "/usr/bin/repair-api-conformance",
                "/usr/share/man/man1/repair-api-conformance.1.gz", "/lib/systemd/system/repairsyncd.service",
                "/lib/systemd/system/repairsyncd.socket", "/usr/lib/sysusers.d/repairsyncd.conf",
                "/usr/lib/tmpfiles.d/repairsyncd.conf", "/etc/repairsyncd/repairsyncd.yaml",
                "/usr/share/man/man1/repairctl.1.gz", "/usr/share/man/man1/repairsyncd.1.gz",
                "/usr/share/bash-completion/completions/repairctl", "/usr/share/zsh/vendor-completions/_repairctl",
                "/usr/share/fish/vendor_completions.d/repairctl.fish", "/usr/share/doc/repairsyncd/copyright",
                "/usr/share/doc/repairsyncd/operations.md.gz", "/usr/share/doc/repairsyncd/changelog.gz",
            ] {
                #expect(FileManager.default.fileExists(atPath: package.path(file)), "missing \(file)")
            }
            // The documents, compressed, each the repository's own (its title line); the example configuration
            // as the conffile ships it; docs/examples beside integration.md, as its links expect.
            let repository = Self.repository
            let doc = "/usr/share/doc/repairsyncd/"
            for page in [
                "README.md", "docs/operations.md", "docs/rpc.md", "docs/architecture.md", "docs/api.md",
                "docs/integration.md",
            ] {
                let packaged = package.path(doc + URL(fileURLWithPath: page).lastPathComponent + ".gz")
                let (status, text) = try await Self.run(["/bin/gzip", "-dc", packaged], workspace)
                #expect(status == 0, "\(packaged): \(text.prefix(500))")
                let title = try String(contentsOfFile: repository + "/" + page, encoding: .utf8).prefix { $0 != "\n" }
                #expect(text.hasPrefix(title + "\n"), "\(packaged) is not \(page): \(text.prefix(200))")
            }
            let example = try Data(
                contentsOf: URL(fileURLWithPath: package.path(doc + "examples/repairsyncd.example.yaml")))
            #expect(!example.isEmpty)
            #expect(
                example
                    == (try Data(contentsOf: URL(fileURLWithPath: package.path("/etc/repairsyncd/repairsyncd.yaml")))))
            let examples = try FileManager.default.contentsOfDirectory(atPath: repository + "/docs/examples")
            #expect(!examples.isEmpty)
            for name in examples {
                #expect(
                    FileManager.default.fileExists(atPath: package.path(doc + "examples/" + name)),
                    "missing \(doc)examples/\(name)")
            }
            let service = try String(
                contentsOfFile: package.path("/lib/systemd/system/repairsyncd.service"), encoding: .utf8)
            #expect(service.contains("ExecStart=/usr/bin/repairsyncd --config /etc/repairsyncd/repairsyncd.yaml"))
            #expect(!service.contains("/usr/local"))
            let conffiles = try await Self.run(
                ["/bin/sh", "-c", "dpkg-deb --ctrl-tarfile \"$0\" | tar -xO ./conffiles", package.deb], workspace)
            #expect(conffiles.output.split(separator: "\n") == ["/etc/repairsyncd/repairsyncd.yaml"])
            for binary in ["/usr/bin/repairsyncd", "/usr/bin/repairctl", "/usr/bin/repair-api-conformance"] {
                let sections = try await Self.run(["/usr/bin/readelf", "-S", "-W", package.path(binary)], workspace)
                    .output
                #expect(!sections.contains(".symtab"), "\(binary) is not stripped")
                #expect(!sections.contains(".debug_info"), "\(binary) carries debug info")
                let dynamic = try await Self.run(["/usr/bin/readelf", "-d", package.path(binary)], workspace).output
                #expect(
                    !dynamic.contains("libswiftCore") && !dynamic.contains("libFoundation"),
                    "\(binary) loads the Swift runtime")
                #expect(
                    dynamic.contains("BIND_NOW") || dynamic.contains("FLAGS_1") && dynamic.contains("NOW"), "full RELRO"
                )
            }
        }
    }

    /// The packages of the libraries a stock Debian has (libc, libstdc++, zlib, SQLite, libsystemd and what it loads).
    static let stockLibraries: Set<String> = [
        "libc6", "libgcc-s1", "libstdc++6", "libsqlite3-0", "libsystemd0", "libcap2", "libgcrypt20", "libgpg-error0",
        "liblz4-1", "liblzma5", "libzstd1", "zlib1g",
    ]

    /// The package that installed a library, asked of dpkg under each name the file goes by: with merged /usr,
    /// ldd's `/lib/…` is dpkg's `/usr/lib/…` or the other way round, and the soname is a link to the real file.
    static func owner(of library: String, _ workspace: Workspace) async throws -> String? {
        let resolved = URL(fileURLWithPath: library).resolvingSymlinksInPath().path
        var candidates: [String] = []
        for path in [library, resolved] {
            candidates.append(path)
            candidates.append(path.hasPrefix("/usr/") ? String(path.dropFirst(4)) : "/usr" + path)
        }
        for candidate in candidates {
            let (status, output) = try await run(["/usr/bin/dpkg", "-S", candidate], workspace)
            if status == 0, let name = output.split(separator: "\n").first?.split(separator: ":").first {
                return String(name)
            }
        }
        return nil
    }

    @Test("ldd: only stock Debian system libraries, every one of them in Depends, none from the Swift toolchain")
    func sharedLibraries() async throws {
        try await Self.inWorkspace("package-ldd") { workspace in
            let package = try await Self.unpack(workspace)
            let toolchain = try Self.toolchainRoot()
            for binary in ["/usr/bin/repairsyncd", "/usr/bin/repairctl", "/usr/bin/repair-api-conformance"] {
                let (status, output) = try await Self.run(["/usr/bin/ldd", package.path(binary)], workspace)
                #expect(status == 0, "\(output)")
                let libraries = output.split(separator: "\n").compactMap { line -> String? in
                    let parts = line.split(separator: " ")
                    if let arrow = parts.firstIndex(of: "=>"), arrow + 1 < parts.count {
                        return String(parts[arrow + 1])
                    }
                    return nil
                }
                #expect(!libraries.isEmpty)
                #expect(!output.contains("not found"), "\(output)")
                for library in libraries {
                    #expect(!library.hasPrefix(toolchain) && !library.contains("swift"), "\(binary) loads \(library)")
                    let owner = try await Self.owner(of: library, workspace)
                    let name = owner ?? "?"
                    #expect(owner != nil, "\(library) belongs to no package")
                    #expect(
                        Self.stockLibraries.contains(name),
                        "\(binary) loads \(library) from \(name), not a stock Debian library")
                    // libsystemd0's own libraries come with it; the ones the binaries link directly are Depends.
                    let direct = try await Self.run(["/usr/bin/readelf", "-d", package.path(binary)], workspace).output
                    if direct.contains("[\(URL(fileURLWithPath: library).lastPathComponent)]") {
                        #expect(
                            package.depends.contains(name),
                            "\(name) (for \(library)) is not in Depends: \(package.control["Depends"] ?? "")")
                    }
                }
            }
            #expect(
                package.depends.isSuperset(of: ["libc6", "libsqlite3-0", "libsystemd0", "systemd"]),
                "\(package.depends)")
        }
    }

    @Test("with the Swift toolchain hidden: --version, --check-config, and a sync against repair-api-dev")
    func runsWithoutToolchain() async throws {
        try await Self.inWorkspace("package-no-toolchain") { workspace in
            let package = try await Self.unpack(workspace)
            try await Self.requireMountNamespace("hiding the toolchain", workspace)
            let toolchain = try Self.toolchainRoot()
            let hidden = Self.withoutToolchain(toolchain)
            let daemonBinary = package.path("/usr/bin/repairsyncd")
            let repairctl = package.path("/usr/bin/repairctl")

            // The control: the binaries this test suite was built with cannot start there — the toolchain is gone.
            let control = try await Self.run(hidden + [Binaries.path("repairsyncd"), "--version"], workspace)
            #expect(control.status != 0, "a toolchain-linked binary ran with the toolchain hidden: \(control.output)")
            #expect(control.output.contains("error while loading shared libraries"), "\(control.output)")
            let listing = try await Self.run(hidden + ["/bin/ls", "-A", toolchain], workspace)
            #expect(listing.status == 0 && listing.output.isEmpty, "the toolchain is not hidden: \(listing.output)")

            let version = try await Self.run(hidden + [daemonBinary, "--version"], workspace)
            #expect(version.status == 0, "\(version.output)")
            #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines) == package.control["Version"])
            let ctlVersion = try await Self.run(hidden + [repairctl, "--version"], workspace)
            #expect(ctlVersion.status == 0, "\(ctlVersion.output)")

            let server = try await APIServerProcess(
                database: workspace.file("api.sqlite"), orders: 20, logPath: workspace.file("api.log"))
            defer { server.process.signal(SIGKILL) }
            let daemon = try DaemonProcess(
                directory: workspace.file("daemon"), baseURL: server.baseURL, token: APIServerProcess.token)
            daemon.binary = daemonBinary
            daemon.launcher = hidden
            defer {
                daemon.process?.signal(SIGKILL)
                daemon.notify.close()
            }
            let check = try await Self.run(
                hidden + [daemonBinary, "--check-config", "--config", daemon.configPath], workspace)
            #expect(check.status == 0, "\(check.output)")
            #expect(check.output.contains("\(daemon.configPath): valid"))

            // The contract checker shipped for backend teams runs too, and passes against repair-api-dev.
            let tokenFile = workspace.file("token")
            try APIServerProcess.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
            let conformance = try await Self.run(
                hidden + [package.path("/usr/bin/repair-api-conformance"), server.baseURL, "--token-file", tokenFile],
                workspace)
            #expect(conformance.status == 0, "\(conformance.output.suffix(3000))")

            try await daemon.start()
            let report = try await daemon.call("sync", .object(["wait": .bool(true)]))
            #expect(report["stop"] == nil || report["stop"] == .null, "\(report)")
            var environment = ProcessInfo.processInfo.environment
            environment["REPAIRSYNCD_SOCKET"] = daemon.socketPath
            let status = try await Self.run(
                hidden + [repairctl, "status", "--json"], workspace, environment: environment)
            #expect(status.status == 0, "\(status.output)")
            let parsed = try JSONParser().parse(status.output.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(parsed["lastSuccessAt"] != nil && parsed["lastSuccessAt"] != .null, "\(status.output)")
            guard case .array(let collections)? = parsed["collections"] else { throw ScenarioFailure("no collections") }
            #expect(collections.compactMap { $0["records"]?.intValue }.reduce(0, +) > 0)
            #expect(await daemon.stop() == 0)
            await server.stop()
        }
    }

    @Test(
        "maintainer scripts: install makes the user, group, directory and key, enables nothing; remove keeps the store and configuration; purge removes them"
    )
    func maintainerScripts() async throws {
        try await Self.inWorkspace("package-scripts") { workspace in
            let package = try await Self.unpack(workspace)
            try await Self.requireMountNamespace(
                "installing on a copy-on-write view of the system (overlayfs)", workspace)
            let script = """
                set -e
                layers="$1"; deb="$2"
                for d in /etc /var /usr; do
                    mkdir -p "$layers/upper$d" "$layers/work$d"
                    mount -t overlay overlay -o "lowerdir=$d,upperdir=$layers/upper$d,workdir=$layers/work$d" "$d"
                done
                if getent passwd repairsyncd >/dev/null; then echo "preexisting-user=yes"; fi
                dpkg -i "$deb" >"$layers/install.log" 2>&1 || { cat "$layers/install.log"; exit 1; }
                echo "user=$(getent passwd repairsyncd | cut -d: -f1,6)"
                echo "group=$(getent group repair | cut -d: -f1,4)"
                echo "state=$(stat -c '%a %U' /var/lib/repairsyncd)"
                echo "configdir=$(stat -c '%a %U %G' /etc/repairsyncd)"
                echo "config=$(stat -c '%a %U %G' /etc/repairsyncd/repairsyncd.yaml)"
                echo "key=$(stat -c '%a %U' /etc/repairsyncd/passcode.key)"
                echo "enabled=$(find /etc/systemd/system -name 'repairsyncd*' | wc -l)"
                echo "installed-version=$(/usr/bin/repairsyncd --version)"
                echo "# a shop edit" >>/etc/repairsyncd/repairsyncd.yaml
                touch /var/lib/repairsyncd/replica.sqlite
                key="$(cat /etc/repairsyncd/passcode.key)"
                dpkg -i --force-confold "$deb" >>"$layers/install.log" 2>&1
                echo "edit-kept=$(grep -c '# a shop edit' /etc/repairsyncd/repairsyncd.yaml)"
                echo "key-kept=$([ "$(cat /etc/repairsyncd/passcode.key)" = "$key" ] && echo yes || echo no)"
                dpkg -r repairsyncd >>"$layers/install.log" 2>&1
                echo "removed-binary=$([ -e /usr/bin/repairsyncd ] && echo present || echo gone)"
                echo "removed-config=$([ -e /etc/repairsyncd/repairsyncd.yaml ] && echo present || echo gone)"
                echo "removed-store=$([ -e /var/lib/repairsyncd/replica.sqlite ] && echo present || echo gone)"
                # From here systemd "runs" (/run/systemd/system on a private /run) and its commands are stubs that
                # note their arguments; the service is "active".
                mount -t tmpfs tmpfs /run
                mkdir -p /run/systemd/system "$layers/bin"
                for tool in systemctl deb-systemd-invoke; do
                    printf '#!/bin/sh\necho "%s $*" >>"%s/systemd.log"\n' "$tool" "$layers" >"$layers/bin/$tool"
                    chmod +x "$layers/bin/$tool"
                done
                PATH="$layers/bin:$PATH" dpkg -i "$deb" >>"$layers/install.log" 2>&1
                echo "started-by-reinstall-of-stopped=$(grep -c 'deb-systemd-invoke start' "$layers/systemd.log")"
                PATH="$layers/bin:$PATH" dpkg -r repairsyncd >>"$layers/install.log" 2>&1
                # The admin deletes the configuration file, then installs again: dpkg keeps it deleted.
                rm /etc/repairsyncd/repairsyncd.yaml
                if PATH="$layers/bin:$PATH" dpkg -i "$deb" >>"$layers/install.log" 2>&1; then
                    echo "reinstall-without-config=ok"
                else
                    echo "reinstall-without-config=failed"; tail -5 "$layers/install.log"
                fi
                echo "key-after-reinstall=$([ "$(cat /etc/repairsyncd/passcode.key)" = "$key" ] && echo kept || echo changed)"
                echo "started-by-reinstall-of-running=$(grep -c 'deb-systemd-invoke start repairsyncd.socket repairsyncd.service' "$layers/systemd.log")"
                dpkg -P repairsyncd >>"$layers/install.log" 2>&1
                echo "purged-config=$([ -e /etc/repairsyncd ] && echo present || echo gone)"
                echo "purged-store=$([ -e /var/lib/repairsyncd ] && echo present || echo gone)"
                """
            let (status, output) = try await Self.run(
                [
                    "/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh",
                    workspace.file("layers"), package.deb,
                ], workspace)
            #expect(status == 0, "\(output)")
            var facts: [String: String] = [:]
            for line in output.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                facts[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            #expect(facts["user"] == "repairsyncd:/var/lib/repairsyncd", "\(output)")
            #expect(facts["group"] == "repair:repairsyncd")
            #expect(facts["state"] == "700 repairsyncd", "systemd-tmpfiles made the state directory")
            #expect(facts["configdir"] == "750 root repairsyncd")
            #expect(facts["config"] == "640 root repairsyncd")
            #expect(facts["key"] == "600 root")
            #expect(facts["enabled"] == "0", "nothing enabled without being asked")
            #expect(facts["installed-version"] == package.control["Version"])
            #expect(facts["edit-kept"] == "1", "a reinstall keeps the admin's configuration (a conffile)")
            #expect(facts["key-kept"] == "yes")
            #expect(facts["removed-binary"] == "gone")
            #expect(facts["removed-config"] == "present")
            #expect(facts["removed-store"] == "present")
            #expect(facts["started-by-reinstall-of-stopped"] == "0", "\(output)")
            #expect(
                facts["reinstall-without-config"] == "ok", "a deleted conffile fails no maintainer script: \(output)")
            #expect(facts["key-after-reinstall"] == "kept")
            #expect(facts["started-by-reinstall-of-running"] == "1", "a service removed running runs again: \(output)")
            #expect(facts["purged-config"] == "gone")
            #expect(facts["purged-store"] == "gone")
            // The host itself never saw any of it.
            #expect(!FileManager.default.fileExists(atPath: "/usr/bin/repairsyncd") || facts["preexisting-user"] != nil)
        }
    }

    @Test(
        "scripts/install --deb installs the package with apt; --uninstall keeps the configuration, --purge removes it")
    func installScript() async throws {
        try await Self.inWorkspace("package-install-script") { workspace in
            let package = try await Self.unpack(workspace)
            try await Self.requireMountNamespace(
                "installing on a copy-on-write view of the system (overlayfs)", workspace)
            let repository = Self.repository
            let script = """
                set -e
                layers="$1"; deb="$2"; cd "$3"
                for d in /etc /var /usr; do
                    mkdir -p "$layers/upper$d" "$layers/work$d"
                    mount -t overlay overlay -o "lowerdir=$d,upperdir=$layers/upper$d,workdir=$layers/work$d" "$d"
                done
                scripts/install --deb "$deb" >"$layers/install.log" 2>&1 || { cat "$layers/install.log"; exit 1; }
                echo "installed=$(dpkg-query -W -f='${Version}' repairsyncd)"
                echo "service=$([ -f /lib/systemd/system/repairsyncd.service ] && echo present || echo missing)"
                scripts/install --uninstall >>"$layers/install.log" 2>&1
                echo "after-uninstall=$(dpkg-query -W -f='${db:Status-Status}' repairsyncd) $([ -e /etc/repairsyncd/repairsyncd.yaml ] && echo config-kept)"
                scripts/install --uninstall --purge >>"$layers/install.log" 2>&1
                echo "after-purge=$(dpkg-query -W -f='${db:Status-Status}' repairsyncd 2>/dev/null || echo unknown) $([ -e /etc/repairsyncd ] && echo config-left || echo config-gone)"
                """
            let (status, output) = try await Self.run(
                [
                    "/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh",
                    workspace.file("layers"), package.deb, repository,
                ], workspace)
            #expect(status == 0, "\(output)")
            #expect(output.contains("installed=\(package.control["Version"] ?? "?")"), "\(output)")
            #expect(output.contains("service=present"))
            #expect(output.contains("after-uninstall=config-files config-kept"), "\(output)")
            #expect(output.contains("config-gone"), "\(output)")
        }
    }

    @Test("lintian: no error or warning, other than the overrides the package carries with their reasons")
    func lintian() async throws {
        try await Self.inWorkspace("package-lintian") { workspace in
            let package = try await Self.unpack(workspace)
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian") else {
                try Self.cannotRun("lintian is not installed (scripts/test --package installs it)")
            }
            let (status, output) = try await Self.run(
                ["/usr/bin/lintian", "--fail-on", "error,warning", "--display-info", package.deb], workspace,
                timeout: 600)
            #expect(status == 0, "\(output)")
            #expect(!output.split(separator: "\n").contains { $0.hasPrefix("E: ") || $0.hasPrefix("W: ") }, "\(output)")
        }
    }
}
