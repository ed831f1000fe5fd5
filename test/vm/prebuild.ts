// SPDX-License-Identifier: Apache-2.0
// Builds (or finds in the cache) every OS release the VM scenarios publish, one after another,
// before the suites start in parallel: they would otherwise build the same images at once.
import { osRelease } from './harness/os-release.ts';

const started = performance.now();
for (const [version, breakage] of [
  ['1.0.0', 'none'],
  ['1.1.0', 'none'],
  ['1.2.0', 'unhealthy'],
] as const) {
  const t = performance.now();
  const r = await osRelease(version, breakage);
  const mb = ((r.artifacts['rootfs.img']?.byteLength ?? 0) / 1e6).toFixed(1);
  console.error(
    `os release ${version}${breakage === 'none' ? '' : ` (${breakage})`}: rootfs ${mb} MB, ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
}
console.error(`os releases ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
