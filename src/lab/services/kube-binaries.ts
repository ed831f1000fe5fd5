// SPDX-License-Identifier: Apache-2.0
/** The Kubernetes binaries the lab runs, built once per version by scripts/ensure-kube-bins.sh. */
export { kubeBinaries } from '../../platform/kube/binaries.ts';
