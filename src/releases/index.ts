// SPDX-License-Identifier: Apache-2.0
// The releases layer: discovery and its cache, signatures, publishing.

// discovery and its cache
export * from './discovery/index.ts';
export * from './cache/index.ts';

// signatures and publishing
export * from './signatures/index.ts';
export * from './publish.ts';
