#!/bin/sh
# Downloads the prebuilt `prove-it` for one version and this machine, checks
# it, and installs it as DATA/bin/VERSION/prove-it. The plugin's launcher
# runs it when it finds no host (`sh plugin/prove-it fetch` runs it by hand).
#
#   sh fetch.sh VERSION DATA
#
# Prints one line on stdout: what it installed (exit 0), or why it could not
# (exit 1). What it checks, and against what, is in SPEC.md ("Installing the
# prebuilt binary"):
#   - the archive's SHA-256 against the .sha256 file published beside it;
#   - that the binary runs here and says it is exactly VERSION.
# Nothing reaches DATA/bin/VERSION/ until both hold: the work is done in a
# temporary folder beside it and the binary is renamed into place, so a
# launcher never finds a half-written file, and two sessions installing at
# once each rename a whole, checked binary.
#
# Bounded in time, inside the session-start hook's 60 s: with curl, 5 s to
# connect and 35 s for the archive, 10 s for its checksum; with wget, which
# has no overall limit, 15 s without progress. POSIX sh; curl or wget,
# sha256sum or shasum.
#
#   PROVE_IT_DOWNLOAD_URL   replaces https://github.com/Why-Next/prove-it/releases/download
#                           (mirrors, tests): the archive is BASE/vVERSION/NAME
set -u

version=${1:-}
data=${2:-}
tmp=

fail() {
  [ -n "$tmp" ] && rm -rf "$tmp"
  printf 'the prebuilt prove-it %s could not be installed: %s\n' "$version" "$*"
  exit 1
}

case "$version" in
  '' | unknown) fail "the plugin's version could not be read from .claude-plugin/plugin.json" ;;
  *[!0-9A-Za-z.+-]*) fail "the plugin's version ($version) is not a release version" ;;
esac
[ -n "$data" ] || fail "no data folder was given"

os=$(uname -s)
arch=$(uname -m)
case "$os/$arch" in
  Linux/x86_64 | Linux/amd64) target=x86_64-unknown-linux-musl ;;
  Linux/aarch64 | Linux/arm64) target=aarch64-unknown-linux-musl ;;
  Darwin/x86_64) target=x86_64-apple-darwin ;;
  Darwin/arm64 | Darwin/aarch64) target=aarch64-apple-darwin ;;
  *) fail "there is no prebuilt binary for $os on $arch" ;;
esac

base=${PROVE_IT_DOWNLOAD_URL:-https://github.com/Why-Next/prove-it/releases/download}
name=prove-it-$version-$target
url=${base%/}/v$version/$name.tar.gz

dest=$data/bin/$version
mkdir -p "$dest" 2>/dev/null || fail "cannot create the folder $dest"
tmp=$(mktemp -d "$data/bin/.fetch.XXXXXX" 2>/dev/null) || fail "cannot write in the folder $data/bin"
# A signal (the hook's timeout) must not leave the temporary folder behind.
trap 'rm -rf "$tmp"; exit 1' HUP INT TERM

download() { # URL FILE SECONDS
  if command -v curl >/dev/null 2>&1; then
    err=$(curl --fail --silent --show-error --location --connect-timeout 5 --max-time "$3" --output "$2" "$1" 2>&1) && return 0
  elif command -v wget >/dev/null 2>&1; then
    err=$(wget -nv -T 15 -O "$2" "$1" 2>&1) && return 0
  else
    fail "neither curl nor wget is installed"
  fi
  code=$?
  fail "downloading $1 failed (exit $code${err:+: $(printf '%s' "$err" | tr '\n' ' ')})"
}

download "$url" "$tmp/$name.tar.gz" 35
download "$url.sha256" "$tmp/$name.tar.gz.sha256" 10

expected=
read -r expected _ <"$tmp/$name.tar.gz.sha256" || true
case "$expected" in
  *[!0-9a-f]*) expected= ;;
esac
[ ${#expected} -eq 64 ] || fail "$url.sha256 does not hold a SHA-256"
if command -v sha256sum >/dev/null 2>&1; then
  actual=$(sha256sum "$tmp/$name.tar.gz") || fail "sha256sum failed"
elif command -v shasum >/dev/null 2>&1; then
  actual=$(shasum -a 256 "$tmp/$name.tar.gz") || fail "shasum failed"
else
  fail "neither sha256sum nor shasum is installed, so the download cannot be checked"
fi
actual=${actual%% *}
[ "$actual" = "$expected" ] || fail "the archive's SHA-256 is $actual, but $url.sha256 says $expected: it was not installed"

mkdir "$tmp/x" && tar -xzf "$tmp/$name.tar.gz" -C "$tmp/x" 2>/dev/null || fail "the archive from $url could not be unpacked"
bin=$tmp/x/$name/prove-it
{ [ -f "$bin" ] && [ ! -L "$bin" ]; } || fail "the archive from $url holds no $name/prove-it"
chmod 755 "$bin" || fail "cannot make $bin executable"
said=$("$bin" --version 2>&1) || fail "the downloaded binary does not run on this machine ($os $arch)"
[ "$said" = "prove-it $version" ] || fail "the downloaded binary says it is \"$said\", not prove-it $version"

mv -f "$bin" "$dest/prove-it" || fail "cannot move the binary into $dest"
rm -rf "$tmp"
printf 'prove-it: installed prove-it %s (%s), downloaded from %s with its SHA-256 checked, as %s\n' "$version" "$target" "$url" "$dest/prove-it"
