# Shared by the scripts in scripts/: source it, don't run it.

# Installs the Debian packages given as arguments when any is missing (apt-get, non-interactive).
# Runs `apt-get update` once first, because a fresh machine's package lists may be empty.
ensure_packages() {
    local missing=()
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; return 1; }
        sudo="sudo"
    fi
    echo "==> installing missing packages: ${missing[*]}"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The system packages the build needs.
BUILD_PACKAGES=(libsqlite3-dev libsystemd-dev pkg-config zlib1g-dev)

require_swift() {
    command -v swift >/dev/null || { echo "error: the Swift toolchain is not on PATH (expected /opt/swift)" >&2; exit 1; }
}
