// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorConfig } from './operator-config.ts';

const minimal = {
  registry: 'r',
  repository: 'r',
  fleet: 'f',
  pki: { ca: 'c', cert: 'c', key: 'k' },
  store: 'memory',
};

const issues = (input: unknown): string[] =>
  OperatorConfig.safeParse(input).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ??
  [];

describe('the operator config', () => {
  it('capi: remediates a failed Machine by default; needs the management cluster to read Machines from', () => {
    const pki = { ...minimal.pki, serverCert: 's', serverKey: 'k' };
    const capi = { listen: { port: 9443 }, kubeconfig: 'mgmt.kubeconfig', clientCa: 'capi-ca.pem' };
    const c = OperatorConfig.parse({ ...minimal, pki, capi });
    assert.deepEqual(
      [c.capi?.onFailure, c.capi?.insecureNoClientAuth, c.capi?.clientCa],
      ['remediate', false, 'capi-ca.pem'],
    );
    assert.equal(
      OperatorConfig.parse({ ...minimal, pki, capi: { ...capi, onFailure: 'report' } }).capi
        ?.onFailure,
      'report',
    );
    assert.deepEqual(
      issues({ ...minimal, pki, capi: { ...capi, onFailure: 'delete' } }).map(
        (m) => m.split(':')[0],
      ),
      ['capi.onFailure'],
    );
    assert.deepEqual(issues({ ...minimal, pki, capi: { listen: { port: 9443 } } }), [
      'capi.kubeconfig: required: the management cluster, where molt reads each Machine a hook names',
    ]);
  });

  it('capi: clientNames narrow clientCa, and mean nothing without it', () => {
    const pki = { ...minimal.pki, serverCert: 's', serverKey: 'k' };
    const capi = { listen: { port: 9443 }, kubeconfig: 'k', clientNames: ['capi-manager'] };
    assert.deepEqual(
      OperatorConfig.parse({ ...minimal, pki, capi: { ...capi, clientCa: 'ca' } }).capi
        ?.clientNames,
      ['capi-manager'],
    );
    assert.deepEqual(issues({ ...minimal, pki, capi }), [
      'capi.clientNames: needs clientCa: without a CA no client certificate is asked for',
    ]);
  });

  it('capi: keys clusters by <namespace>/<name>, each to one pool or several', () => {
    const pki = { ...minimal.pki, serverCert: 's', serverKey: 'k' };
    const capi = { listen: { port: 9443 }, kubeconfig: 'k', clientCa: 'ca' };
    const c = OperatorConfig.parse({
      ...minimal,
      pki,
      capi: { ...capi, clusters: { 'demo/c1': ['control-plane', 'workers'], 'prod/main': 'db' } },
    });
    assert.deepEqual(c.capi?.clusters, {
      'demo/c1': ['control-plane', 'workers'],
      'prod/main': ['db'],
    });
    for (const key of ['c1', 'demo/', '/c1', 'a/b/c', 'Demo/c1'])
      assert.ok(
        issues({ ...minimal, pki, capi: { ...capi, clusters: { [key]: 'w' } } }).some((m) =>
          m.startsWith('capi.clusters'),
        ),
        key,
      );
  });

  it('capi: insecureNoClientAuth contradicts clientCa', () => {
    const pki = { ...minimal.pki, serverCert: 's', serverKey: 'k' };
    const capi = { listen: { port: 9443 }, kubeconfig: 'k' };
    assert.equal(
      OperatorConfig.parse({ ...minimal, pki, capi: { ...capi, insecureNoClientAuth: true } }).capi
        ?.insecureNoClientAuth,
      true,
    );
    assert.deepEqual(
      issues({
        ...minimal,
        pki,
        capi: { ...capi, clientCa: 'ca', insecureNoClientAuth: true },
      }).map((m) => m.split(':')[0]),
      ['capi.insecureNoClientAuth'],
    );
  });

  it('defaults the FleetLock listener to TLS, which needs the server certificate', () => {
    const fleetLock = { listen: { port: 8443 }, clients: [] };
    assert.deepEqual(
      issues({ ...minimal, fleetLock }).map((m) => m.split(':')[0]),
      ['pki.serverCert', 'pki.serverKey'],
    );
    const c = OperatorConfig.parse({
      ...minimal,
      pki: { ...minimal.pki, serverCert: 's', serverKey: 'k' },
      fleetLock,
    });
    assert.deepEqual(c.fleetLock, {
      listen: { host: '127.0.0.1', port: 8443 },
      tls: true,
      ttl: 3_600_000,
      groups: {},
      clients: [],
    });
  });

  it('takes a probe listener without any certificate, and nothing else under health', () => {
    const c = OperatorConfig.parse({ ...minimal, health: { listen: { port: 8081 } } });
    assert.deepEqual(c.health, { listen: { host: '127.0.0.1', port: 8081 } });
    assert.deepEqual(issues({ ...minimal, health: { listen: { port: 8081 }, tls: true } }), [
      'health: Unrecognized key: "tls"',
    ]);
  });

  it('serves FleetLock over plain HTTP without certificates only when asked', () => {
    const c = OperatorConfig.parse({
      ...minimal,
      fleetLock: { listen: { port: 0 }, tls: false, clients: [] },
    });
    assert.equal(c.fleetLock?.tls, false);
    assert.deepEqual(
      issues({ ...minimal, fleetLock: { listen: { port: 70_000 }, tls: false, clients: [] } }),
      ['fleetLock.listen.port: Too big: expected number to be <=65535'],
    );
  });

  it('requires the FleetLock listener to name the ids it serves (made-up ids)', () => {
    assert.deepEqual(issues({ ...minimal, fleetLock: { listen: { port: 0 }, tls: false } }), [
      'fleetLock.clients: required with listen: the ids the listener serves (FleetLock has no auth)',
    ]);
    const client = { id: 'abc', group: 'workers' };
    assert.deepEqual(
      issues({
        ...minimal,
        fleetLock: { listen: { port: 0 }, tls: false, clients: [client, client] },
      }),
      ['fleetLock.clients.1.id: listed twice'],
    );
    assert.deepEqual(
      issues({ ...minimal, fleetLock: { clients: [{ ...client, tokenSha256: 'secret' }] } }),
      ['fleetLock.clients.0.tokenSha256: the lower-case hex SHA-256 of the token (`sha256sum`)'],
    );
  });

  it('reads slot TTLs, a default and per group, without a listener', () => {
    const c = OperatorConfig.parse({
      ...minimal,
      fleetLock: { ttl: '20m', groups: { workers: { ttl: '5m' } } },
    });
    assert.equal(c.fleetLock?.ttl, 20 * 60_000);
    assert.deepEqual(c.fleetLock.groups, { workers: { ttl: 5 * 60_000 } });
    assert.equal(OperatorConfig.parse({ ...minimal }).fleetLock, undefined);
  });

  it('runs in a Kubernetes cluster with Lease leader election, the status mirror and declared objects by default', () => {
    const c = OperatorConfig.parse({ ...minimal, kubernetes: { kubeconfig: 'k' } });
    assert.deepEqual(c.kubernetes, {
      kubeconfig: 'k',
      namespace: 'molt-system',
      leaderElection: true,
      status: true,
      declared: true,
    });
    assert.deepEqual(
      issues({ ...minimal, kubernetes: { kubeconfig: 'k', namespace: 'Molt_NS' } }),
      ['kubernetes.namespace: a namespace name (DNS-1123 label)'],
    );
    // Without a kubeconfig: the pod's service account (an operator running in the cluster).
    assert.deepEqual(issues({ ...minimal, kubernetes: {} }), []);
    assert.equal(
      OperatorConfig.parse({ ...minimal, kubernetes: {} }).kubernetes?.kubeconfig,
      undefined,
    );
  });

  it('lets no node register itself unless a selfRegistration rule names it', () => {
    assert.deepEqual(OperatorConfig.parse(minimal).selfRegistration, []);
    const c = OperatorConfig.parse({
      ...minimal,
      selfRegistration: [{ nodes: ['w-*'], pool: 'workers', labels: { zone: ['a'] } }],
    });
    assert.deepEqual(c.selfRegistration, [
      { nodes: ['w-*'], pool: 'workers', role: 'worker', labels: { zone: ['a'] } },
    ]);
    assert.deepEqual(
      issues({ ...minimal, selfRegistration: [{ nodes: [], pool: 'workers', roles: 'x' }] }),
      [
        'selfRegistration.0.nodes: name at least one node (or a glob like w-*)',
        'selfRegistration.0: Unrecognized key: "roles"',
      ],
    );
  });

  it('reads webhook sinks with their defaults, and names what is wrong with one', () => {
    const c = OperatorConfig.parse({
      ...minimal,
      notifications: [{ name: 'ops', url: 'https://hooks.example.com/molt' }],
    });
    assert.deepEqual(c.notifications, [
      {
        name: 'ops',
        url: 'https://hooks.example.com/molt',
        format: 'json',
        events: ['*'],
        timeout: 10_000,
      },
    ]);
    assert.deepEqual(OperatorConfig.parse(minimal).notifications, []);
    const sink = { name: 'ops', url: 'https://h/x' };
    assert.deepEqual(
      issues({
        ...minimal,
        notifications: [
          sink,
          sink,
          { name: 'a b', url: 'ftp://h/x', format: 'teams', events: [], timeout: '0s' },
        ],
      }).map((m) => m.split(':')[0]),
      [
        'notifications.2.name',
        'notifications.2.url',
        'notifications.2.format',
        'notifications.2.events',
        'notifications.2.timeout',
      ],
    );
    assert.deepEqual(issues({ ...minimal, notifications: [sink, sink] }), [
      'notifications.1.name: listed twice',
    ]);
  });
});
