// SPDX-License-Identifier: Apache-2.0
/**
 * molt's CAPI extension listener over real HTTPS, called the way CAPI calls it (POST, no
 * Content-Type, `?timeout=10s`, the CA from the ExtensionConfig's caBundle, the managers' client
 * certificate); a caller without a certificate from `clientCa` is refused in the handshake.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { createCa, issueCertificate, type PemPair } from '../../platform/pki/certificates.ts';
import type { ListeningApi } from '../../platform/https/server.ts';
import { HookFailure } from '../../protocol/capi-hooks.ts';
import { FakeInPlaceUpdates } from '../ports/in-place-updates.fake.ts';
import { CapiBodyLimit, createCapiExtensionServer } from './server.ts';

const base = '/hooks.runtime.cluster.x-k8s.io/v1alpha1';
const fixtureText = (name: string): string =>
  readFileSync(new URL(`testdata/${name}.json`, import.meta.url), 'utf8');

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

describe('the CAPI extension listener', () => {
  let server: ListeningApi;
  let ca: string;
  /** CAPI's managers' client certificate (`--runtime-extension-client-cert-file`). */
  let capi: PemPair;
  /** A certificate from another CA (a tenant's, a node's). */
  let stranger: PemPair;
  const updates = new FakeInPlaceUpdates({
    managed: ['demo/c1-cp-85mnm', 'demo/c1-md-qbjnv', 'demo/c1-md-qbjnv-mn4b6'],
  });

  before(async () => {
    const pki = await createCa();
    ca = pki.cert;
    const tls = await issueCertificate({ ca: pki, role: 'node', name: 'molt-capi' });
    const managers = await createCa();
    capi = await issueCertificate({ ca: managers, role: 'operator', name: 'capi-manager' });
    stranger = await issueCertificate({ ca: pki, role: 'operator', name: 'tenant' });
    server = await createCapiExtensionServer({
      deps: { updates, releaseForVersion: (v) => (v === 'v1.35.0' ? 'molt-2.4.0' : undefined) },
      tls: { ...tls, clientCa: managers.cert },
    });
  });
  after(() => server.close());

  /** POST like CAPI's client: no Content-Type, only User-Agent and Accept-Encoding. */
  function post(
    path: string,
    body: string,
    headers: Record<string, string> = {},
    as: PemPair | null = capi,
  ): Promise<Answer> {
    return postTo({ url: server.url, ca }, path, body, { headers, as });
  }

  /** POST to `at` (its URL and the CA of its serving certificate). */
  function postTo(
    at: { readonly url: string; readonly ca: string },
    path: string,
    body: string,
    o: { readonly headers?: Record<string, string>; readonly as: PemPair | null },
  ): Promise<Answer> {
    const { headers = {}, as } = o;
    const url = new URL(`${path}?timeout=10s`, at.url);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          ca: at.ca,
          ...(as !== null && { cert: as.cert, key: as.key }),
          headers: { 'user-agent': 'Go-http-client/1.1', 'accept-encoding': 'gzip', ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('refuses a caller without a client certificate from clientCa: no hook is asked', async () => {
    const calls = updates.calls.length;
    const body = fixtureText('updatemachine.kcp-machine.request');
    for (const as of [null, stranger])
      await assert.rejects(post(`${base}/updatemachine/update-machine`, body, {}, as));
    assert.equal(updates.calls.length, calls);
  });

  it('will not start without clientCa unless told it is insecure', async () => {
    const pki = await createCa();
    const tls = await issueCertificate({ ca: pki, role: 'node', name: 'molt-capi' });
    const deps = { updates, releaseForVersion: () => undefined };
    await assert.rejects(createCapiExtensionServer({ deps, tls }), (e: unknown) =>
      isMoltError(e, ErrorCode.CapiClientAuthRequired),
    );
    const open = await createCapiExtensionServer({ deps, tls, insecureNoClientAuth: true });
    await open.close();
  });

  it('with clientNames, refuses another certificate of the same CA (403): no hook is asked', async () => {
    const managers = await createCa();
    const pki = await createCa();
    const tls = await issueCertificate({ ca: pki, role: 'node', name: 'molt-capi' });
    const named = await createCapiExtensionServer({
      deps: { updates, releaseForVersion: () => undefined },
      tls: { ...tls, clientCa: managers.cert },
      clientNames: ['capi-manager'],
    });
    try {
      const kubelet = await issueCertificate({ ca: managers, role: 'node', name: 'kubelet-n1' });
      const manager = await issueCertificate({
        ca: managers,
        role: 'operator',
        name: 'capi-manager',
      });
      const calls = updates.calls.length;
      const body = fixtureText('updatemachine.kcp-machine.request');
      const path = `${base}/updatemachine/update-machine`;
      const at = { url: named.url, ca: pki.cert };
      const refused = await postTo(at, path, body, { as: kubelet });
      assert.equal(refused.status, 403);
      assert.match(String(refused.body['message']), /kubelet-n1.*none of capi\.clientNames/);
      assert.equal(updates.calls.length, calls);
      const served = await postTo(at, `${base}/discovery`, fixtureText('discovery.request'), {
        as: manager,
      });
      assert.equal(served.status, 200);
      await assert.rejects(
        createCapiExtensionServer({
          deps: { updates, releaseForVersion: () => undefined },
          tls,
          insecureNoClientAuth: true,
          clientNames: ['capi-manager'],
        }),
        (e: unknown) => isMoltError(e, ErrorCode.CapiClientAuthRequired),
      );
    } finally {
      await named.close();
    }
  });

  it('answers discovery with three Fail handlers', async () => {
    const a = await post(`${base}/discovery`, fixtureText('discovery.request'));
    assert.equal(a.status, 200);
    assert.equal(a.body['kind'], 'DiscoveryResponse');
    assert.deepEqual(
      (a.body['handlers'] as { name: string; failurePolicy: string }[]).map(
        (h) => `${h.name}:${h.failurePolicy}`,
      ),
      ['can-update-machine:Fail', 'can-update-machineset:Fail', 'update-machine:Fail'],
    );
  });

  it('answers CanUpdateMachine without a Content-Type with a patch on the version', async () => {
    const a = await post(
      `${base}/canupdatemachine/can-update-machine`,
      fixtureText('canupdatemachine.kcp-version.request'),
    );
    assert.equal(a.status, 200);
    assert.equal(a.body['status'], 'Success');
    const patch = a.body['machinePatch'] as { patch: string };
    assert.deepEqual(JSON.parse(Buffer.from(patch.patch, 'base64').toString()), [
      { op: 'replace', path: '/spec/version', value: 'v1.35.0' },
    ]);
  });

  it('reads the body as JSON whatever Content-Type a client claims', async () => {
    const a = await post(
      `${base}/canupdatemachineset/can-update-machineset`,
      fixtureText('canupdatemachineset.md-version.request'),
      {
        'content-type': 'text/plain',
      },
    );
    assert.equal(a.status, 200);
    assert.ok(a.body['machineSetPatch']);
  });

  it('answers UpdateMachine in progress, then done', async () => {
    const body = fixtureText('updatemachine.kcp-machine.request');
    const first = await post(`${base}/updatemachine/update-machine`, body);
    const second = await post(`${base}/updatemachine/update-machine`, body);
    assert.deepEqual([first.body['status'], first.body['retryAfterSeconds']], ['Success', 10]);
    assert.deepEqual([second.body['status'], second.body['retryAfterSeconds']], ['Success', 0]);
  });

  it('refuses a body over 1 MiB with 413 in CAPI’s shape', async () => {
    const a = await post(`${base}/updatemachine/update-machine`, ' '.repeat(CapiBodyLimit + 1));
    assert.equal(a.status, 413);
    HookFailure.parse(a.body);
  });

  it('answers an unknown hook or handler 404 in CAPI’s shape', async () => {
    for (const path of [
      `${base}/beforeclustercreate/before-cluster-create`,
      `${base}/canupdatemachine/other`,
      '/x',
    ]) {
      const a = await post(path, '{}');
      assert.equal(a.status, 404, path);
      assert.equal(HookFailure.parse(a.body).status, 'Failure');
    }
  });

  it('answers malformed JSON and a schema error with a Failure naming the problem (HTTP 200, like upstream)', async () => {
    const bad = await post(`${base}/canupdatemachine/can-update-machine`, '{"kind":');
    assert.deepEqual(
      [bad.status, bad.body['status'], bad.body['kind']],
      [200, 'Failure', 'CanUpdateMachineResponse'],
    );
    assert.match(String(bad.body['message']), /not JSON/);
    const req = JSON.parse(fixtureText('updatemachine.md-machine.request')) as {
      desired: { machine: { spec: Record<string, unknown> } };
    };
    req.desired.machine.spec['version'] = 7;
    const wrong = await post(`${base}/updatemachine/update-machine`, JSON.stringify(req));
    assert.deepEqual(
      [wrong.status, wrong.body['status'], wrong.body['retryAfterSeconds']],
      [200, 'Failure', 0],
    );
    assert.match(String(wrong.body['message']), /^desired\.machine\.spec\.version: /);
  });

  it('leaves a machine molt does not manage alone: no patch, and UpdateMachine fails', async () => {
    const calls = updates.calls.length;
    const other = (name: string) => fixtureText(name).replaceAll('c1-cp-85mnm', 'c1-cp-other');
    const can = await post(
      `${base}/canupdatemachine/can-update-machine`,
      other('canupdatemachine.kcp-version.request'),
    );
    assert.deepEqual(
      [can.status, can.body['status'], can.body['machinePatch']],
      [200, 'Success', undefined],
    );
    assert.match(String(can.body['message']), /does not manage Machine demo\/c1-cp-other/);
    const upd = await post(
      `${base}/updatemachine/update-machine`,
      other('updatemachine.kcp-machine.request'),
    );
    assert.deepEqual([upd.status, upd.body['status']], [200, 'Failure']);
    assert.equal(updates.calls.length, calls, 'nothing was asked of molt');
  });
});
