#!/bin/sh
# render-report.sh renders an HTML report to a PNG with headless Chromium
# (Debian's "chromium" package), with networking features off.
#
# Usage: scripts/render-report.sh REPORT.html OUT.png [WIDTH,HEIGHT]
# Default size 1280,2000. Exit 2 on bad usage, 3 when chromium is missing
# or produced no image.
set -eu

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "uso: $0 RELATORIO.html SAIDA.png [LARGURA,ALTURA]" >&2
	exit 2
fi
html=$1
out=$2
size=${3:-1280,2000}

if [ ! -f "$html" ]; then
	echo "$0: $html: arquivo não encontrado" >&2
	exit 2
fi
browser=${CHROMIUM:-chromium}
if ! command -v "$browser" >/dev/null 2>&1; then
	echo "$0: $browser não está no PATH (apt-get install chromium)" >&2
	exit 3
fi

abs_html=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
case $out in
/*) abs_out=$out ;;
*) abs_out=$(pwd)/$out ;;
esac
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT INT TERM

rm -f "$abs_out"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--disable-dev-shm-usage --hide-scrollbars \
	--user-data-dir="$profile" --screenshot="$abs_out" --window-size="$size" \
	"file://$abs_html" >"$profile/chromium.log" 2>&1 || {
	echo "$0: chromium falhou:" >&2
	tail -n 20 "$profile/chromium.log" >&2
	exit 3
}
if [ ! -s "$abs_out" ]; then
	echo "$0: chromium não gerou $abs_out" >&2
	tail -n 20 "$profile/chromium.log" >&2
	exit 3
fi
echo "$abs_out"
