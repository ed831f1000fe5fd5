#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the real Kubernetes control plane molt's tests and lab run — kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and etcd 3.5 with etcdutl — from the Go module
# proxy with the ordinary `go` client, into a cache outside the repository keyed by version.
# Idempotent: when the binaries are cached it prints their directory and exits in well under a second.
#
# Why a wrapper module: `go install k8s.io/kubernetes/cmd/...@v1.x` is refused because the release's
# go.mod replaces every staging module with a local path (golang/go#44840). The wrapper requires the
# release and replaces each staging module (read from the release's own go.mod, never hard-coded)
# with its published v0.x.y twin. etcd gets its own wrapper so Kubernetes' newer gRPC is not forced
# onto it by minimal version selection. See docs/kubernetes.md for measured cost.
#
# Usage: ensure-kube-bins.sh [VERSION|--previous|--all]. VERSION (e.g. v1.35.4) builds that
# Kubernetes with the pinned etcd; none builds KUBERNETES from kube-versions.env; --previous builds
# KUBERNETES_PREVIOUS (the upgrade tests' starting version: a test runner may build it in the
# background while the tests that need only KUBERNETES run); --all builds KUBERNETES, then
# KUBERNETES_PREVIOUS, and prints both directories in that order.
# Prints the binary directory on stdout (last line); progress goes to stderr.
#
# Layout: etcd and etcdutl are built once per etcd version into $CACHE/etcd-$ETCD and hard-linked
# into each Kubernetes version's directory, $CACHE/$KUBERNETES-etcd$ETCD, which therefore holds all
# six binaries (callers take one directory; the agent finds etcdutl beside etcd). A version
# directory from before that split is complete and used as it is; its etcd seeds the shared one.
# Locks: one per Kubernetes version and one for etcd, always taken in that order, so builds of two
# versions run side by side and a caller waits only for a build of the version it asked for.

