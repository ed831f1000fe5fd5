// SPDX-License-Identifier: Apache-2.0
// scripts/ensure-node-bins.sh: the node runtime molt's OS images carry (kubelet, containerd and its
// runc shim, ctr, crictl, the CNI plugins), built from the Go module proxy once per version. The
// real binaries (built here when the cache lacks them: minutes, as in CI) must be laid out as the
// image build expects, say the versions kube-versions.env pins, and be static; a second call is
// the fast path. The assembly from cached components and the refusals run on stand-ins.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { before, describe, it } from 'node:test';
import { packageFile } from '../../../src/platform/package-files.ts';
import { tempDir } from '../../../src/platform/process/managed-process.ts';

const script = packageFile('scripts', 'ensure-node-bins.sh');
const BIN = ['containerd', 'containerd-shim-runc-v2', 'crictl', 'ctr', 'kubelet'];
const CNI = ['bridge', 'host-local', 'loopback', 'portmap'];

async function versions(): Promise<Record<string, string>> {
  const env = await readFile(packageFile('scripts', 'kube-versions.env'), 'utf8');
  const out: Record<string, string> = {};
  for (const m of env.matchAll(/^(\w+)=(\S+)$/gm)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A directory's versions.json. */
async function versionsJson(dir: string): Promise<Record<string, string>> {
  return JSON.parse(await readFile(join(dir, 'versions.json'), 'utf8')) as Record<string, string>;
}

async function ensure(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<Result> {
  const t0 = performance.now();
  const child = spawn('bash', [script, ...args], {
    env: env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr, ms: performance.now() - t0 };
}

/** What a binary prints, stdout and stderr together (a CNI plugin names itself on stderr). */
function run(bin: string, args: readonly string[]): string {
  const r = spawnSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return `${r.stdout}${r.stderr}`;
}

/** Whether an ELF64 file names a program interpreter (PT_INTERP): a dynamically linked binary. */
async function hasInterpreter(file: string): Promise<boolean> {
  const f = await open(file);
  try {
    const head = Buffer.alloc(64);
    await f.read(head, 0, 64, 0);
    assert.equal(head.toString('latin1', 0, 4), '\x7fELF', `${file} is ELF`);
    const [phoff, phentsize, phnum] = [
      Number(head.readBigUInt64LE(0x20)),
      head.readUInt16LE(0x36),
      head.readUInt16LE(0x38),
    ];
    const ph = Buffer.alloc(phentsize * phnum);
    await f.read(ph, 0, ph.length, phoff);
    for (let i = 0; i < phnum; i++) if (ph.readUInt32LE(i * phentsize) === 3) return true;
    return false;
  } finally {
    await f.close();
  }
}

describe('scripts/ensure-node-bins.sh: the real node binaries', { timeout: 60 * 60_000 }, () => {
  let v: Record<string, string>;
  let dir = '';
  before(async () => {
    v = await versions();
    const r = await ensure([]);
    assert.equal(r.code, 0, r.stderr.slice(-3000));
    dir = r.stdout.trim().split('\n').at(-1) ?? '';
  });

  it('lays out bin/, cni/ and versions.json, hard-linked from each component’s directory', async () => {
    const [k, c] = [v['KUBERNETES'] ?? '', v['CONTAINERD'] ?? ''];
    assert.equal(basename(dir), `node-${k}-containerd${c}`);
    assert.deepEqual((await readdir(join(dir, 'bin'))).sort(), BIN);
    assert.deepEqual((await readdir(join(dir, 'cni'))).sort(), CNI);
    assert.deepEqual(await versionsJson(dir), {
      kubernetes: k,
      containerd: c,
      cniPlugins: v['CNI_PLUGINS'],
      crictl: v['CRICTL'],
    });
    const cache = dirname(dir);
    const sources: [string, string][] = [
      ['bin/kubelet', `kubelet-${k}/kubelet`],
      ['bin/containerd', `containerd-${c}/containerd`],
      ['bin/containerd-shim-runc-v2', `containerd-${c}/containerd-shim-runc-v2`],
      ['bin/ctr', `containerd-${c}/ctr`],
      ['bin/crictl', `crictl-${v['CRICTL'] ?? ''}/crictl`],
      ...CNI.map((p): [string, string] => [`cni/${p}`, `cni-${v['CNI_PLUGINS'] ?? ''}/${p}`]),
    ];
    for (const [inDir, component] of sources)
      assert.equal(
        (await stat(join(dir, inDir))).ino,
        (await stat(join(cache, component))).ino,
        inDir,
      );
  });

  it('each binary says the version kube-versions.env pins', () => {
    const bin = (b: string): string => join(dir, 'bin', b);
    assert.match(
      run(bin('kubelet'), ['--version']),
      new RegExp(`^Kubernetes ${v['KUBERNETES'] ?? ''}$`, 'm'),
    );
    const c = (v['CONTAINERD'] ?? '').replaceAll('.', '\\.');
    assert.match(
      run(bin('containerd'), ['--version']),
      new RegExp(`^containerd \\S+ ${c}( |$)`, 'm'),
    );
    assert.match(run(bin('ctr'), ['--version']), new RegExp(`^ctr \\S+ ${c}$`, 'm'));
    assert.match(run(bin('containerd-shim-runc-v2'), ['-v']), new RegExp(`Version: +${c}$`, 'm'));
    assert.match(
      run(bin('crictl'), ['--version']),
      new RegExp(`^crictl version ${v['CRICTL'] ?? ''}$`, 'm'),
    );
    // A CNI plugin run without CNI_COMMAND names itself and its version.
    for (const p of CNI)
      assert.match(
        run(join(dir, 'cni', p), []),
        new RegExp(`^CNI ${p} plugin ${v['CNI_PLUGINS'] ?? ''}$`, 'm'),
      );
  });

  it('every binary is statically linked: the image’s root need not match any C library', async () => {
    for (const b of [
      ...BIN.map((x) => join(dir, 'bin', x)),
      ...CNI.map((x) => join(dir, 'cni', x)),
    ])
      assert.equal(await hasInterpreter(b), false, `${b} has no program interpreter`);
  });

  it('answers from the cache in well under a second, with nothing on stderr', async () => {
    const r = await ensure([]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${dir}\n`);
    assert.equal(r.stderr, '');
    assert.ok(r.ms < 1000, `${String(Math.round(r.ms))} ms`);
  });
});

/** Stand-ins: shell scripts printing their own name, in `dir`. */
async function standIns(dir: string, names: readonly string[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const n of names) {
    await writeFile(join(dir, n), `#!/bin/sh\necho ${n}\n`);
    await chmod(join(dir, n), 0o755);
  }
}

describe('scripts/ensure-node-bins.sh: assembly and refusals, on stand-ins and without Go', () => {
  let v: Record<string, string>;
  before(async () => (v = await versions()));
  // No /usr/local/go/bin: a build attempt would fail with MOLT_KUBE_NO_GO.
  const noGo = (cache: string): NodeJS.ProcessEnv => ({
    ...process.env,
    MOLT_KUBE_CACHE: cache,
    PATH: '/usr/bin:/bin',
  });

  it('assembles the previous version’s directory from cached components, again when a pinned version changes', async (t) => {
    const cache = await tempDir('node-cache');
    t.after(cache.remove);
    const [prev, c, cni, crictl] = [
      v['KUBERNETES_PREVIOUS'],
      v['CONTAINERD'],
      v['CNI_PLUGINS'],
      v['CRICTL'],
    ].map((x) => x ?? '') as [string, string, string, string];
    await standIns(join(cache.path, `containerd-${c}`), [
      'containerd',
      'containerd-shim-runc-v2',
      'ctr',
    ]);
    await standIns(join(cache.path, `cni-${cni}`), CNI);
    await standIns(join(cache.path, `crictl-${crictl}`), ['crictl']);
    await standIns(join(cache.path, `kubelet-${prev}`), ['kubelet']);
    const r = await ensure(['--previous'], noGo(cache.path));
    assert.equal(r.code, 0, r.stderr);
    const dir = join(cache.path, `node-${prev}-containerd${c}`);
    assert.equal(r.stdout.trim(), dir);
    assert.doesNotMatch(r.stderr, /compiling/);
    assert.equal(execFileSync(join(dir, 'bin', 'kubelet'), { encoding: 'utf8' }), 'kubelet\n');
    assert.equal((await versionsJson(dir))['kubernetes'], prev);
    // A directory assembled under another crictl pin is not taken as it is.
    const json = join(dir, 'versions.json');
    await writeFile(json, (await readFile(json, 'utf8')).replace(crictl, 'v1.0.0'));
    const again = await ensure(['--previous'], noGo(cache.path));
    assert.equal(again.code, 0, again.stderr);
    assert.equal((await versionsJson(dir))['crictl'], crictl);
  });

  it('refuses a version that is not one (exit 2) and says Go is missing when it must build (exit 3)', async (t) => {
    const cache = await tempDir('node-cache');
    t.after(cache.remove);
    for (const bad of ['v1.36', 'latest', '1.36.3']) {
      const r = await ensure([bad], noGo(cache.path));
      assert.equal(r.code, 2, bad);
      assert.match(r.stderr, /MOLT_INVALID_VERSION/);
    }
    const r = await ensure([], noGo(cache.path));
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /MOLT_KUBE_NO_GO/);
  });
});
