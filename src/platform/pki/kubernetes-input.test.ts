// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkClusterName,
  checkSan,
  checkServer,
  firstServiceAddress,
  serverSan,
} from './kubernetes-input.ts';

const value = <T>(r: { ok: true; value: T } | { ok: false; reason: string }): T => {
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.value;
};
const reason = (r: { ok: boolean; reason?: string }): string => {
  assert.equal(r.ok, false);
  return r.reason ?? '';
};

describe('kubernetes PKI input', () => {
  it('answers the first address of a service CIDR, IPv4 and IPv6', () => {
    assert.equal(value(firstServiceAddress('10.96.0.0/12')), '10.96.0.1');
    assert.equal(value(firstServiceAddress('172.20.255.0/24')), '172.20.255.1');
    assert.equal(value(firstServiceAddress('fd00:10:96::/108')), 'fd00:10:96::1');
    assert.equal(value(firstServiceAddress('fd00::1:0:0/112')), 'fd00::1:0:1');
  });

  it('refuses what kube-apiserver would, and what is no CIDR', () => {
    assert.match(
      reason(firstServiceAddress('10.96.0.1/12')),
      /^is not a network address \(10\.96\.0\.0\/12 is\)$/,
    );
    assert.match(reason(firstServiceAddress('10.0.0.0/8')), /from \/12 to \/30/);
    assert.match(reason(firstServiceAddress('10.0.0.0/31')), /from \/12 to \/30/);
    assert.match(reason(firstServiceAddress('fd00::/64')), /from \/108 to \/126/);
    assert.match(
      reason(firstServiceAddress('fd00::1/108')),
      /not a network address \(fd00::\/108 is\)/,
    );
    for (const bad of [
      '10.96.0.0',
      '10.96.0.0/x',
      '10.96.0.0/12/1',
      '300.0.0.0/12',
      'cp/12',
      '::ffff:10.0.0.0/120',
    ])
      assert.match(reason(firstServiceAddress(bad)), /is not a CIDR/, bad);
  });

  it('reads SANs as openssl writes them', () => {
    assert.deepEqual(value(checkSan('IP:10.0.0.7')), { type: 'ip', value: '10.0.0.7' });
    assert.deepEqual(value(checkSan('IP:fd00::7')), { type: 'ip', value: 'fd00::7' });
    assert.deepEqual(value(checkSan('DNS:CP-1.Lab')), { type: 'dns', value: 'cp-1.lab' });
    assert.match(reason(checkSan('cp-1.lab')), /must be IP:<address> or DNS:<name>/);
    assert.match(reason(checkSan('IP:cp-1')), /not an IP address/);
    assert.match(reason(checkSan('DNS:10.0.0.7')), /not a DNS name/);
    assert.match(reason(checkSan('DNS:a_b')), /not a DNS name/);
  });

  it('takes cluster names that fit a CA subject and a kubeconfig', () => {
    assert.equal(value(checkClusterName('prod-eu.1')), 'prod-eu.1');
    for (const bad of ['', 'Prod', '-prod', 'prod-', 'a/b', 'x'.repeat(64)])
      assert.equal(checkClusterName(bad).ok, false, bad);
  });

  it('takes an https server and names its host as a SAN', () => {
    assert.deepEqual(serverSan(value(checkServer('https://[fd00::10]:6443'))), {
      type: 'ip',
      value: 'fd00::10',
    });
    assert.deepEqual(serverSan(value(checkServer('https://cp.lab:6443'))), {
      type: 'dns',
      value: 'cp.lab',
    });
    assert.match(reason(checkServer('http://cp:6443')), /https/);
    assert.match(reason(checkServer('https://u:p@cp:6443')), /user or password/);
    assert.match(reason(checkServer('cp:6443')), /https|not a URL/);
  });
});
