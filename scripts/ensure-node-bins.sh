#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Kubernetes node runtime molt's OS images carry (`molt image build --kubernetes-node`):
# kubelet, containerd 2 with its runc shim and ctr, crictl and the CNI plugins a bridge network
# needs (bridge, host-local, loopback, portmap), from the Go module proxy with the ordinary `go`
# client, CGO_ENABLED=0 (static binaries), into the cache scripts/ensure-kube-bins.sh uses. runc is
# not here: the image takes Debian's. Idempotent: when everything is cached it prints the directory
# and exits in well under a second.
#
# Usage: ensure-node-bins.sh [VERSION|--previous]. VERSION (e.g. v1.35.4) is the kubelet's; none
# takes KUBERNETES from kube-versions.env, --previous KUBERNETES_PREVIOUS; containerd, the CNI
# plugins and crictl are kube-versions.env's for every kubelet. Prints the directory on stdout
# (last line); progress goes to stderr.
#
# Layout: each component is built once per its own version into $CACHE/containerd-$CONTAINERD,
# $CACHE/cni-$CNI_PLUGINS, $CACHE/crictl-$CRICTL and $CACHE/kubelet-$KUBERNETES, then hard-linked
# into $CACHE/node-$KUBERNETES-containerd$CONTAINERD: bin/ (kubelet, containerd,
# containerd-shim-runc-v2, ctr, crictl), cni/ (the plugins) and versions.json, which names all four
# versions; a directory whose versions.json names other CNI or crictl versions is assembled again.
# Locks: one for the node directory, then one per component, each taken in that order and the
# component's released once it is built, so two kubelet versions build side by side and share the
# rest. The kubelet's wrapper module and the build kit (a component's lock and .partial directory,
# the progress bar) are ensure-kube-bins.sh's, sourced.
# Measured cold times: docs/kubernetes.md.

# shellcheck source=ensure-kube-bins.sh
source "$(dirname "${BASH_SOURCE[0]}")/ensure-kube-bins.sh"

set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=kube-versions.env
source scripts/kube-versions.env
kube_version_arg "${1:-}"
OUT="$CACHE/node-$KUBERNETES-containerd$CONTAINERD"
CONTAINERD_DIR="$CACHE/containerd-$CONTAINERD"
CNI_DIR="$CACHE/cni-$CNI_PLUGINS"
CRICTL_DIR="$CACHE/crictl-$CRICTL"
KUBELET_DIR="$CACHE/kubelet-$KUBERNETES"
CONTAINERD_BINS=(containerd containerd-shim-runc-v2 ctr)
CNI_BINS=(bridge host-local loopback portmap)
VERSIONS_JSON="{\"kubernetes\":\"$KUBERNETES\",\"containerd\":\"$CONTAINERD\",\"cniPlugins\":\"$CNI_PLUGINS\",\"crictl\":\"$CRICTL\"}"

