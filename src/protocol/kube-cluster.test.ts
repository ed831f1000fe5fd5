// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError, type MoltError } from '../core/errors.ts';
import { declaredKubernetesCluster } from '../operator/adapters/kube-declared/read.ts';
import { ComponentApplyBody } from './agent-kubernetes.ts';
import { parseFleet } from './fleet.ts';
import { KubernetesClusterSpec } from './kube-cluster.ts';

const fleet = (apiserver: string): string =>
  [
    'pools: [{name: p}]',
    'machines:',
    '  - {id: cp-1, role: control-plane, pool: p, cluster: edge}',
    'clusters:',
    '  - name: edge',
    '    kubernetes:',
    '      version: v1.36.3',
    `      apiserver: ${apiserver}`,
    '',
  ].join('\n');

function failure(text: string): MoltError {
  try {
    parseFleet(text, { source: 'f.yaml' });
  } catch (e) {
    if (isMoltError(e)) return e;
    throw e;
  }
  assert.fail('expected a MoltError');
}

const spec = (apiserver: object) =>
  KubernetesClusterSpec.safeParse({ version: 'v1.36.3', apiserver });

describe('a cluster’s extraArgs', () => {
  it('refuses a value with a newline or another control character, in every schema', () => {
    const e = failure(fleet('{extraArgs: {audit-log-path: "/var/log/a\\nExecStartPre=/bin/sh"}}'));
    assert.equal(e.code, ErrorCode.KubeFlagInvalid);
    assert.match(
      e.message,
      /clusters\[0\]\.kubernetes\.apiserver\.extraArgs\.audit-log-path: must not hold a control character/,
    );
    for (const v of ['a\rb', 'a\tb', 'a\u0000b', 'a\u007fb', 'a\u0085b'])
      assert.equal(spec({ extraArgs: { v } }).success, false, JSON.stringify(v));
    const body = ComponentApplyBody.safeParse({
      version: 'v1.36.3',
      bundle: `r/k@sha256:${'a'.repeat(64)}`,
      extraArgs: { v: '2\n' },
    });
    assert.equal(body.success, false, 'the agent’s API refuses it too');
    assert.equal(spec({ extraArgs: { 'audit-log-path': '/var/log/a b "c" 50%' } }).success, true);
  });

  it('refuses the flags that open the API server unless forced, each on its own', () => {
    const refused: readonly [string, string][] = [
      ['authorization-mode', 'Node,AlwaysAllow'],
      ['authorization-mode', 'AlwaysAllow'],
      ['anonymous-auth', 'true'],
      ['anonymous-auth', 'T'],
      ['anonymous-auth', '1'],
      ['disable-admission-plugins', 'PodSecurity,NodeRestriction'],
    ];
    for (const [flag, value] of refused) {
      const e = failure(fleet(`{extraArgs: {${flag}: "${value}"}}`));
      assert.equal(e.code, ErrorCode.KubeFlagInsecure, `${flag}=${value}`);
      assert.match(
        e.message,
        new RegExp(
          `apiserver\\.extraArgs\\.${flag}: --${flag} of kube-apiserver opens the API server`,
        ),
      );
      assert.match(e.hint ?? '', /forceInsecureFlags/);
      const forced = parseFleet(
        fleet(`{extraArgs: {${flag}: "${value}"}, forceInsecureFlags: [${flag}]}`),
      );
      assert.equal(forced.clusters?.[0]?.kubernetes?.apiserver.extraArgs[flag], value);
    }
    const safe = spec({
      extraArgs: {
        'authorization-mode': 'Node,RBAC',
        'anonymous-auth': 'false',
        'disable-admission-plugins': 'PodSecurity',
      },
    });
    assert.equal(safe.success, true);
    const partly = spec({
      extraArgs: { 'anonymous-auth': 'true', 'authorization-mode': 'AlwaysAllow' },
      forceInsecureFlags: ['anonymous-auth'],
    });
    assert.ok(!partly.success, 'forcing one flag does not force another');
    assert.deepEqual(
      partly.error.issues.map((i) => i.path.join('.')),
      ['apiserver.extraArgs.authorization-mode'],
    );
  });

  it('names the code on a KubernetesCluster object it refuses', () => {
    const o = declaredKubernetesCluster({
      metadata: { name: 'edge', generation: 3 },
      spec: { version: 'v1.36.3', apiserver: { extraArgs: { 'anonymous-auth': 'true' } } },
    });
    assert.ok('invalid' in o);
    assert.match(
      o.invalid,
      /^spec\.apiserver\.extraArgs\.anonymous-auth: --anonymous-auth of kube-apiserver opens the API server.*\(MOLT_KUBE_FLAG_INSECURE\)$/,
    );
  });
});
