// SPDX-License-Identifier: Apache-2.0
// The HTTP machine provider against real servers on loopback: the testkit's lab provider (the
// protocol end to end: replace, status, idempotent re-ask, a failed re-image) and a raw server
// for the error mapping (5xx and timeouts retryable, 4xx and garbage refused, a closed port).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { startLabProvider, type LabProvider } from '../../../testkit/lab-provider.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { createHttpProvider } from './index.ts';

const m1: MachineRecord = {
  id: 'w-1',
  endpoint: 'https://127.0.0.1:1',
  role: 'worker',
  pool: 'workers',
  labels: {},
};
const request = { image: 'reg/molt@sha256:bb', digest: 'sha256:bb', version: '1.1.0' };

const until = async (f: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 100 && !(await f()); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('HTTP machine provider against the lab provider', () => {
  let lab: LabProvider;
  const gate = { release: (): void => undefined, fail: false };
  before(async () => {
    lab = await startLabProvider({
      reimage: (r) =>
        new Promise<void>((resolve, reject) => {
          gate.release = () => {
            if (gate.fail || r.machine === 'bad') reject(new Error('disk wipe failed'));
            else resolve();
          };
        }),
    });
  });
  after(() => lab.close());

  it('replaces a machine: running, then succeeded; asking again while it runs answers the same id', async () => {
    const p = createHttpProvider({ url: `${lab.url}/` });
    const { operationId } = await p.replace(m1, request);
    assert.deepEqual(await p.status(m1, operationId), { state: 'running' });
    assert.deepEqual(
      await p.replace(m1, request),
      { operationId },
      'idempotent per machine and digest',
    );
    assert.deepEqual(lab.requests[0], { machine: 'w-1', endpoint: m1.endpoint, ...request });
    gate.release();
    await until(async () => (await p.status(m1, operationId)).state !== 'running');
    assert.deepEqual(await p.status(m1, operationId), { state: 'succeeded' });
  });

  it('reports a failed re-image with its message, and refuses an unknown operation', async () => {
    const p = createHttpProvider({ url: lab.url });
    const bad = { ...m1, id: 'bad' };
    const { operationId } = await p.replace(bad, request);
    gate.release();
    await until(async () => (await p.status(bad, operationId)).state !== 'running');
    assert.deepEqual(await p.status(bad, operationId), {
      state: 'failed',
      message: 'disk wipe failed',
    });
    await assert.rejects(p.status(m1, 'nope'), (e: unknown) => {
      assert.ok(isMoltError(e, ErrorCode.ProviderFailed), String(e));
      assert.match(e.message, /HTTP 404: no such operation/);
      assert.equal(e.retryable, false);
      return true;
    });
  });
});

describe('HTTP machine provider: errors', () => {
  let server: Server;
  let base: string;
  before(async () => {
    server = createServer((req, res) => {
      if (req.url?.startsWith('/hang') === true) return;
      if (req.url?.startsWith('/down') === true) return void res.writeHead(503).end('{}');
      if (req.url?.startsWith('/garbage') === true) return void res.writeHead(202).end('<html>');
      if (req.url?.startsWith('/odd') === true)
        return void res.writeHead(200).end(JSON.stringify({ state: 'exploded', operationId: 7 }));
      res.writeHead(400).end(JSON.stringify({ message: 'unknown machine' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const rejects = async (
    call: Promise<unknown>,
    code: ErrorCode,
    retryable: boolean,
    pattern: RegExp,
  ): Promise<void> => {
    await assert.rejects(call, (e: unknown) => {
      assert.ok(isMoltError(e, code), String(e));
      assert.equal(e.retryable, retryable);
      assert.match(e.message, pattern);
      return true;
    });
  };

  it('5xx, a timeout and a closed port are retryable MOLT_PROVIDER_UNREACHABLE', async () => {
    await rejects(
      createHttpProvider({ url: `${base}/down` }).replace(m1, request),
      ErrorCode.ProviderUnreachable,
      true,
      /replace w-1: provider answered HTTP 503/,
    );
    await rejects(
      createHttpProvider({ url: `${base}/hang`, timeoutMs: 200 }).status(m1, 'x'),
      ErrorCode.ProviderUnreachable,
      true,
      /unreachable: .*(abort|timeout)/i,
    );
    await rejects(
      createHttpProvider({ url: 'http://127.0.0.1:1' }).replace(m1, request),
      ErrorCode.ProviderUnreachable,
      true,
      /ECONNREFUSED|fetch failed/,
    );
  });

  it('refuses an address with a user or password, and no error quotes them', async () => {
    const secret = 'http://molt:s3cret@127.0.0.1:1';
    await assert.rejects(createHttpProvider({ url: secret }).replace(m1, request), (e: unknown) => {
      assert.ok(isMoltError(e, ErrorCode.ProviderFailed), String(e));
      assert.equal(e.retryable, false);
      assert.match(e.message, /replace w-1: .*carries a user or password/);
      assert.doesNotMatch(`${e.message} ${e.hint ?? ''}`, /s3cret|molt:/);
      return true;
    });
  });

  it('4xx and answers that are not the protocol are MOLT_PROVIDER_FAILED', async () => {
    await rejects(
      createHttpProvider({ url: base }).replace(m1, request),
      ErrorCode.ProviderFailed,
      false,
      /HTTP 400: unknown machine/,
    );
    await rejects(
      createHttpProvider({ url: `${base}/garbage` }).replace(m1, request),
      ErrorCode.ProviderFailed,
      false,
      /without a JSON object/,
    );
    await rejects(
      createHttpProvider({ url: `${base}/odd` }).replace(m1, request),
      ErrorCode.ProviderFailed,
      false,
      /no operationId/,
    );
    await rejects(
      createHttpProvider({ url: `${base}/odd` }).status(m1, 'x'),
      ErrorCode.ProviderFailed,
      false,
      /state "exploded" is not running/,
    );
  });
});
