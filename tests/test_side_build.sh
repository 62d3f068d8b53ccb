#!/bin/sh
# test_side_build.sh: scripts/side-build.sh (the sanitizer pass of scripts/test.sh, make fuzz)
# says what it does while it does it: a line per phase (copying, configuring, building, the make
# targets) and, while building, a line every DOPPLER_PROGRESS_FILES files compiled; a failing
# build says so and exits 1. It printed nothing for the minutes its build took, and test.sh
# announced "about 20 s more" for a pass of 7 to 19 minutes. On a fake source tree (a configure
# that writes a Makefile of 23 echoed compilations): seconds.
set -u
top_srcdir=${top_srcdir:-.}
fail() { echo "FAIL: $*"; exit 1; }
command -v git > /dev/null 2>&1 || { echo "SKIP: git is not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-side-build-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/src"
cat > "$tmp/src/configure" <<'EOS'
#!/bin/sh
{
    printf 'all:\n'
    i=1
    while [ $i -le 22 ]; do printf '\t@echo "  CC       f%d.o"; touch f%d.o\n' $i $i; i=$((i + 1)); done
    printf '\t@echo "  CCLD     prog"\n\t@if [ -f broken ]; then echo "prog.c:1: error: broken" >&2; exit 1; fi\n'
    printf 'check:\n\t@echo "PASS: fake"\n'
} > Makefile
EOS
chmod +x "$tmp/src/configure"
(cd "$tmp/src" && git init -q . && git add configure && git -c user.name=t -c user.email=t@localhost commit -qm fake) || fail "git"
DOPPLER_PROGRESS_FILES=10 sh "$top_srcdir/scripts/side-build.sh" "$tmp/src" "$tmp/side" --enable-x -- check > "$tmp/out" 2>&1 \
    || { cat "$tmp/out"; fail "side-build.sh failed"; }
cat "$tmp/out"
for line in "copying the sources of $tmp/src" "configuring: '--enable-x'" "building (make" \
    "building: 10 files compiled or linked" "building: 20 files compiled or linked" "built (" "make check (" \
    "PASS: fake" "make check done ("; do
    grep -qF "$line" "$tmp/out" || fail "no line '$line'"
done
grep -q 'files compiled or linked' "$tmp/out" && ! grep -q 'building: 30 files' "$tmp/out" || fail "progress count"
grep -q '  CC  ' "$tmp/out" && fail "the compiler lines themselves are printed"
# a failing build: its error is printed, then "make failed", exit 1
touch "$tmp/src/broken"
(cd "$tmp/src" && git add broken && git -c user.name=t -c user.email=t@localhost commit -qm broken) || fail "git"
if sh "$top_srcdir/scripts/side-build.sh" "$tmp/src" "$tmp/side" -- check > "$tmp/out2" 2>&1; then cat "$tmp/out2"; fail "a failing build gave exit 0"; fi
grep -q 'prog.c:1: error: broken' "$tmp/out2" || { cat "$tmp/out2"; fail "the build's error is not printed"; }
grep -q 'make failed' "$tmp/out2" || { cat "$tmp/out2"; fail "no 'make failed' line"; }
# scripts/test.sh announces the sanitizer pass's real length at its start
grep -q '^ *echo ".*7 to 19 minutes' "$top_srcdir/scripts/test.sh" || fail "scripts/test.sh does not announce how long the sanitizer pass takes"
grep -q '20 s more' "$top_srcdir/scripts/test.sh" && fail "scripts/test.sh still says about 20 s"
exit 0
