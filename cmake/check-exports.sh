#!/bin/sh
# check-exports.sh LIBRARY SONAME [HEADER]
# Fails if LIBRARY exports a function or data symbol outside the coffer_
# namespace, if its SONAME is not SONAME, or if a function HEADER declares
# with COFFER_API is not exported.
set -eu

lib=$1
want_soname=$2
header=${3:-}
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Defined dynamic symbols of function/data kinds (skips absolute 'A' ones).
nm -D --defined-only "$lib" |
    awk 'NF >= 3 && $2 ~ /^[BDGRSTVWiu]$/ { print $3 }' |
    sed 's/@.*//' | sort -u >"$tmp/exported"

# Linker-made and sanitizer-runtime symbols are not part of the API.
grep -v -E '^coffer_' "$tmp/exported" |
    grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' |
    grep -v -E '^(_*(asan|ubsan|lsan|sanitizer|odr_asan)|__(start|stop)_asan_)' >"$tmp/foreign" || true
if [ -s "$tmp/foreign" ]; then
    echo "$lib exports symbols outside the coffer_ namespace:"
    sed 's/^/  /' "$tmp/foreign"
    status=1
fi

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" != "$want_soname" ]; then
    echo "$lib has SONAME '${soname:-none}', expected '$want_soname'"
    status=1
fi

if [ -n "$header" ]; then
    sed -n 's/^COFFER_API[^(]*[ *]\(coffer_[A-Za-z0-9_]*\)(.*/\1/p' "$header" |
        sort -u >"$tmp/declared"
    comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/missing"
    if [ -s "$tmp/missing" ]; then
        echo "$lib lacks $(wc -l <"$tmp/missing") function(s) declared in $header:"
        sed 's/^/  /' "$tmp/missing"
        status=1
    fi
fi

if [ "$status" -eq 0 ]; then
    echo "$lib: $(wc -l <"$tmp/exported") exported symbols, all coffer_*; SONAME $soname"
fi
exit "$status"