# go_build_progress LABEL LINK_PERCENT BIN... -- GO_BUILD_ARGS...
# `go build -v GO_BUILD_ARGS` with a progress bar on stderr that follows the build: the packages
# `go list` calls stale (those the build will compile, main packages aside) are counted off as
# `go build -v` names them, each weighed by its source's size; the last LINK_PERCENT is for
# linking, counted off as each BIN (the binaries the build writes) appears. 100 % only once every
# BIN exists. A line every MOLT_PROGRESS_INTERVAL seconds (30) or whenever the bar moves 5 points;
# go's other output (errors) passes through. Returns go's status.
go_build_progress() {
  local label=$1 link=$2
  shift 2
  local bins=() listargs=() skip=
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1") && shift; done
  shift
  for a in "$@"; do
    if [ -n "$skip" ]; then skip= && continue; fi
    case $a in
      -o) skip=1 ;;
      -o=*) ;;
      *) listargs+=("$a") ;;
    esac
  done
  local t0=${started:-$(date +%s)} from interval=${MOLT_PROGRESS_INTERVAL:-30}
  from=$(date +%s)
  local tmp
  tmp=$(mktemp -d)
  gbtmp=$tmp
  touch "$tmp/start"
  # The packages the build will compile, weighed by the bytes of their Go files plus one: a proxy
  # for their compile time, which a count of packages is not (Kubernetes' generated API packages
  # are megabytes each, most others kilobytes). A main package's name is printed too; its compile
  # is small and goes with the link.
  go list -deps -f '{{if .Stale}}{{if eq .Name "main"}}m{{else}}p{{end}}{{"\t"}}{{.ImportPath}}{{range .GoFiles}}{{"\t"}}{{$.Dir}}/{{.}}{{end}}{{"\n"}}{{end}}' \
    "${listargs[@]}" >"$tmp/pkgs" 2>/dev/null || true
  printf '0\t\n' >"$tmp/sizes"
  awk -F'\t' '{ for (i = 3; i <= NF; i++) print $i }' "$tmp/pkgs" |
    xargs -r -d '\n' stat --printf '%s\t%n\n' >>"$tmp/sizes" 2>/dev/null || true
  local -A weight=()
  local kind pkg bytes total=0 compiled=0 all=0 sofar=0
  while read -r kind pkg bytes; do
    case $kind in
      p) weight[$pkg]=$bytes && total=$((total + 1)) && all=$((all + bytes)) ;;
      m) weight[$pkg]=0 ;;
    esac
  done < <(awk -F'\t' 'NR == FNR { size[$2] = $1; next }
    { b = 1; for (i = 3; i <= NF; i++) b += size[$i]; print $1, $2, b }' "$tmp/sizes" "$tmp/pkgs")
  local shown=-100 last=$from line now pct written b bar
  gbp_report() {
    printf -v now '%(%s)T' -1
    written=0
    for b in "${bins[@]}"; do [ ! "$b" -nt "$tmp/start" ] || written=$((written + 1)); done
    if [ "$all" -gt 0 ]; then pct=$((sofar * (100 - link) / all)); else pct=$((100 - link)); fi
    pct=$((pct + written * link / ${#bins[@]}))
    [ "$written" -eq "${#bins[@]}" ] || [ "$pct" -le 99 ] || pct=99
    [ "${1:-}" = now ] || [ "$pct" -ge $((shown + 5)) ] || [ $((now - last)) -ge "$interval" ] || return 0
    shown=$pct last=$now
    bar="$(printf '%*s' $((pct / 5)) '' | tr ' ' '#')$(printf '%*s' $((20 - pct / 5)) '' | tr ' ' '.')"
    echo "molt: [$((now - t0))s] $label [$bar] $pct% ($compiled of $total packages compiled," \
      "$written of ${#bins[@]} binaries linked; $(((now - from) / 60)) min)" >&2
  }
  mkfifo "$tmp/v"
  # The lock descriptors stay with this script: a build it no longer waits for holds no lock.
  go build -v "$@" 2>"$tmp/v" 8>&- 9>&- &
  gobuild=$!
  local fd rc=0
  exec {fd}<"$tmp/v"
  gbp_report now
  while :; do
    if IFS= read -r -t 5 -u "$fd" line; then
      if [ -z "$line" ]; then
        echo >&2
      elif [ "${weight[$line]:-0}" -gt 0 ]; then
        bytes=${weight[$line]}
        sofar=$((sofar + bytes))
        weight[$line]=0
        compiled=$((compiled + 1))
      elif [ -z "${weight[$line]:-}" ]; then
        echo "$line" >&2
      fi
    elif [ $? -le 128 ]; then
      # The end of go's output; a last line without a newline is still go's to say.
      [ -z "$line" ] || echo "$line" >&2
      break
    fi
    gbp_report
  done
  exec {fd}<&-
  wait "$gobuild" || rc=$?
  gobuild=
  if [ "$rc" -eq 0 ]; then gbp_report now; fi
  rm -rf "$tmp"
  gbtmp=
  return "$rc"
}

# kube_wrapper_module NAME VERSION PKG...
# In the current (empty) directory, a wrapper module NAME that requires k8s.io/kubernetes@VERSION
# with every staging module its go.mod replaces by a local path (read from that go.mod, never
# hard-coded) replaced by the published v0.x.y twin, its go and godebug lines taken over, and the
# modules PKG... need downloaded. Stages through the caller's `stage`.
kube_wrapper_module() {
  local name=$1 version=$2
  shift 2
  local gomod go_line godebug staging count=0 mod
  stage "resolving k8s.io/kubernetes@$version"
  go mod init "$name" >/dev/null 2>&1
  gomod="$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  go_line="$(awk '$1 == "go" { print $2; exit }' "$gomod")"
  staging="v0.${version#v1.}"
  go mod edit -go="$go_line" -require="k8s.io/kubernetes@$version"
  godebug="$(awk '$1 == "godebug" && $2 ~ /^default=/ { print $2; exit }' "$gomod")"
  [ -z "$godebug" ] || go mod edit -godebug="$godebug"
  while read -r mod; do
    go mod edit -replace="$mod=$mod@$staging"
    count=$((count + 1))
  done < <(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$gomod")
  stage "replaced $count staging modules with $staging; downloading modules"
  go get "${@/%/@$version}" >/dev/null 2>&1 || go get "$@"
}

# kube_ldflags VERSION: -ldflags for a Kubernetes command of VERSION, stripped, whose --version
# (component-base) and client-go's user agent tell the truth.
kube_ldflags() {
  local minor="${1#v1.}" ldf="-s -w" p
  minor="${minor%%.*}"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$1 -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  done
  printf '%s' "$ldf"
}

# --- the build kit both scripts share (sourced by scripts/ensure-node-bins.sh too) ---------------

# kube_version_arg [VERSION|--previous]: KUBERNETES from the script's argument (none: the
# kube-versions.env the caller sourced; --previous: KUBERNETES_PREVIOUS; exit 2 for anything else
# that is not a version), and CACHE, the directory both scripts build into.
kube_version_arg() {
  case "$1" in
    --previous) KUBERNETES="$KUBERNETES_PREVIOUS" ;;
    "") ;;
    *)
      [[ "$1" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || {
        echo "molt: MOLT_INVALID_VERSION: '$1' is not a Kubernetes version like v1.36.3" >&2
        exit 2
      }
      KUBERNETES="$1"
      ;;
  esac
  CACHE="${MOLT_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/molt/kube}"
}

have() {
  local d=$1
  shift
  for b in "$@"; do [ -x "$d/$b" ] || return 1; done
}
# Hard link (one copy on disk); a copy where the file system refuses one.
place() { ln -f "$1" "$2" 2>/dev/null || cp "$1" "$2"; }
stage() { echo "molt: [$(($(date +%s) - started))s] $*" >&2; }
need_go() {
  command -v go >/dev/null || {
    echo "molt: MOLT_KUBE_NO_GO: building $building needs Go (https://go.dev/dl); none on PATH" >&2
    exit 3
  }
}

# build_begin WHAT: once the caller holds its lock and must build WHAT (named by need_go): the
# clock stage counts from, a scratch directory ($work), and the traps that remove it and stop a go
# build still running (go_build_progress sets $gobuild while one runs: it is stopped with this
# script, not left to finish alone).
build_begin() {
  building=$1
  started=$(date +%s)
  gobuild= gbtmp=
  work="$(mktemp -d)"
  trap 'rm -rf "$work" ${gbtmp:+"$gbtmp"}; [ -z "$gobuild" ] || kill "$gobuild" 2>/dev/null || true' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
}

# ensure_component WHAT DIR BUILD BIN...: DIR holds BIN... or BUILD DEST puts them into DEST
# (DIR.partial, moved to DIR once complete; BUILD runs in a scratch directory of its own), under
# DIR's own lock (descriptor 8, released once DIR is complete). BUILD calls need_go if it compiles.
ensure_component() {
  local what=$1 dir=$2 build=$3 t0
  shift 3
  if have "$dir" "$@"; then return 0; fi
  exec 8>"$CACHE/.lock-${dir##*/}"
  if ! flock -n 8; then
    stage "another build of $what is running; waiting for it"
    flock 8
  fi
  if ! have "$dir" "$@"; then
    t0=$(date +%s)
    rm -rf "$dir.partial" && mkdir -p "$dir.partial"
    mkdir -p "$work/${dir##*/}" && cd "$work/${dir##*/}"
    "$build" "$dir.partial"
    cd - >/dev/null
    rm -rf "$dir" && mv "$dir.partial" "$dir"
    stage "$what ready in $(($(date +%s) - t0))s: $dir"
  fi
  exec 8>&-
}

# Sourced (the tests of the progress bar, scripts/ensure-node-bins.sh): the functions alone.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then return 0; fi

set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=kube-versions.env
source scripts/kube-versions.env
if [ "${1:-}" = --all ]; then
  bash "$0" "$KUBERNETES"
  exec bash "$0" "$KUBERNETES_PREVIOUS"
fi
kube_version_arg "${1:-}"

OUT="$CACHE/$KUBERNETES-etcd$ETCD"
ETCD_DIR="$CACHE/etcd-$ETCD"
KUBE_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
ETCD_BINS=(etcd etcdutl)

have_all() { have "$OUT" "${KUBE_BINS[@]}" "${ETCD_BINS[@]}"; }
# The fast path takes no lock: a build of another version (or of this one) never delays it.
if have_all; then echo "$OUT"; exit 0; fi

mkdir -p "$CACHE"
# One builder per version: a second caller for it (another test run, the demo) waits for the first;
# a caller for another version does not.
exec 9>"$CACHE/.lock-$KUBERNETES"
if ! flock -n 9; then
  echo "molt: another build of Kubernetes $KUBERNETES is running; waiting for it" >&2
  flock 9
  if have_all; then echo "$OUT"; exit 0; fi
fi

build_begin Kubernetes

# --- etcd, once per etcd version ---------------------------------------------------------------
# etcd (the server) and etcdutl (snapshot restore: `molt cluster recover`) from one wrapper module.
build_etcd() {
  local dest=$1 old
  # A version directory from before the shared one already has this etcd: no need to build it.
  for old in "$CACHE"/v*-etcd"$ETCD"; do
    if have "$old" "${ETCD_BINS[@]}"; then
      for b in "${ETCD_BINS[@]}"; do place "$old/$b" "$dest/$b"; done
      stage "etcd $ETCD taken from $old"
      return 0
    fi
  done
  need_go
  stage "compiling etcd and etcdutl $ETCD"
  go mod init molt.local/etcd-bin >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@$ETCD" "go.etcd.io/etcd/etcdutl/v3@$ETCD" >/dev/null 2>&1
  # `go build -o DIR/` names server/v3's binary after its path: server.
  go_build_progress "compiling etcd" 5 "$dest"/{server,etcdutl} -- \
    -trimpath -ldflags "-s -w" -o "$dest/" go.etcd.io/etcd/server/v3 go.etcd.io/etcd/etcdutl/v3
  mv "$dest/server" "$dest/etcd"
}

# --- Kubernetes, once per version --------------------------------------------------------------
build_kube() {
  local dest=$1
  need_go
  stage "building Kubernetes $KUBERNETES from the Go module proxy, once per version (measured cold" \
    "on 2 cores: see docs/kubernetes.md; later runs take well under a second)"
  mkdir -p "$work/kube" && cd "$work/kube"
  pkgs=()
  for c in "${KUBE_BINS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  kube_wrapper_module molt.local/kube-bins "$KUBERNETES" "${pkgs[@]}"
  stage "compiling ${KUBE_BINS[*]} (the long part; linking is the last 5 % of the bar)"
  go_build_progress "compiling Kubernetes" 5 "${KUBE_BINS[@]/#/$dest/}" -- \
    -trimpath -ldflags "$(kube_ldflags "$KUBERNETES")" -o "$dest/" "${pkgs[@]}"
  cd - >/dev/null
}

ensure_component "etcd $ETCD" "$ETCD_DIR" build_etcd "${ETCD_BINS[@]}"
if have "$OUT" "${KUBE_BINS[@]}"; then
  # Kubernetes is there (a cache from before etcdutl, or one whose etcd went missing): add etcd.
  for b in "${ETCD_BINS[@]}"; do
    place "$ETCD_DIR/$b" "$OUT/.$b.partial" && mv -f "$OUT/.$b.partial" "$OUT/$b"
  done
else
  rm -rf "$OUT.partial" && mkdir -p "$OUT.partial"
  build_kube "$OUT.partial"
  for b in "${ETCD_BINS[@]}"; do place "$ETCD_DIR/$b" "$OUT.partial/$b"; done
  rm -rf "$OUT" && mv "$OUT.partial" "$OUT"
fi
stage "done: $OUT"
echo "$OUT"
