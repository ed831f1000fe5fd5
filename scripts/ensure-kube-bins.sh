#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the real Kubernetes control plane molt's tests and lab run — kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and etcd 3.5 — from the Go module proxy with the
# ordinary `go` client, into a cache outside the repository keyed by version. Idempotent: when the
# binaries are cached it prints their directory and exits in well under a second.
#
# Why a wrapper module: `go install k8s.io/kubernetes/cmd/...@v1.x` is refused because the release's
# go.mod replaces every staging module with a local path (golang/go#44840). The wrapper requires the
# release and replaces each staging module (read from the release's own go.mod, never hard-coded)
# with its published v0.x.y twin. etcd gets its own wrapper so Kubernetes' newer gRPC is not forced
# onto it by minimal version selection. See docs/kubernetes.md for measured cost.
#
# Usage: ensure-kube-bins.sh [VERSION|--all]. VERSION (e.g. v1.35.4) builds that Kubernetes with
# the pinned etcd; none builds KUBERNETES from kube-versions.env; --all builds KUBERNETES_PREVIOUS
# and KUBERNETES (the upgrade tests need both) and prints both directories, previous first.
# Prints the binary directory on stdout (last line); progress goes to stderr. Builds only what is
# missing: a cache from before etcdutl was added gets etcdutl alone.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=kube-versions.env
source scripts/kube-versions.env
if [ "${1:-}" = "--all" ]; then
  bash "$0" "$KUBERNETES_PREVIOUS"
  exec bash "$0" "$KUBERNETES"
fi
if [ -n "${1:-}" ]; then
  [[ "$1" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || {
    echo "molt: MOLT_INVALID_VERSION: '$1' is not a Kubernetes version like v1.36.3" >&2
    exit 2
  }
  KUBERNETES="$1"
fi

CACHE="${MOLT_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/molt/kube}"
OUT="$CACHE/$KUBERNETES-etcd$ETCD"
KUBE_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
ETCD_BINS=(etcd etcdutl)

have() { for b in "$@"; do [ -x "$OUT/$b" ] || return 1; done; }
have_all() { have "${KUBE_BINS[@]}" "${ETCD_BINS[@]}"; }
if have_all; then echo "$OUT"; exit 0; fi

command -v go >/dev/null || {
  echo "molt: MOLT_KUBE_NO_GO: building Kubernetes needs Go (https://go.dev/dl); none on PATH" >&2
  exit 3
}
mkdir -p "$CACHE"
# One builder at a time: a second caller (another test run, the demo) waits for the first.
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
  echo "molt: another build of the Kubernetes binaries is running; waiting for it" >&2
  flock 9
  if have_all; then echo "$OUT"; exit 0; fi
fi

started=$(date +%s)
echo "molt: building Kubernetes $KUBERNETES and etcd $ETCD (what is missing of them) from the Go module proxy, once per" \
  "version (measured cold on 2 cores: see docs/kubernetes.md; later runs take well under a second)" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"; [ -z "${hb:-}" ] || kill "$hb" 2>/dev/null || true' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
stage() { echo "molt: [$(($(date +%s) - started))s] $*" >&2; }
# A progress bar for a step that reports nothing itself: elapsed against the time it took when
# measured (docs/kubernetes.md, 2 cores), every 30 s, capped at 99 % — honest, not precise.
heartbeat() {
  local expect=$1 label=$2 from
  from=$(date +%s)
  while sleep 30; do
    local e=$(($(date +%s) - from)) pct bar
    pct=$((e * 100 / expect)); [ "$pct" -gt 99 ] && pct=99
    bar="$(printf '%*s' $((pct / 5)) '' | tr ' ' '#')$(printf '%*s' $((20 - pct / 5)) '' | tr ' ' '.')"
    stage "$label [$bar] ~$pct% ($((e / 60)) min of about $((expect / 60)) min on 2 cores)"
  done
}

# --- Kubernetes -------------------------------------------------------------------------------
rm -rf "$OUT.partial" && mkdir -p "$OUT.partial"
for b in "${KUBE_BINS[@]}" "${ETCD_BINS[@]}"; do [ ! -x "$OUT/$b" ] || cp "$OUT/$b" "$OUT.partial/"; done
build_kube() {
  stage "resolving k8s.io/kubernetes@$KUBERNETES"
  mkdir -p "$work/kube" && cd "$work/kube" || return 1
  go mod init molt.local/kube-bins >/dev/null 2>&1
  gomod="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  go_line="$(awk '$1 == "go" { print $2; exit }' "$gomod")"
  staging="v0.${KUBERNETES#v1.}"
  go mod edit -go="$go_line" -require="k8s.io/kubernetes@$KUBERNETES"
  godebug="$(awk '$1 == "godebug" && $2 ~ /^default=/ { print $2; exit }' "$gomod")"
  [ -z "$godebug" ] || go mod edit -godebug="$godebug"
  count=0
  while read -r mod; do
    go mod edit -replace="$mod=$mod@$staging"
    count=$((count + 1))
  done < <(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$gomod")
  stage "replaced $count staging modules with $staging; downloading modules"
  cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
  pkgs=()
  for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  go get "${pkgs[@]/%/@$KUBERNETES}" >/dev/null 2>&1 || go get "${pkgs[@]}"
  minor="${KUBERNETES#v1.}"; minor="${minor%%.*}"
  ldf="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$KUBERNETES -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  done
  stage "compiling ${cmds[*]} (the long part)"
  heartbeat 876 "compiling Kubernetes" 9>&- & hb=$!
  go build -trimpath -ldflags "$ldf" -o "$OUT.partial/" "${pkgs[@]}"
  kill "$hb" 2>/dev/null || true
}
if ! have "${KUBE_BINS[@]}"; then build_kube; fi

# --- etcd -------------------------------------------------------------------------------------
# etcd (the server) and etcdutl (snapshot restore: `molt cluster recover`) from one wrapper module.
build_etcd() {
  stage "compiling etcd and etcdutl $ETCD"
  mkdir -p "$work/etcd" && cd "$work/etcd" || return 1
  go mod init molt.local/etcd-bin >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@$ETCD" "go.etcd.io/etcd/etcdutl/v3@$ETCD" >/dev/null 2>&1
  heartbeat 140 "compiling etcd" 9>&- & hb=$!
  go build -trimpath -ldflags "-s -w" -o "$OUT.partial/etcd" go.etcd.io/etcd/server/v3
  go build -trimpath -ldflags "-s -w" -o "$OUT.partial/etcdutl" go.etcd.io/etcd/etcdutl/v3
  kill "$hb" 2>/dev/null || true
}
if ! have "${ETCD_BINS[@]}"; then build_etcd; fi

rm -rf "$OUT" && mv "$OUT.partial" "$OUT"
stage "done: $OUT"
echo "$OUT"
