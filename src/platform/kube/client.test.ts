// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiException, KubeConfig, VersionApi } from '@kubernetes/client-node';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { boundRequests, clusterVersion, kubeError } from './client.ts';

describe('a refused Kubernetes call', () => {
  it('says which rule refused it, from the API Status in the body', () => {
    // An agent refused by the admission policy must be able to tell that from a missing RBAC rule.
    const status = {
      kind: 'Status',
      status: 'Failure',
      message:
        'nodes "w-2" is forbidden: ValidatingAdmissionPolicy \'molt-agent-own-node\' denied request: molt:agent:w-1 may change only its own Node',
      reason: 'Forbidden',
      code: 403,
    };
    const e = kubeError(
      new ApiException(403, 'Unknown API Status Code!', JSON.stringify(status), {}),
      'patch node w-2',
    );
    assert.ok(isMoltError(e, ErrorCode.KubeForbidden));
    assert.match(
      e.message,
      /^the Kubernetes API refused to patch node w-2 \(403: nodes "w-2" is forbidden: .*may change only its own Node\)$/,
    );
  });

  it('still names the call when the body says nothing', () => {
    for (const body of [undefined, 'not json', JSON.stringify({ message: 7 })]) {
      const e = kubeError(new ApiException(401, 'Unauthorized', body, {}), 'list nodes');
      assert.equal(e.message, 'the Kubernetes API refused to list nodes (401)');
    }
  });
});

describe('an API server that never answers', () => {
  // Without a deadline a drain, a store write or a Lease renewal would wait on it forever.
  it(
    'fails the call as retryable MOLT_KUBE_UNAVAILABLE instead of waiting',
    { timeout: 20_000 },
    async () => {
      const held: ServerResponse[] = [];
      const server = createServer((_req, res) => held.push(res));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const kc = new KubeConfig();
        kc.loadFromOptions({
          clusters: [
            {
              name: 'c',
              skipTLSVerify: true,
              server: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
            },
          ],
          users: [{ name: 'u', token: 't' }],
          contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
          currentContext: 'x',
        });
        // Long enough for the request to reach the server on a loaded machine (300 ms once did
        // not), short beside the test's own bound.
        const failure = await boundRequests(kc, 3_000)
          .makeApiClient(VersionApi)
          .getCode()
          .then(
            () => undefined,
            (e: unknown) => kubeError(e, 'read the version'),
          );
        assert.ok(failure !== undefined, 'the call must fail, not answer');
        assert.ok(isMoltError(failure, ErrorCode.KubeUnavailable), failure.message);
        assert.equal(failure.retryable, true);
        assert.equal(held.length, 1, `the request reached the server: ${failure.message}`);
      } finally {
        for (const res of held) res.destroy();
        server.close();
      }
    },
  );
});

describe('the cluster version', () => {
  it('names what failed in plain words when no API server answers', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    await assert.rejects(clusterVersion(kc), (e: unknown) => {
      assert.ok(isMoltError(e, ErrorCode.KubeUnavailable));
      assert.match(e.message, /^could not read the cluster version \(GET \/version\): /);
      return true;
    });
  });
});
