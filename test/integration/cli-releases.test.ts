// SPDX-License-Identifier: Apache-2.0
// The `molt` binary end to end against the real registry: publish, list, latest, exit codes,
// the JSON field contract, and user errors without stack traces.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair } from '../../src/releases/index.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';
import { freePort } from '../../src/platform/process/free-port.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';

const bin = join(import.meta.dirname, '../../src/bin/molt.ts');

function molt(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, XDG_CACHE_HOME: cacheHome, ...env } },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let registry: RunningRegistry;
let dir: { path: string; remove: () => Promise<void> };
let cacheHome = '';
let base: string[];
let keyFile = '';

before(async () => {
  registry = await startRegistry();
  dir = await tempDir('cli');
  cacheHome = join(dir.path, 'cache');
  base = ['--registry', registry.host, '--repository', 'acme/installer', '--insecure'];
  const keys = generateKeyPair();
  keyFile = join(dir.path, 'release.key');
  await writeFile(keyFile, keys.privateKeyPem);
  await writeFile(`${keyFile}.pub`, keys.publicKeyPem);
  const publish = async (tags: string[], flags: string[]): Promise<void> => {
    const r = await molt([
      'dev',
      'publish',
      ...base,
      ...tags.flatMap((t) => ['--tag', t]),
      ...flags,
    ]);
    assert.equal(r.code, 0, r.stderr);
  };
  await publish(
    ['1.0.0', '1.0.0-rev1'],
    [
      '--channels',
      'stable',
      '--official',
      '--kubernetes',
      '>=1.29',
      '--created',
      '2026-01-01T00:00:00Z',
      '--sign-key',
      keyFile,
    ],
  );
  await publish(
    ['1.1.0-rev1', '1.1.0-rev1-b7'],
    ['--channels', 'stable', '--official', '--kubernetes', '>=1.30', '--upgrade-from', '>=1.0.0'],
  );
  await publish(['1.2.0'], ['--channels', 'beta', '--official', '--upgrade-from', '>=1.1.0']);
  await publish(['latest'], ['--channels', 'stable']);
});

after(async () => {
  await registry.stop();
  await dir.remove();
});

describe('molt releases list (real registry)', () => {
  it('reads the registry, repository and plain HTTP of the context when no flag names them', async () => {
    const config = join(dir.path, 'contexts.yaml');
    const context = {
      ...{ operator: 'https://127.0.0.1:1', cert: '/c.pem', key: '/c.key', ca: '/ca.pem' },
      ...{ registry: registry.host, repository: 'acme/installer', insecure: true },
    };
    await writeFile(config, JSON.stringify({ currentContext: 'lab', contexts: { lab: context } }));
    const r = await molt(['releases', 'list', '-o', 'json'], { MOLT_CONFIG: config });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as unknown[]).length, 3);
    // A flag still wins, field by field.
    const other = await molt(['releases', 'list', '--repository', 'acme/none'], {
      MOLT_CONFIG: config,
    });
    assert.match(other.stderr, /MOLT_REGISTRY_NOT_FOUND|acme\/none/);
  });

  it('prints every official release as JSON with the documented fields, newest first', async () => {
    const r = await molt(['releases', 'list', ...base, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const releases = JSON.parse(r.stdout) as Record<string, unknown>[];
    assert.deepEqual(
      releases.map((x) => x['tag']),
      ['1.2.0', '1.1.0-rev1-b7', '1.0.0-rev1'],
    );
    const oldest = releases[2]!;
    for (const field of [
      'tag',
      'tags',
      'version',
      'digest',
      'channels',
      'official',
      'created',
      'kubernetes',
      'upgradeFrom',
    ]) {
      assert.ok(field in oldest, `field ${field} missing`);
    }
    assert.deepEqual(oldest['tags'], ['1.0.0-rev1', '1.0.0']);
    assert.equal(oldest['created'], '2026-01-01T00:00:00Z');
    assert.equal(oldest['kubernetes'], '>=1.29');
    assert.match(String(oldest['digest']), /^sha256:[0-9a-f]{64}$/);
    assert.match(r.stderr, /skipped latest: MOLT_TAG_NOT_VERSION/);
  });

  it('prints YAML and a table', async () => {
    const yaml = await molt(['releases', 'list', ...base, '-o', 'yaml', '--channel', 'beta']);
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.match(yaml.stdout, /^- tag: 1\.2\.0$/m);
    const table = await molt(['releases', 'list', ...base]);
    assert.match(table.stdout, /^VERSION\s+TAGS\s+DIGEST/);
  });
});

