// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeApi, parseDeprecatedApis, removedApisInUse } from './deprecated-apis.ts';

const metrics = `# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.
# TYPE apiserver_requested_deprecated_apis gauge
apiserver_requested_deprecated_apis{group="flowcontrol.apiserver.k8s.io",removed_release="1.32",resource="flowschemas",subresource="",version="v1beta3"} 1
apiserver_requested_deprecated_apis{group="",removed_release="",resource="componentstatuses",subresource="",version="v1"} 1
apiserver_requested_deprecated_apis{group="storage.k8s.io",removed_release="1.37",resource="volumeattachments",subresource="status",version="v1beta1"} 1
apiserver_requested_deprecated_apis{group="batch",removed_release="1.25",resource="cronjobs",subresource="",version="v1beta1"} 0
apiserver_requested_deprecated_apis_total 3
apiserver_request_total{code="200"} 12
`;

describe("removed APIs in use, from the API server's metrics", () => {
  it('reads the family, skipping zero samples, comments and other families', () => {
    const apis = parseDeprecatedApis(metrics);
    assert.deepEqual(
      apis.map((a) => `${a.group}/${a.version}/${a.resource}/${a.subresource}@${a.removedRelease}`),
      [
        'flowcontrol.apiserver.k8s.io/v1beta3/flowschemas/@1.32',
        '/v1/componentstatuses/@',
        'storage.k8s.io/v1beta1/volumeattachments/status@1.37',
      ],
    );
  });

  it('keeps the ones removed at or before the target minor', () => {
    assert.deepEqual(removedApisInUse(metrics, '1.36').map(describeApi), [
      'flowcontrol.apiserver.k8s.io/v1beta3 flowschemas (removed in 1.32)',
    ]);
    assert.equal(removedApisInUse(metrics, '1.37').length, 2);
    assert.equal(removedApisInUse(metrics, '1.31').length, 0);
  });

  it('unescapes label values', () => {
    const [a] = parseDeprecatedApis(
      'apiserver_requested_deprecated_apis{group="a\\"b\\\\c",version="v1",resource="r,}",subresource="",removed_release="1.2"} 1 1700000000\n',
    );
    assert.equal(a?.group, 'a"b\\c');
    assert.equal(a.resource, 'r,}');
  });

  it('refuses garbage of the family rather than reading it as none in use', () => {
    for (const bad of [
      'apiserver_requested_deprecated_apis{group="x" 1',
      'apiserver_requested_deprecated_apis{group=x} 1',
      'apiserver_requested_deprecated_apis{group="x"} one',
      'apiserver_requested_deprecated_apis{group="x"}',
    ])
      assert.throws(() => parseDeprecatedApis(bad), { code: 'MOLT_KUBE_UNAVAILABLE' }, bad);
  });
});
