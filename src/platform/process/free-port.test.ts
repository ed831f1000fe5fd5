// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freePort } from './free-port.ts';

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
});
