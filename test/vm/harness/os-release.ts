// SPDX-License-Identifier: Apache-2.0
/**
 * OS releases for the real-machine scenarios: built once per version by `molt image build`'s
 * own code (cached by content under .molt/images, so a warm run takes seconds) and published to
 * the real docker-registry as installer images. Broken releases are made from good ones the way a
 * bad release really happens: a kernel command line that panics (`rdinit=` naming nothing, so
 * the kernel cannot find its root and panics), one that hangs in the initramfs (`break=premount`:
 * initramfs-tools drops to a shell), one whose systemd starts in emergency mode
 * (`systemd.unit=emergency.target`, as after a failed mount: sulogin waits for a console and PID 1
 * keeps petting the watchdog), or a root filesystem with a unit that fails (the system is
 * `degraded` and never healthy), or a root filesystem changed after it was built (`tampered`: one
 * byte of rootfs.img changed after the build, the cmdline's root hash left as built).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildImage } from '../../../src/image/build/build.ts';
import { parseBuildOptions } from '../../../src/image/build/options.ts';
import type { OciRegistryClient } from '../../../src/oci/index.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';

const repoRoot = join(import.meta.dirname, '../../..');
/** Shared with `molt image build`'s default cache, so the demo, the lab and tests reuse builds. */
export const imageCache = process.env['MOLT_IMAGE_CACHE'] ?? join(repoRoot, '.molt/images');

export type Breakage = 'none' | 'panic' | 'hang' | 'emergency' | 'unhealthy' | 'tampered';

/**
 * Where `tampered` changes rootfs.img: inside the squashfs's first block, past its 96-byte
 * superblock — squashfs reads the block at mount but never looks at this byte, dm-verity hashes
 * the whole block, so only the verified boot notices.
 */
export const TamperedByte = 2048;

export interface OsRelease {
  readonly version: string;
  readonly dir: string;
  readonly artifacts: Readonly<Record<string, Uint8Array>>;
}

/** Units of the `unhealthy` overlay: one that always fails, wanted by multi-user.target. */
async function unhealthyOverlay(): Promise<string> {
  const dir = join(imageCache, 'overlays', 'unhealthy');
  const unit = join(dir, 'etc/systemd/system/molt-test-broken.service');
  await mkdir(join(dir, 'etc/systemd/system'), { recursive: true });
  await writeFile(
    unit,
    [
      '[Unit]',
      'Description=A service of this release that never starts (tests: never healthy)',
      '[Service]',
      'Type=oneshot',
      'ExecStart=/bin/false',
      '[Install]',
      'WantedBy=multi-user.target',
      '',
    ].join('\n'),
  );
  return dir;
}

/** Build (or find in the cache) release `version`; `log` gets the builder's progress. */
export async function osRelease(
  version: string,
  breakage: Breakage = 'none',
  log: (line: string) => void = () => {},
): Promise<OsRelease> {
  const out = join(
    imageCache,
    'releases',
    `${version}${breakage === 'none' ? '' : `-${breakage}`}`,
  );
  const extra =
    breakage === 'unhealthy'
      ? ['--overlay', await unhealthyOverlay(), '--enable', 'molt-test-broken.service']
      : [];
  const options = parseBuildOptions(
    ['--version', version, '--out', out, '--cache', imageCache, ...extra],
    process.env,
  );
  if (options === null) throw new Error('unreachable: no --help');
  const summary = await buildImage(options, log);
  const artifacts: Record<string, Uint8Array> = {};
  for (const name of ['vmlinuz', 'initrd.img', 'rootfs.img'])
    artifacts[name] = await readFile(join(out, name));
  const rootfs = artifacts['rootfs.img'];
  if (breakage === 'tampered' && rootfs !== undefined)
    rootfs[TamperedByte] = (rootfs[TamperedByte] ?? 0) ^ 0xff;
  const cmdline = summary.cmdline;
  artifacts['cmdline'] = new TextEncoder().encode(
    breakage === 'panic'
      ? `${cmdline} rdinit=/molt-test-no-init`
      : breakage === 'hang'
        ? `${cmdline} break=premount`
        : breakage === 'emergency'
          ? `${cmdline} systemd.unit=emergency.target`
          : cmdline,
  );
  return { version, dir: out, artifacts };
}

/** Push `release` to `repository:tag`; returns the reference agents pull. */
export async function publish(
  client: OciRegistryClient,
  to: { readonly host: string; readonly repository: string; readonly tag: string },
  release: OsRelease,
): Promise<string> {
  const { host: registryHost, repository, tag } = to;
  await pushInstallerImage(client, repository, tag, {
    version: release.version,
    artifacts: release.artifacts,
  });
  return `${registryHost}/${repository}:${tag}`;
}
