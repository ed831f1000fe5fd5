// SPDX-License-Identifier: Apache-2.0
/**
 * What each layer of the operator image holds, as entries (entries.ts). Three layers, in the
 * order they change least often, so a registry or node that has the older image fetches only
 * what moved:
 *
 * 1. Debian: the extracted packages without manuals, docs (the copyright files stay), locales or
 *    package-manager state; `/etc/passwd` and `/etc/group` with root and `nonroot` (65532),
 *    nonroot's home, a sticky `/tmp`, and the CA bundle update-ca-certificates would have written;
 * 2. Node 24 at `/usr/local/bin/node`;
 * 3. molt at `/usr/lib/molt`, and `/usr/local/bin/molt` for `kubectl exec … molt …`.
 */
import { MoltDir } from '../build/molt-package.ts';
import { comparePaths, type LayerEntry } from './entries.ts';

/** The user the operator runs as: distroless's `nonroot`, a uid no host account is likely to have. */
export const NonRoot = { uid: 65532, gid: 65532, name: 'nonroot', home: 'home/nonroot' } as const;

/** Paths of the Debian tree left out of the image (dpkg's path filters of the OS image, and more). */
const dropped: readonly RegExp[] = [
  /^dev\/./,
  /^usr\/share\/(man|info|lintian|linda|bash-completion|gdb|pixmaps)\//,
  /^usr\/share\/locale\/(?!locale\.alias$)./,
  /^usr\/share\/doc\/[^/]+\/(?!copyright$)./,
  /^var\/(cache|log)\/./,
  /^var\/lib\/(apt|dpkg)\//,
  /^etc\/apt\//,
];

const keep = (e: LayerEntry): boolean => !dropped.some((r) => r.test(e.path));

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** The CA bundle: Mozilla's certificates in name order, one PEM after another. */
export function caBundle(entries: readonly LayerEntry[]): Uint8Array {
  const pems = entries
    .filter(
      (e) => e.kind === 'file' && /^usr\/share\/ca-certificates\/mozilla\/[^/]+\.crt$/.test(e.path),
    )
    .sort((a, b) => comparePaths(a.path, b.path))
    .map((e) => (e.kind === 'file' ? Buffer.from(e.data).toString('utf8').trimEnd() : ''));
  return text(pems.length === 0 ? '' : `${pems.join('\n')}\n`);
}

const accounts = (): LayerEntry[] => [
  {
    kind: 'file',
    path: 'etc/passwd',
    mode: 0o644,
    data: text(
      `root:x:0:0:root:/root:/sbin/nologin\n${NonRoot.name}:x:${NonRoot.uid}:${NonRoot.gid}:${NonRoot.name}:/${NonRoot.home}:/sbin/nologin\n`,
    ),
  },
  {
    kind: 'file',
    path: 'etc/group',
    mode: 0o644,
    data: text(`root:x:0:\n${NonRoot.name}:x:${NonRoot.gid}:\n`),
  },
];

/** Directories `paths` need that `entries` lack, root-owned 0755 (`etc/ssl/certs/x` → `etc/` …). */
function parentsOf(paths: readonly string[], entries: readonly LayerEntry[]): LayerEntry[] {
  const have = new Set(entries.map((e) => e.path));
  const need = new Set<string>();
  for (const p of paths) {
    const parts = p.replace(/\/$/, '').split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) need.add(`${parts.slice(0, i).join('/')}/`);
  }
  return [...need].filter((d) => !have.has(d)).map((path) => ({ kind: 'dir', path, mode: 0o755 }));
}

/** With `added`'s paths replacing any of `entries`', and the directories they need. */
function withAdded(entries: readonly LayerEntry[], added: readonly LayerEntry[]): LayerEntry[] {
  const replaced = new Set(added.map((e) => e.path));
  const all = [...entries.filter((e) => !replaced.has(e.path)), ...added];
  return [
    ...parentsOf(
      all.map((e) => e.path),
      all,
    ),
    ...all,
  ];
}

/** Layer 1: the Debian tree as mmdebstrap extracted it (its entries), made fit to run Node as nonroot. */
export function debianLayerEntries(debian: readonly LayerEntry[]): LayerEntry[] {
  const kept = debian.filter(keep);
  return withAdded(kept, [
    ...accounts(),
    { kind: 'dir', path: 'root/', mode: 0o700 },
    { kind: 'dir', path: `${NonRoot.home}/`, mode: 0o755, uid: NonRoot.uid, gid: NonRoot.gid },
    { kind: 'dir', path: 'tmp/', mode: 0o1777 },
    { kind: 'file', path: 'etc/ssl/certs/ca-certificates.crt', mode: 0o644, data: caBundle(kept) },
  ]);
}

/** Where Node is in the image. */
export const NodePath = '/usr/local/bin/node';

/** Layer 2: the Node binary. */
export function nodeLayerEntries(node: Uint8Array): LayerEntry[] {
  return withAdded([], [{ kind: 'file', path: NodePath.slice(1), mode: 0o755, data: node }]);
}

/** molt's entry point in the image. */
export const MoltMain = `/${MoltDir}/dist/bin/molt.js`;

/**
 * `molt` on PATH without a shell or `env` in the image: molt.js's own `#!/usr/bin/env node` would
 * not start, so a CommonJS file run by Node's path imports it (argv stays `molt …`).
 */
const moltCommand = `#!${NodePath}\nimport(${JSON.stringify(MoltMain)});\n`;

/** Layer 3: molt's staged tree (`usr/lib/molt/…` entries) and the `molt` command. */
export function moltLayerEntries(molt: readonly LayerEntry[]): LayerEntry[] {
  return withAdded(molt, [
    { kind: 'file', path: 'usr/local/bin/molt', mode: 0o755, data: text(moltCommand) },
  ]);
}
