// SPDX-License-Identifier: Apache-2.0
// scripts/ensure-kube-bins.sh without building Kubernetes: its cache layout and locks on stand-in
// binaries (shell scripts in a temporary MOLT_KUBE_CACHE), and its progress bar on a real `go
// build` of a module of a few packages.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageFile } from '../package-files.ts';
import { tempDir } from '../process/managed-process.ts';

const script = packageFile('scripts', 'ensure-kube-bins.sh');
const KUBE = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'];
const ETCD = ['etcd', 'etcdutl'];

/** scripts/kube-versions.env: KUBERNETES, KUBERNETES_PREVIOUS, ETCD, … */
async function versions(): Promise<Record<string, string>> {
  const env = await readFile(packageFile('scripts', 'kube-versions.env'), 'utf8');
  const out: Record<string, string> = {};
  for (const m of env.matchAll(/^(\w+)=(\S+)$/gm)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

/** Stand-in binaries: each prints its own name. */
async function standIns(dir: string, names: readonly string[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const n of names) {
    await writeFile(join(dir, n), `#!/bin/sh\necho ${n}\n`);
    await chmod(join(dir, n), 0o755);
  }
}

interface Run {
  /** What it has written to stderr so far. */
  stderr: string;
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** The script with `args` and no Go on PATH (/usr/local/go/bin left out): it must build nothing. */
function ensure(cache: string, args: readonly string[]): Run {
  const env = { ...process.env, MOLT_KUBE_CACHE: cache, PATH: '/usr/bin:/bin' };
  const child = spawn('bash', [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
  const run: Run = {
    stderr: '',
    done: once(child, 'close').then(([code]) => ({
      code: code as number | null,
      stdout,
      stderr: run.stderr,
    })),
  };
  child.stderr.on('data', (b: Buffer) => (run.stderr += b.toString('utf8')));
  return run;
}

/** Holds `file`'s flock (as a build of that version would) until `release`. */
async function holdLock(file: string): Promise<{ release: () => Promise<void> }> {
  const holder = spawn('bash', ['-c', `exec 9>"$1"; flock 9; echo held; read -r _`, 'hold', file], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const closed = once(holder, 'close');
  await once(holder.stdout, 'data');
  return {
    release: async () => {
      holder.stdin.end();
      await closed;
    },
  };
}

const inode = async (f: string): Promise<number> => (await stat(f)).ino;

describe('scripts/ensure-kube-bins.sh: the cache', { timeout: 60_000 }, () => {
  let v: Record<string, string>;
  before(async () => (v = await versions()));
  const dirOf = (cache: string, k: string): string => join(cache, `${k}-etcd${v['ETCD'] ?? ''}`);

  it('takes a complete directory as it is, without a lock or an etcd directory', async (t) => {
    const cache = await tempDir('kube-cache');
    t.after(cache.remove);
    const prev = dirOf(cache.path, v['KUBERNETES_PREVIOUS'] ?? '');
    await standIns(prev, [...KUBE, ...ETCD]);
    const r = await ensure(cache.path, ['--previous']).done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), prev);
    assert.deepEqual(await readdir(cache.path), [basename(prev)]);
  });

  it('gives a version its etcd from another version’s directory, hard-linked, while that version’s lock is held', async (t) => {
    const cache = await tempDir('kube-cache');
    t.after(cache.remove);
    const prev = dirOf(cache.path, v['KUBERNETES_PREVIOUS'] ?? '');
    const cur = dirOf(cache.path, v['KUBERNETES'] ?? '');
    await standIns(prev, [...KUBE, ...ETCD]);
    await standIns(cur, KUBE);
    // A build of the previous version in the background must not hold up the current one.
    const lock = await holdLock(join(cache.path, `.lock-${v['KUBERNETES_PREVIOUS'] ?? ''}`));
    t.after(lock.release);
    const r = await ensure(cache.path, []).done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), cur);
    assert.doesNotMatch(r.stderr, /compiling|waiting/);
    const shared = join(cache.path, `etcd-${v['ETCD'] ?? ''}`);
    for (const b of ETCD) {
      assert.equal(await inode(join(cur, b)), await inode(join(shared, b)), `${b} is one file`);
      assert.equal(await inode(join(prev, b)), await inode(join(shared, b)));
    }
    assert.equal(execFileSync(join(cur, 'etcdutl'), { encoding: 'utf8' }), 'etcdutl\n');
  });

  it('makes a caller for a version wait for that version’s build, then use what it built', async (t) => {
    const cache = await tempDir('kube-cache');
    t.after(cache.remove);
    const cur = dirOf(cache.path, v['KUBERNETES'] ?? '');
    const lock = await holdLock(join(cache.path, `.lock-${v['KUBERNETES'] ?? ''}`));
    t.after(lock.release);
    const waiting = ensure(cache.path, []);
    for (let i = 0; i < 200 && !waiting.stderr.includes('waiting'); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.match(
      waiting.stderr,
      new RegExp(`another build of Kubernetes ${v['KUBERNETES'] ?? ''} is running; waiting for it`),
    );
    // The build it waits for finishes: all six binaries in place, then the lock released.
    await standIns(cur, [...KUBE, ...ETCD]);
    await lock.release();
    const r = await waiting.done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), cur);
    assert.doesNotMatch(r.stderr, /compiling/);
  });

  it('--all does the current version first, then the previous one', async (t) => {
    const cache = await tempDir('kube-cache');
    t.after(cache.remove);
    const cur = dirOf(cache.path, v['KUBERNETES'] ?? '');
    const prev = dirOf(cache.path, v['KUBERNETES_PREVIOUS'] ?? '');
    for (const d of [cur, prev]) await standIns(d, [...KUBE, ...ETCD]);
    const r = await ensure(cache.path, ['--all']).done;
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), [cur, prev]);
  });
});

const hasGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe(
  'scripts/ensure-kube-bins.sh: the progress of a go build',
  { skip: !hasGo && 'no go on PATH' },
  () => {
    let mod: { path: string; remove: () => Promise<void> };
    before(async () => {
      mod = await tempDir('go-progress');
      await writeFile(join(mod.path, 'go.mod'), 'module t.local/m\n\ngo 1.22\n');
      // Unique constants: the packages are compiled on every run, whatever the build cache holds.
      const token = `${String(process.pid)}-${String(Date.now())}`;
      for (let i = 1; i <= 8; i++) {
        await mkdir(join(mod.path, `p${String(i)}`));
        await writeFile(
          join(mod.path, `p${String(i)}`, 'p.go'),
          `package p${String(i)}\n\nconst Token = "${token}-${String(i)}"\n`,
        );
      }
      for (const [cmd, pkgs] of [
        ['a', [1, 2, 3, 4]],
        ['b', [5, 6, 7, 8]],
      ] as const) {
        await mkdir(join(mod.path, 'cmd', cmd), { recursive: true });
        const imports = pkgs.map((i) => `"t.local/m/p${String(i)}"`).join('; ');
        const uses = pkgs.map((i) => `p${String(i)}.Token`).join(' + ');
        await writeFile(
          join(mod.path, 'cmd', cmd, 'main.go'),
          `package main\n\nimport (${imports})\n\nfunc main() { println(${uses}) }\n`,
        );
      }
    });
    after(() => mod.remove());

    /** go_build_progress from the script (sourced), building cmd/a and cmd/b into out/. */
    async function build(): Promise<{ code: number | null; stderr: string }> {
      const child = spawn(
        'bash',
        [
          '-c',
          'source "$1"; go_build_progress "compiling t" 5 out/a out/b -- -trimpath -o out/ ./cmd/a ./cmd/b',
          'build',
          script,
        ],
        {
          cwd: mod.path,
          env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
      const [code] = (await once(child, 'close')) as [number | null];
      return { code, stderr };
    }

    it('counts the packages go compiles and reaches 100 % once both binaries are written', async () => {
      const r = await build();
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stderr.trimEnd().split('\n');
      // Only bar lines: the package names go -v prints are counted, not passed on.
      for (const l of lines) assert.match(l, /^molt: \[\d+s\] compiling t \[[#.]{20}\] \d+% \(/);
      const pct = lines.map((l) => Number(/\] (\d+)% \(/.exec(l)?.[1]));
      assert.deepEqual(
        [...pct].sort((a, b) => a - b),
        pct,
        'never goes back',
      );
      assert.equal(pct.at(-1), 100);
      assert.ok(
        pct.slice(0, -1).every((p) => p < 100),
        'not 100 % before the end',
      );
      const last = /\((\d+) of (\d+) packages compiled, 2 of 2 binaries linked; \d+ min\)$/.exec(
        lines.at(-1) ?? '',
      );
      assert.ok(last, lines.at(-1));
      assert.equal(last[1], last[2], 'every package counted');
      assert.ok(Number(last[1]) >= 8, 'the eight packages of the module at least');
      for (const b of ['a', 'b']) assert.ok((await stat(join(mod.path, 'out', b))).size > 0);
    });

    it('passes a compile error on and never shows 100 %', async () => {
      const broken = join(mod.path, 'p3', 'broken.go');
      await writeFile(broken, 'package p3\n\nthis is not Go\n');
      try {
        const r = await build();
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /^# t\.local\/m\/p3$/m);
        assert.match(r.stderr, /broken\.go:3:1: syntax error/);
        assert.doesNotMatch(r.stderr, / 100% /);
      } finally {
        await writeFile(broken, 'package p3\n');
      }
    });
  },
);