describe('molt releases latest (real registry)', () => {
  it('chooses the newest compatible release and explains the rest (exit 0)', async () => {
    const r = await molt([
      'releases',
      'latest',
      ...base,
      '--channel',
      'stable',
      '--current',
      '1.0.0',
      '--kubernetes',
      '1.30.2',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout) as {
      tag: string;
      path: string[];
      rejected: { version: string; reason: string }[];
    };
    assert.equal(v.tag, '1.1.0-rev1-b7');
    assert.deepEqual(v.path, ['1.1.0-rev1-b7']);
    const beta = v.rejected.find((x) => x.version === '1.2.0');
    assert.match(beta?.reason ?? '', /not in channel stable/);
  });

  it('exits 3 when nothing is eligible', async () => {
    const r = await molt([
      'releases',
      'latest',
      ...base,
      '--channel',
      'stable',
      '--kubernetes',
      '1.28.0',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 3, r.stderr);
    const v = JSON.parse(r.stdout) as {
      found: boolean;
      rejected: { version: string; code: string }[];
    };
    assert.equal(v.found, false);
    assert.deepEqual(
      v.rejected.map((x) => `${x.version} ${x.code}`),
      [
        '1.2.0 NotInChannel',
        '1.1.0-rev1-b7 KubernetesIncompatible',
        '1.0.0-rev1 KubernetesIncompatible',
      ],
    );
  });

  it('with a public key, only the signed release qualifies', async () => {
    const r = await molt([
      'releases',
      'latest',
      ...base,
      '--channel',
      'stable',
      '--public-key',
      `${keyFile}.pub`,
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout) as {
      tag: string;
      signature: string;
      rejected: { version: string; reason: string }[];
    };
    assert.equal(v.tag, '1.0.0-rev1');
    assert.equal(v.signature, 'verified');
    assert.ok(
      v.rejected.some(
        (x) => x.version === '1.1.0-rev1-b7' && /unsigned|not signed/i.test(x.reason),
      ),
      JSON.stringify(v.rejected),
    );
  });
});

describe('molt releases: failures are clear and never a stack trace', () => {
  it('an unreachable registry is MOLT_REGISTRY_UNREACHABLE, exit 1', async () => {
    const port = await freePort();
    const r = await molt([
      'releases',
      'list',
      '--registry',
      `127.0.0.1:${port}`,
      '--repository',
      'acme/installer',
      '--insecure',
      '--no-cache',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_REGISTRY_UNREACHABLE: .*127\.0\.0\.1/m);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  it('a plain-HTTP registry reached over HTTPS says so, on one line, with --insecure as the hint', async () => {
    const r = await molt([
      ...['releases', 'list', '--registry', registry.host, '--repository', 'acme/installer'],
      '--no-cache',
    ]);
    assert.equal(r.code, 1);
    // Not OpenSSL's `…:error:0A00010B:SSL routines:…` with a newline in it, and not
    // retried ("gave up after 5 attempts"): retrying cannot help.
    assert.equal(
      r.stderr,
      `error MOLT_REGISTRY_PLAIN_HTTP: registry ${registry.host} speaks plain HTTP, not HTTPS (tags of acme/installer: ERR_SSL_WRONG_VERSION_NUMBER)\n` +
        '  hint: use --insecure for a plain-HTTP registry (loopback and lab registries only: nothing is encrypted or verified)\n',
    );
  });

  it('a repository that does not exist is MOLT_REGISTRY_NOT_FOUND', async () => {
    const r = await molt([
      'releases',
      'list',
      '--registry',
      registry.host,
      '--repository',
      'acme/nothing',
      '--insecure',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_REGISTRY_NOT_FOUND: /m);
  });

  it('publishing an invalid tag changes nothing in the registry', async () => {
    const r = await molt([
      'dev',
      'publish',
      ...base,
      '--tag',
      '2.0.0',
      '--tag',
      '2.0.0+build5',
      '--channels',
      'stable',
      '--official',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_INVALID_TAG: "2\.0\.0\+build5" is not a valid OCI tag/);
    const list = await molt(['releases', 'list', ...base, '-o', 'json']);
    assert.ok(!list.stdout.includes('"2.0.0"'));
  });
});
