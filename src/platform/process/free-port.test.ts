// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { candidatePort, FetchBlockedPorts, freePort } from './free-port.ts';

const ephemeralLow = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
);

describe('freePort', () => {
  it('picks ports below the kernel’s ephemeral range, where no outgoing connection can take them, and free', async () => {
    const ports = [];
    for (let i = 0; i < 20; i++) ports.push(await freePort());
    for (const port of ports) {
      assert.ok(
        port >= 1024 && port < ephemeralLow,
        `${String(port)} below ${String(ephemeralLow)}`,
      );
      await new Promise<void>((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () =>
          server.close(() => {
            resolve();
          }),
        );
      });
    }
    assert.ok(new Set(ports).size > 15, 'chosen at random, not one after another');
  });

  it('never offers a port fetch refuses to connect to', async () => {
    for (const port of FetchBlockedPorts) {
      // As molt's clients would meet it: fetch refuses before it connects at all.
      const refused = await fetch(`http://127.0.0.1:${String(port)}/`).then(
        () => '',
        (e: unknown) => String((e as { cause?: unknown }).cause ?? e),
      );
      assert.match(refused, /bad port/i, `fetch refuses ${String(port)}`);
      const low = 1024;
      const high = ephemeralLow - 1;
      // The random number that lands exactly on this port.
      const r = (port - low + 0.5) / (high - low + 1);
      assert.equal(
        candidatePort(() => r),
        undefined,
        `${String(port)} is never offered`,
      );
      let below = port - 1;
      while (FetchBlockedPorts.has(below)) below--;
      const beside = (below - low + 0.5) / (high - low + 1);
      assert.equal(
        candidatePort(() => beside),
        below,
        `${String(below)}, below it, is offered`,
      );
    }
  });
});
