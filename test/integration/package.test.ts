// SPDX-License-Identifier: Apache-2.0
// The published package works outside a checkout: `npm pack` (prepack cleans and builds
// dist/), the tarball installed into a temp prefix with its production dependencies only, and the
// installed `molt` run from a directory that is not the checkout — `molt version`, `molt plan`, and a
// whole `molt lab up --no-kubernetes` whose machines and operator are started by that installed
// molt, a release rolled out to its worker, the dashboard answering, `molt lab down`.
import { checkoutBuildLock } from '../../src/image/build/molt-package.ts';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile, realpath } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { LabState } from '../../src/lab/state.ts';
import { eventually, tempDir } from '../../src/platform/process/managed-process.ts';
import type { MachineView } from '../../src/protocol/operator.ts';

const run = promisify(execFile);
const checkout = join(import.meta.dirname, '../..');
let scratch: { path: string; remove: () => Promise<void> };
let prefix: string;
let env: NodeJS.ProcessEnv;
let lab: LabState | undefined;

/** Run the installed `molt` (found on PATH, as a user runs it) from the scratch directory. */
async function molt(
  args: readonly string[],
  more: Record<string, string> = {},
): Promise<{ stdout: string; stderr: string }> {
  return run('molt', [...args], {
    cwd: scratch.path,
    env: { ...env, ...more },
    maxBuffer: 16 * 1024 * 1024,
  });
}

before(async () => {
  scratch = await tempDir('package');
  prefix = join(scratch.path, 'prefix');
  // Its prepack cleans dist/: not while an image build of this checkout packs it.
  const packed = await checkoutBuildLock(() =>
    run('npm', ['pack', '--silent', '--pack-destination', scratch.path], {
      cwd: checkout,
      maxBuffer: 16 * 1024 * 1024,
    }),
  );
  const tarball = join(scratch.path, packed.stdout.trim().split('\n').at(-1) ?? '');
  await run(
    'npm',
    // From npm's cache first (`npm ci` filled it): a registry that stalls must not stall the test.
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--omit=dev',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      tarball,
    ],
    { cwd: scratch.path, maxBuffer: 16 * 1024 * 1024 },
  );
  // PATH: the installed molt, and the Node 24 that runs these tests (the shebang's `env node`).
  env = {
    ...process.env,
    // `molt lab up` writes its context here, not into the real home's CLI config.
    MOLT_CONFIG: join(scratch.path, 'molt-config.yaml'),
    PATH: [
      join(prefix, 'bin'),
      dirname(process.execPath),
      '/usr/sbin',
      '/usr/bin',
      '/sbin',
      '/bin',
    ].join(delimiter),
  };
});

after(async () => {
  if (lab !== undefined) await molt(['lab', 'down', '--dir', lab.dir]).catch(() => undefined);
  await scratch.remove();
});