# Complete, and of the versions asked for ($(<file) reads without a process).
have_all() {
  have "$OUT/bin" kubelet "${CONTAINERD_BINS[@]}" crictl && have "$OUT/cni" "${CNI_BINS[@]}" &&
    [ -f "$OUT/versions.json" ] && [ "$(<"$OUT/versions.json")" = "$VERSIONS_JSON" ]
}
# The fast path takes no lock: a build of another version (or of this one) never delays it.
if have_all; then echo "$OUT"; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock-${OUT##*/}"
if ! flock -n 9; then
  echo "molt: another build of the node binaries for Kubernetes $KUBERNETES is running; waiting for it" >&2
  flock 9
  if have_all; then echo "$OUT"; exit 0; fi
fi

build_begin "the Kubernetes node binaries"

# go_get_wrapper NAME PKG@VERSION...: in the current (empty) directory, a module NAME requiring
# PKG's module: its own go.mod decides every dependency (minimal version selection over one root).
go_get_wrapper() {
  local name=$1
  shift
  need_go
  go mod init "$name" >/dev/null 2>&1
  stage "downloading modules for ${*##*/}"
  go get "$@" >/dev/null 2>&1 || go get "$@"
}

# containerd's Makefile builds with urfave_cli_no_docs and the shim with no_grpc too (it speaks
# ttrpc); the btrfs snapshotter needs cgo and drops out by its own build constraint.
build_containerd() {
  local dest=$1 m=github.com/containerd/containerd/v2 ldf
  go_get_wrapper molt.local/containerd-bins \
    "$m/cmd/containerd@$CONTAINERD" "$m/cmd/ctr@$CONTAINERD" "$m/cmd/containerd-shim-runc-v2@$CONTAINERD"
  ldf="-s -w -X $m/version.Version=$CONTAINERD -X $m/version.Package=$m"
  stage "compiling containerd and ctr $CONTAINERD"
  go_build_progress "compiling containerd" 5 "$dest"/{containerd,ctr} -- \
    -trimpath -tags urfave_cli_no_docs -ldflags "$ldf" -o "$dest/" "$m/cmd/containerd" "$m/cmd/ctr"
  stage "compiling containerd-shim-runc-v2 $CONTAINERD"
  go_build_progress "compiling containerd-shim-runc-v2" 5 "$dest/containerd-shim-runc-v2" -- \
    -trimpath -tags "urfave_cli_no_docs no_grpc" -ldflags "$ldf" -o "$dest/" "$m/cmd/containerd-shim-runc-v2"
}

build_cni() {
  local dest=$1 m=github.com/containernetworking/plugins pkgs
  pkgs=("$m/plugins/main/bridge" "$m/plugins/ipam/host-local" "$m/plugins/main/loopback" "$m/plugins/meta/portmap")
  go_get_wrapper molt.local/cni-bins "${pkgs[@]/%/@$CNI_PLUGINS}"
  stage "compiling the CNI plugins ${CNI_BINS[*]} $CNI_PLUGINS"
  go_build_progress "compiling the CNI plugins" 5 "${CNI_BINS[@]/#/$dest/}" -- \
    -trimpath -ldflags "-s -w -X $m/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS" -o "$dest/" "${pkgs[@]}"
}

build_crictl() {
  local dest=$1 m=sigs.k8s.io/cri-tools
  go_get_wrapper molt.local/crictl-bin "$m/cmd/crictl@$CRICTL"
  stage "compiling crictl $CRICTL"
  go_build_progress "compiling crictl" 5 "$dest/crictl" -- \
    -trimpath -ldflags "-s -w -X $m/pkg/version.Version=$CRICTL" -o "$dest/" "$m/cmd/crictl"
}

build_kubelet() {
  local dest=$1 pkg=k8s.io/kubernetes/cmd/kubelet
  need_go
  kube_wrapper_module molt.local/kubelet-bin "$KUBERNETES" "$pkg"
  stage "compiling kubelet $KUBERNETES (the long part; linking is the last 5 % of the bar)"
  go_build_progress "compiling kubelet" 5 "$dest/kubelet" -- \
    -trimpath -ldflags "$(kube_ldflags "$KUBERNETES")" -o "$dest/" "$pkg"
}

stage "building the node binaries for Kubernetes $KUBERNETES from the Go module proxy, each once per" \
  "version (measured cold on 2 cores: see docs/kubernetes.md; later runs take well under a second)"
ensure_component "containerd $CONTAINERD" "$CONTAINERD_DIR" build_containerd "${CONTAINERD_BINS[@]}"
ensure_component "the CNI plugins $CNI_PLUGINS" "$CNI_DIR" build_cni "${CNI_BINS[@]}"
ensure_component "crictl $CRICTL" "$CRICTL_DIR" build_crictl crictl
ensure_component "kubelet $KUBERNETES" "$KUBELET_DIR" build_kubelet kubelet

rm -rf "$OUT.partial" && mkdir -p "$OUT.partial/bin" "$OUT.partial/cni"
place "$KUBELET_DIR/kubelet" "$OUT.partial/bin/kubelet"
for b in "${CONTAINERD_BINS[@]}"; do place "$CONTAINERD_DIR/$b" "$OUT.partial/bin/$b"; done
place "$CRICTL_DIR/crictl" "$OUT.partial/bin/crictl"
for b in "${CNI_BINS[@]}"; do place "$CNI_DIR/$b" "$OUT.partial/cni/$b"; done
echo "$VERSIONS_JSON" >"$OUT.partial/versions.json"
rm -rf "$OUT" && mv "$OUT.partial" "$OUT"
stage "done: $OUT"
echo "$OUT"
