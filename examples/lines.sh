#!/bin/sh
# lines.sh prints, as a Markdown table, the non-blank, non-comment lines of
# each example (main.go) and of its standard-library twin (std.go).
# Run from the repository's root: `make example-lines`, or sh examples/lines.sh.
set -e
count() {
	awk '{ sub(/^[ \t]+/, "") } $0 != "" && $0 !~ /^\/\// { n++ } END { print n + 0 }' "$1"
}
echo "| program | uvevent | std twin | uvevent − std |"
echo "|---|---:|---:|---:|"
for d in examples/*/; do
	name=$(basename "$d")
	[ -f "$d/main.go" ] && [ -f "$d/std.go" ] || continue
	u=$(count "$d/main.go")
	s=$(count "$d/std.go")
	echo "| $name | $u | $s | $((u - s)) |"
done