describe('the packed package, installed outside the checkout', () => {
  it('installs the molt binary from dist/ with no test code in it', async () => {
    const bin = await realpath(join(prefix, 'bin', 'molt'));
    assert.ok(bin.endsWith(join('node_modules', 'molt', 'dist', 'bin', 'molt.js')), bin);
    assert.ok(!bin.startsWith(checkout), 'not a link into the checkout');
    const files = (await run('tar', ['tzf', join(scratch.path, 'molt-0.1.0.tgz')])).stdout;
    const testCode = files.split('\n').filter((f) => /testkit|\.test\.|\.fake\./.test(f));
    assert.deepEqual(testCode, [], 'no tests, testkit or fakes');
    assert.match(files, /package\/deploy\/kubernetes\/crds\.yaml/);
    assert.match(files, /package\/scripts\/ensure-kube-bins\.sh/);
    assert.match(files, /package\/scripts\/ensure-node-bins\.sh/);
    // One bundle for the CLI and the daemons (with their dependencies), split where a verb
    // imports lazily; the build host's processes stay tsc's modules.
    assert.match(files, /package\/dist\/bin\/chunks\/[\w-]+\.js/);
    const entry = await readFile(bin, 'utf8');
    assert.doesNotMatch(entry, /cli\/main\.js/, 'the CLI is in the bundle, not tsc’s modules');
    const chunks = join(dirname(bin), 'chunks');
    const code = await Promise.all(
      (await readdir(chunks))
        .filter((f) => f.endsWith('.js'))
        .map((f) => readFile(join(chunks, f), 'utf8')),
    );
    const imports = (path: string) => code.some((c) => c.includes(`"../../${path}"`));
    assert.deepEqual(
      ['agent/main.js', 'operator/main.js', 'lab/main.js'].map((p) => [p, imports(p)]),
      [
        ['agent/main.js', false],
        ['operator/main.js', false],
        ['lab/main.js', true],
      ],
    );
  });

  it('starts a daemon from the bundle, and a user error in it stays a code and a message', async () => {
    const failed = await molt(['operator', '--config', join(scratch.path, 'none.yaml')]).then(
      () => undefined,
      (e: unknown) => e as { code: number; stderr: string },
    );
    assert.equal(failed?.code, 1);
    assert.match(failed.stderr, /^error MOLT_CONFIG_INVALID: cannot read the operator config /);
    assert.doesNotMatch(failed.stderr, /unexpected|\n\s+at /, 'no stack trace');
  });

  it('molt version', async () => {
    const { version } = JSON.parse(await readFile(join(checkout, 'package.json'), 'utf8')) as {
      version: string;
    };
    const { stdout } = await molt(['version']);
    assert.match(stdout, new RegExp(`^molt ${version.replace(/\./g, '\\.')} \\(node 24\\.`));
  });

  it('molt plan on the example fleet', async () => {
    const fleet = join(checkout, 'docs', 'examples', 'fleet.yaml');
    const state = join(checkout, 'docs', 'examples', 'fleet-state.yaml');
    const { stdout } = await molt([
      'plan',
      '--fleet',
      fleet,
      '--state',
      state,
      '--at',
      '2026-11-23T02:00:00Z',
      '-o',
      'json',
    ]);
    const plan = JSON.parse(stdout) as { decisions: { machine: string }[] };
    assert.equal(new Set(plan.decisions.map((d) => d.machine)).size, 9);
  });

  it('molt lab up starts its machines and operator with the installed molt', async () => {
    const dir = join(scratch.path, 'lab');
    const up = await molt([
      'lab',
      'up',
      '--dir',
      dir,
      '--workers',
      '1',
      '--no-kubernetes',
      '--fast',
      '-o',
      'json',
    ]);
    lab = JSON.parse(up.stdout) as LabState;
    assert.equal(lab.state, 'ready');
    const installed = join(prefix, 'bin', 'molt');
    const { stdout: ps } = await run('ps', ['-eo', 'args']);
    const machines = ps
      .split('\n')
      .filter((l) => l.includes(`lab machine --root ${join(dir, 'fleet')}`));
    assert.equal(machines.length, 4, 'four lab machine processes');
    for (const line of machines)
      assert.ok(line.includes(installed), `started by the installed molt: ${line}`);
    assert.ok(
      ps.split('\n').some((l) => l.includes(`${installed} operator --config`)),
      'the operator too',
    );
  });

  it('rolls a published release out to the worker', async () => {
    assert.ok(lab !== undefined);
    await molt(['lab', 'publish', '1.1.0', '--channels', 'beta', '--dir', lab.dir]);
    const vars = JSON.parse(
      (await molt(['lab', 'env', '--dir', lab.dir, '-o', 'json'])).stdout,
    ) as Record<string, string>;
    await eventually(
      async () => {
        const list = JSON.parse(
          (await molt(['machine', 'list', '-o', 'json'], vars)).stdout,
        ) as MachineView[];
        const w1 = list.find((m) => m.id === 'w-1');
        if (w1?.observed?.version !== '1.1.0')
          throw new Error(`w-1 runs ${String(w1?.observed?.version)}`);
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
  });

  it('serves the dashboard', async () => {
    assert.ok(lab !== undefined);
    const page = await fetch(lab.operator.dashboard);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script type="module" src="dashboard\/main\.js">/);
    for (const path of ['dashboard/main.js', 'dashboard/style.css', 'core/rollout/vocabulary.js']) {
      const res = await fetch(new URL(path, lab.operator.dashboard));
      assert.equal(res.status, 200, path);
      if (path.endsWith('.js')) assert.match(res.headers.get('content-type') ?? '', /javascript/);
    }
    const machines = await fetch(new URL('v1/machines', lab.operator.dashboard));
    assert.equal(((await machines.json()) as unknown[]).length, 4);
  });

  it('molt lab down stops it all', async () => {
    assert.ok(lab !== undefined);
    const down = JSON.parse(
      (await molt(['lab', 'down', '--dir', lab.dir, '-o', 'json'])).stdout,
    ) as {
      stopped: boolean;
    };
    assert.equal(down.stopped, true);
    lab = undefined;
  });
});
