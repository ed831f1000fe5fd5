#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a real Cluster API management plane for molt's CAPI tests from the Go module
# proxy with the ordinary `go` client, into a cache outside the repository keyed by version
# (CLUSTER_API in capi-versions.env): the core manager (cluster-api-manager), the kubeadm control
# plane manager (KCP), the kubeadm bootstrap manager (CABPK) and CAPD (capd-manager, for its
# in-memory backend: no Docker needed), plus the CRD YAML they need (crds/<provider>/*.yaml, copied
# from the module cache's config/crd/bases). Idempotent: with the stamp file present it prints the
# directory and exits in well under a second.
#
# Why a wrapper module: `go install sigs.k8s.io/cluster-api/...@v1.14.2` is refused, as the release's
# go.mod replaces sigs.k8s.io/cluster-api/api with ./api (and the test module both with ../). The
# wrapper requires the test module and replaces both with their published twins of the same tag.
# Each binary gets its own -o: controlplane/kubeadm and bootstrap/kubeadm both default to `kubeadm`.
#
# Measured on this 2-core machine (Go 1.26.8, shared with other builds, load 4–7), 2026-11-27:
#   cold: 400 s (6 min 40 s; module cache already holding cluster-api, GOCACHE cold for it): core
#     244 s, KCP 54 s, CABPK 11 s, CAPD 82 s; the research measured 271–351 s from empty caches
#     (the Cluster API research, docs/adr/0014). 238 MB of binaries; GOCACHE grows about 1.7 GB.
#   rebuild with a warm GOCACHE (stamp removed): 23 s.   warm (stamp present): 0.003 s.
# Usage: ensure-capi-bins.sh. Prints the directory on stdout (last line); progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=capi-versions.env
source scripts/capi-versions.env

CACHE="${MOLT_CAPI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/molt/capi}"
OUT="$CACHE/$CLUSTER_API"
STAMP="$OUT/.complete"
if [ -f "$STAMP" ]; then echo "$OUT"; exit 0; fi

command -v go >/dev/null || {
  echo "molt: MOLT_KUBE_NO_GO: building Cluster API needs Go (https://go.dev/dl); none on PATH" >&2
  exit 3
}
mkdir -p "$CACHE"
# One builder at a time: a second caller waits for the first.
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
  echo "molt: another build of the Cluster API binaries is running; waiting for it" >&2
  flock 9
  if [ -f "$STAMP" ]; then echo "$OUT"; exit 0; fi
fi

started=$(date +%s)
stage() { echo "molt: [$(($(date +%s) - started))s] $*" >&2; }
stage "building Cluster API $CLUSTER_API from the Go module proxy, once per version (cold about 5 min on 2 cores)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

V=sigs.k8s.io/cluster-api
cd "$work"
go mod init molt.local/capi-bins >/dev/null 2>&1
go mod edit -go=1.26.0 -require="$V/test@$CLUSTER_API" \
  -replace="$V=$V@$CLUSTER_API" -replace="$V/api=$V/api@$CLUSTER_API"
# name:package — the managers the slow suite runs.
BINS=(
  "cluster-api-manager:$V/core"
  "kubeadm-control-plane-manager:$V/controlplane/kubeadm"
  "kubeadm-bootstrap-manager:$V/bootstrap/kubeadm"
  "capd-manager:$V/test/infrastructure/docker"
)
pkgs=()
for b in "${BINS[@]}"; do pkgs+=("${b#*:}@$CLUSTER_API"); done
stage "downloading modules"
go get "${pkgs[@]}" >/dev/null 2>&1 || go get "${pkgs[@]}"

minor="${CLUSTER_API#v1.}"; minor="${minor%%.*}"
ldf="-s -w -X $V/version.gitVersion=$CLUSTER_API -X $V/version.gitMajor=1 -X $V/version.gitMinor=$minor"
rm -rf "$OUT" && mkdir -p "$OUT/crds"
for b in "${BINS[@]}"; do
  name="${b%%:*}" pkg="${b#*:}"
  stage "compiling $name"
  nice -n 10 go build -p 2 -trimpath -ldflags "$ldf" -o "$OUT/$name" "$pkg"
done

# The CRDs, straight from the module cache (what kustomize would build into each provider's manifest).
core_dir="$(go list -m -f '{{.Dir}}' "$V")"
test_dir="$(go list -m -f '{{.Dir}}' "$V/test")"
for c in "core:$core_dir/core/config/crd/bases" \
  "kubeadm-control-plane:$core_dir/controlplane/kubeadm/config/crd/bases" \
  "kubeadm-bootstrap:$core_dir/bootstrap/kubeadm/config/crd/bases" \
  "capd:$test_dir/infrastructure/docker/config/crd/bases"; do
  mkdir -p "$OUT/crds/${c%%:*}"
  cp "${c#*:}"/*.yaml "$OUT/crds/${c%%:*}/"
  chmod 644 "$OUT/crds/${c%%:*}"/*.yaml
done
touch "$STAMP"
stage "done: $OUT"
echo "$OUT"
