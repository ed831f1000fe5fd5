// SPDX-License-Identifier: Apache-2.0
// `molt config …` and the contexts it writes, used by the commands that connect:
// in-process against the fixture operator over mutual TLS, the config file in a temp directory
// (MOLT_CONFIG) — never the real home.
import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startCliOperator, type CliOperator } from '../../../testkit/cli-operator.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

describe('molt config and contexts', () => {
  let op: CliOperator;
  let config: string;
  let n = 0;
  before(async () => {
    op = await startCliOperator('config-cli');
  });
  after(() => op.close());
  beforeEach(() => {
    config = join(op.dir, `config-${String(++n)}`, 'molt.yaml');
  });

  async function molt(args: string[], env: Record<string, string> = {}) {
    const io = memoryIo({ MOLT_CONFIG: config, ...env });
    const code = await main(args, io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  }
  const setContext = (name: string, who: string, ...more: string[]) =>
    molt([
      ...['config', 'set-context', name, '--operator', op.api.url, '--ca', op.files['ca'] ?? ''],
      ...['--cert', op.files[`${who}.pem`] ?? '', '--key', op.files[`${who}.key`] ?? ''],
      ...more,
    ]);

  it('writes contexts to a 0600 file, the first one current, and lists them', async () => {
    const first = await setContext('fleet', 'node');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, `context fleet added to ${config}; it is the current context\n`);
    assert.equal((await setContext('ops', 'operator')).code, 0);
    assert.equal((await stat(config)).mode & 0o777, 0o600);
    assert.equal((await stat(join(config, '..'))).mode & 0o777, 0o700);
    const file = parse(await readFile(config, 'utf8')) as {
      currentContext: string;
      contexts: Record<string, { operator: string; cert: string }>;
    };
    assert.equal(file.currentContext, 'fleet');
    assert.equal(file.contexts['ops']?.cert, op.files['operator.pem']);
    const list = await molt(['config', 'get-contexts']);
    assert.match(list.stdout, /^CURRENT +NAME +OPERATOR +CERT$/m);
    assert.match(list.stdout, /^\* +fleet +https:\/\/127\.0\.0\.1:\d+ +\S+node\.pem$/m);
    assert.match(list.stdout, /^ +ops +https:/m);
    assert.equal((await molt(['config', 'current-context'])).stdout, 'fleet\n');
  });

  it('reaches the operator through the current context, with no environment variables', async () => {
    await setContext('fleet', 'node');
    const r = await molt(['rollout', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^workers-1\.1\.0 +workers +1\.1\.0/m);
  });

  it('switches with use-context and --context; flags and the environment win over a context', async () => {
    await setContext('fleet', 'node');
    await setContext('ops', 'operator', '--output', 'json');
    const pause = ['rollout', 'pause', 'workers-1.1.0'];
    assert.match((await molt(pause)).stderr, /MOLT_FORBIDDEN: w-9 \(role node\)/);
    assert.equal((await molt([...pause, '--context', 'ops'])).code, 0);
    assert.equal((await molt(['config', 'use-context', 'ops'])).code, 0);
    const list = await molt(['rollout', 'list']);
    assert.equal((JSON.parse(list.stdout) as unknown[]).length, 4, 'the context’s output: json');
    assert.match((await molt(['rollout', 'list', '-o', 'table'])).stdout, /^ROLLOUT +POOL/);
    const byEnv = await molt(['rollout', 'resume', 'workers-1.1.0'], {
      MOLT_CERT: op.files['node.pem'] ?? '',
      MOLT_KEY: op.files['node.key'] ?? '',
    });
    assert.match(byEnv.stderr, /MOLT_FORBIDDEN: w-9/, 'MOLT_CERT/MOLT_KEY over the context');
    const byFlag = await molt(['rollout', 'list', '--endpoint', 'https://127.0.0.1:1']);
    assert.match(byFlag.stderr, /MOLT_OPERATOR_UNREACHABLE: .*127\.0\.0\.1:1/, '--endpoint wins');
  });

  it('refuses an unknown context, listing the known ones', async () => {
    await setContext('fleet', 'node');
    await setContext('ops', 'operator');
    for (const args of [
      ['rollout', 'list', '--context', 'prod'],
      ['config', 'use-context', 'prod'],
      ['config', 'delete-context', 'prod'],
    ]) {
      const r = await molt(args);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /^error MOLT_UNKNOWN_CONTEXT: no context prod in .*molt\.yaml; it has: fleet, ops\n/,
      );
    }
  });

  it('deletes a context; deleting the current one leaves none current', async () => {
    await setContext('fleet', 'node');
    const r = await molt(['config', 'delete-context', 'fleet']);
    assert.match(r.stdout, /context fleet deleted from .*; no context is current now/);
    const none = await molt(['config', 'current-context']);
    assert.match(none.stderr, /^error MOLT_UNKNOWN_CONTEXT: no context is current/);
    assert.match((await molt(['rollout', 'list'])).stderr, /^error MOLT_NO_ENDPOINT/);
  });

  it('changes only the fields given, and refuses a new context missing one', async () => {
    await setContext('fleet', 'node');
    assert.equal((await molt(['config', 'set-context', 'fleet', '--agent-port', '9443'])).code, 0);
    const view = await molt(['config', 'view', '-o', 'json']);
    const c = (JSON.parse(view.stdout) as { contexts: Record<string, Record<string, unknown>> })
      .contexts['fleet'];
    assert.equal(c?.['agentPort'], 9443);
    assert.equal(c['operator'], op.api.url);
    const partial = await molt(['config', 'set-context', 'new', '--operator', op.api.url]);
    assert.match(partial.stderr, /^error MOLT_BAD_FLAG: context new: cert is required/);
    const missing = await molt([
      ...['config', 'set-context', 'x', '--operator', op.api.url, '--cert', 'nope.pem'],
    ]);
    assert.match(missing.stderr, /MOLT_BAD_FLAG: --cert nope\.pem: no such file/);
  });

  it('names the file and the field of a broken config file', async () => {
    await setContext('fleet', 'node');
    await writeFile(config, 'contexts:\n  fleet:\n    operator: http://plain:1\n');
    const r = await molt(['rollout', 'list']);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error MOLT_CLI_CONFIG_INVALID: \S+molt\.yaml: contexts\.fleet\.operator: must be an https:\/\/ URL\n/,
    );
    await writeFile(config, 'contexts: [\n');
    assert.match(
      (await molt(['config', 'get-contexts'])).stderr,
      /^error MOLT_CLI_CONFIG_INVALID: \S+molt\.yaml: not YAML/,
    );
  });

  it('reads nothing when the environment names no home', async () => {
    const io = memoryIo({});
    assert.equal(await main(['config', 'view'], io), 0);
    assert.equal(io.stdout(), '# (no CLI config file)\ncontexts: {}\n');
  });
});
