// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { kubeError } from './client.ts';

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
