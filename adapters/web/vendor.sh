#!/bin/sh
# vendor.sh refreshes the xterm.js files the web page embeds, so that
# `go build` never needs Node: it fetches the two npm packages with
# `npm pack` (which checks each tarball against the registry's integrity
# hash), copies only the browser build, the stylesheet and the licence files
# into static/vendor/, and records what it took in static/vendor/VERSIONS.md.
#
#   adapters/web/vendor.sh                    # the pinned versions below
#   XTERM_VERSION=latest FIT_VERSION=latest adapters/web/vendor.sh
#
# Needs npm, node and tar. Review the diff (and the licences) before
# committing an upgrade.
set -eu

XTERM_VERSION=${XTERM_VERSION:-6.0.0}
FIT_VERSION=${FIT_VERSION:-0.11.0}

here=$(cd "$(dirname "$0")" && pwd)
dest=$here/static/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

for tool in npm node tar; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "vendor.sh: $tool is needed to refresh the vendored files" >&2
		exit 1
	}
done

# pack NAME@VERSION DIR: unpacks the package into $work/DIR and writes its
# version, licence and integrity to $work/DIR.meta (one per line).
pack() {
	spec=$1
	dir=$2
	mkdir -p "$work/$dir"
	(cd "$work" && npm pack --json --silent "$spec" >"$dir.json")
	node -e '
		const [info] = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		console.log(info.filename);
		console.log(info.version);
		console.log(info.integrity);
	' "$work/$dir.json" >"$work/$dir.pack"
	tarball=$(sed -n 1p "$work/$dir.pack")
	tar -xzf "$work/$tarball" -C "$work/$dir"
	node -e '
		const pkg = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		console.log(pkg.name);
		console.log(pkg.version);
		console.log(pkg.license || "UNKNOWN");
	' "$work/$dir/package/package.json" >"$work/$dir.meta"
	sed -n 3p "$work/$dir.pack" >>"$work/$dir.meta"
}

# need FILE: fails loudly when a package no longer ships a file we copy.
need() {
	[ -f "$1" ] || {
		echo "vendor.sh: $1 is missing from the package; its layout changed" >&2
		exit 1
	}
}

pack "@xterm/xterm@$XTERM_VERSION" xterm
pack "@xterm/addon-fit@$FIT_VERSION" addon-fit

x=$work/xterm/package
f=$work/addon-fit/package
for file in "$x/lib/xterm.mjs" "$x/css/xterm.css" "$x/LICENSE" "$f/lib/addon-fit.mjs" "$f/LICENSE"; do
	need "$file"
done

rm -rf "$dest"
mkdir -p "$dest/xterm" "$dest/addon-fit"
cp "$x/lib/xterm.mjs" "$x/css/xterm.css" "$dest/xterm/"
cp "$x/LICENSE" "$dest/xterm/LICENSE"
cp "$f/lib/addon-fit.mjs" "$dest/addon-fit/"
cp "$f/LICENSE" "$dest/addon-fit/LICENSE"

# row NAME: one table row from $work/NAME.meta.
row() {
	name=$(sed -n 1p "$work/$1.meta")
	version=$(sed -n 2p "$work/$1.meta")
	license=$(sed -n 3p "$work/$1.meta")
	integrity=$(sed -n 4p "$work/$1.meta")
	echo "| \`$name\` | $version | $license | \`$integrity\` |"
}

{
	echo "# Vendored browser libraries"
	echo
	echo "Written by \`adapters/web/vendor.sh\`; do not edit by hand. Refresh with"
	echo "\`adapters/web/vendor.sh\` (set \`XTERM_VERSION\` / \`FIT_VERSION\` to move)."
	echo
	echo "| package | version | licence | npm integrity |"
	echo "|---|---|---|---|"
	row xterm
	row addon-fit
	echo
	echo "Files copied (each package's licence text sits next to its files):"
	echo
	echo "| file | from | sha256 |"
	echo "|---|---|---|"
	for pair in "xterm/xterm.mjs:lib/xterm.mjs" "xterm/xterm.css:css/xterm.css" "xterm/LICENSE:LICENSE" \
		"addon-fit/addon-fit.mjs:lib/addon-fit.mjs" "addon-fit/LICENSE:LICENSE"; do
		file=${pair%%:*}
		from=${pair#*:}
		sum=$(node -e '
			const data = require("fs").readFileSync(process.argv[1]);
			console.log(require("crypto").createHash("sha256").update(data).digest("hex"));
		' "$dest/$file")
		echo "| \`$file\` | \`$from\` | \`$sum\` |"
	done
} >"$dest/VERSIONS.md"

echo "vendored @xterm/xterm $(sed -n 2p "$work/xterm.meta") and @xterm/addon-fit $(sed -n 2p "$work/addon-fit.meta") into $dest"
