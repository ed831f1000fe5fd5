// SPDX-License-Identifier: Apache-2.0
export { defaultConcurrency, defaultPlatform, discoverReleases } from './discover.ts';
export { keyFingerprint } from './signatures.ts';
export type {
  DiscoverOptions,
  DiscoveryPhase,
  DiscoveryProgress,
  DiscoveryResult,
} from './types.ts';
