// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import { canonicalForm, flagName, renderComponent, type ComponentFacts } from './render.ts';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const facts: ComponentFacts = {
  args: ['--etcd-servers=http://127.0.0.1:2379', '--secure-port=6443', '--allow-privileged'],
  port: 6443,
  env: { GOGC: '50', A: '1' },
};
const staged = '/m/state/kubernetes/' + 'a'.repeat(64);
const apply = {
  version: 'v1.36.3',
  bundle: `reg/k@sha256:${'a'.repeat(64)}`,
  extraArgs: {},
};

describe('renderComponent', () => {
  it('runs the binary from the directory given, with the machine’s flags first', () => {
    const spec = renderComponent({ name: 'kube-apiserver', facts, binDir: `${staged}/`, sha256 });
    assert.equal(spec.binary, `${staged}/kube-apiserver`);
    assert.deepEqual(spec.args, facts.args);
    assert.deepEqual(Object.keys(spec.env), ['A', 'GOGC'], 'environment sorted by name');
    assert.equal(spec.port, 6443);
    assert.equal(spec.hash, sha256(canonicalForm(spec)));
  });

  it('adds the emulated version and the extra flags sorted by name, after the machine’s', () => {
    const spec = renderComponent({
      name: 'kube-apiserver',
      facts,
      apply: { ...apply, emulatedVersion: '1.35', extraArgs: { v: '2', 'audit-log-maxage': '7' } },
      binDir: staged,
      sha256,
    });
    assert.deepEqual(spec.args.slice(facts.args.length), [
      '--emulated-version=kube=1.35',
      '--audit-log-maxage=7',
      '--v=2',
    ]);
  });

  it('refuses an extra flag that overrides one the machine sets, naming it', () => {
    for (const flag of ['etcd-servers', 'allow-privileged'])
      assert.throws(
        () =>
          renderComponent({
            name: 'kube-apiserver',
            facts,
            apply: { ...apply, extraArgs: { [flag]: 'x' } },
            binDir: staged,
            sha256,
          }),
        (e: unknown) => isMoltError(e, ErrorCode.BadInput) && e.message.includes(`--${flag}`),
      );
  });

  it('refuses the emulated version as an extra flag (it has its own field)', () => {
    assert.throws(
      () =>
        renderComponent({
          name: 'kube-apiserver',
          facts,
          apply: { ...apply, extraArgs: { 'emulated-version': '1.30' } },
          binDir: staged,
          sha256,
        }),
      (e: unknown) => isMoltError(e, ErrorCode.BadInput) && /emulatedVersion/.test(e.message),
    );
  });

  it('changes the hash with the bundle, an extra flag, the environment; not with their order', () => {
    const base = { name: 'kube-apiserver', facts, apply, binDir: staged, sha256 };
    const h = renderComponent(base).hash;
    const other = renderComponent({ ...base, binDir: '/m/state/kubernetes/' + 'b'.repeat(64) });
    assert.notEqual(other.hash, h, 'a new bundle restarts the component');
    const flagged = renderComponent({ ...base, apply: { ...apply, extraArgs: { v: '2' } } });
    assert.notEqual(flagged.hash, h);
    const env = renderComponent({ ...base, facts: { ...facts, env: { A: '2', GOGC: '50' } } });
    assert.notEqual(env.hash, h);
    const reordered = renderComponent({
      ...base,
      facts: { ...facts, env: { GOGC: '50', A: '1' } },
    });
    assert.equal(reordered.hash, h);
    const a = renderComponent({ ...base, apply: { ...apply, extraArgs: { x: '1', y: '2' } } });
    const b = renderComponent({ ...base, apply: { ...apply, extraArgs: { y: '2', x: '1' } } });
    assert.equal(a.hash, b.hash, 'extra flags are sorted before hashing');
  });

  it('refuses an extra flag holding a newline: the unit it reached would not start', () => {
    for (const extraArgs of [{ 'audit-log-path': '/a\nExecStartPre=/bin/sh' }, { v: '2\r' }])
      assert.throws(
        () =>
          renderComponent({
            name: 'kube-apiserver',
            facts,
            apply: { ...apply, extraArgs },
            binDir: staged,
            sha256,
          }),
        (e: unknown) =>
          isMoltError(e, ErrorCode.KubeFlagInvalid) && /kube-apiserver/.test(e.message),
      );
  });

  it('reads flag names the way the renderer compares them', () => {
    assert.equal(flagName('--secure-port=6443'), 'secure-port');
    assert.equal(flagName('--allow-privileged'), 'allow-privileged');
    assert.equal(flagName('-v=2'), undefined);
    assert.equal(flagName('value'), undefined);
  });
});
