// SPDX-License-Identifier: Apache-2.0
// The `lab` context `molt lab up` writes and `molt lab down` removes, on a CLI config
// file in a temp directory (MOLT_CONFIG) — never the real home.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { tempDir } from '../platform/process/managed-process.ts';
import type { CliConfig } from '../protocol/cli-config.ts';
import { describeLabUp, removeLabContext, saveLabContext } from './context.ts';
import type { LabState } from './state.ts';

describe('the lab context', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let n = 0;
  before(async () => {
    dir = await tempDir('lab-context');
  });
  after(() => dir.remove());

  const lab = (): LabState => ({
    pid: 1,
    state: 'ready',
    startedAt: '2026-11-24T10:00:00Z',
    dir: join(dir.path, 'lab'),
    registry: '127.0.0.1:5000',
    repository: 'molt/installer',
    operator: { api: 'https://127.0.0.1:7000', dashboard: 'http://127.0.0.1:8080' },
    pki: join(dir.path, 'lab', 'fleet', 'pki'),
    machines: [{ id: 'cp-1', role: 'control-plane', pool: 'cp', endpoint: 'https://x:1' }],
  });
  const env = (): { MOLT_CONFIG: string } => ({
    MOLT_CONFIG: join(dir.path, `config-${String(++n)}.yaml`),
  });
  const read = async (e: { MOLT_CONFIG: string }): Promise<CliConfig> =>
    parse(await readFile(e.MOLT_CONFIG, 'utf8')) as CliConfig;

  it('is written for the lab’s operator, the lab person’s certificate and the lab’s registry, and made current', async () => {
    const e = env();
    const note = await saveLabContext(lab(), e);
    assert.deepEqual(note, { written: true, file: e.MOLT_CONFIG, current: true });
    const c = await read(e);
    assert.equal(c.currentContext, 'lab');
    assert.deepEqual(c.contexts['lab'], {
      operator: 'https://127.0.0.1:7000',
      cert: join(lab().pki, 'lab-admin.pem'),
      key: join(lab().pki, 'lab-admin.key'),
      ca: join(lab().pki, 'ca.pem'),
      registry: lab().registry,
      repository: lab().repository,
      insecure: true,
    });
    const text = describeLabUp({ ...lab(), context: note });
    assert.match(text, /^context: {2}lab in \S+, the current one: molt talks to this lab without/m);
    assert.match(text, /^explore: {2}molt rollout list; .*molt node status cp-1;/m);
  });

  it('leaves another current context current, and says how to switch', async () => {
    const e = env();
    await writeFile(
      e.MOLT_CONFIG,
      'currentContext: prod\ncontexts:\n  prod: {operator: "https://p:1", cert: /c, key: /k, ca: /a}\n',
    );
    const note = await saveLabContext(lab(), e);
    assert.deepEqual(note, { written: true, file: e.MOLT_CONFIG, current: false, other: 'prod' });
    assert.equal((await read(e)).currentContext, 'prod');
    assert.match(
      describeLabUp({ ...lab(), context: note }),
      /; prod stays current \(molt config use-context lab, or --context lab\)/,
    );
  });

  it('is removed by down only while it points into that lab', async () => {
    const e = env();
    await saveLabContext(lab(), e);
    assert.equal(await removeLabContext(join(dir.path, 'other-lab'), e), undefined);
    assert.ok((await read(e)).contexts['lab'] !== undefined);
    assert.equal(await removeLabContext(lab().dir, e), e.MOLT_CONFIG);
    const c = await read(e);
    assert.deepEqual([c.currentContext, c.contexts], [undefined, {}]);
  });

  it('never fails the lab over a broken config file: it says why and what to use instead', async () => {
    const e = env();
    await writeFile(e.MOLT_CONFIG, 'contexts: 7\n');
    const note = await saveLabContext(lab(), e);
    assert.equal(note.written, false);
    assert.match(
      describeLabUp({ ...lab(), context: note }),
      /^context: {2}not written \(MOLT_CLI_CONFIG_INVALID: .*contexts: .*\); use eval "\$\(molt lab env\)" instead$/m,
    );
    assert.equal(await removeLabContext(lab().dir, e), undefined);
  });
});
