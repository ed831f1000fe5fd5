// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark R1's simulated agents: one child process (started by `r1.ts` with `fork`) serving a
 * share of the fleet, one mutual-TLS listener per machine on its own loopback port. Each endpoint
 * presents a node certificate of its own, `CN=<machine id>, O=molt:node`, issued by the fleet CA
 * (the operator may check that the agent it reaches is the machine it expects), asks for a fleet
 * client certificate, and answers the agent API as protocol/agent.ts defines it: status, upgrade
 * and rollback (operator or admin only), operations, and the event streams — `/v1/logs` (tail,
 * follow) and `/v1/events` (one operation, resumed after `Last-Event-ID`, live until its result).
 *
 * An upgrade is the real phase sequence, quickly: Pulling … ArmingBootOnce (`stepMs` each), a
 * reboot (the listener closes, every connection is cut, and it listens again on the same port
 * after `rebootMs`), then HealthChecking and Committing on the new slot and a `Succeeded` result.
 * Every upgrade POST is counted per image, accepted or refused as busy, so the parent can tell a
 * duplicated start from a missed one.
 *
 * Each leaf has its own key pair: issuing one costs ~8 ms (P-256 key, x509 in JavaScript), 4 s of
 * CPU for a 500-machine share, which is acceptable for a benchmark that runs minutes.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { Phase } from '../src/core/upgrade/phase.ts';
import { issueCertificate } from '../src/platform/pki/certificates.ts';
import { loadCa } from '../src/platform/pki/store.ts';
import type { AgentEvent, AgentStatus, ResultView } from '../src/protocol/agent.ts';

/** What the parent sends to start a share. */
export interface SimConfig {
  readonly caDir: string;
  readonly ids: readonly string[];
  /** Release digest → version, for what an upgraded machine reports. */
  readonly releases: Readonly<Record<string, string>>;
  /** The release every machine boots at first. */
  readonly digest: string;
  readonly stepMs: number;
  readonly rebootMs: number;
}

/** What a machine saw, for the parent's count of starts. */
export interface SimCounts {
  /** Upgrade POSTs by image (accepted or refused). */
  readonly upgrades: Record<string, number>;
  readonly rollbacks: number;
  readonly version: string | null;
}

/** Messages from the child. */
export type SimMessage =
  | { readonly type: 'ready'; readonly endpoints: Record<string, number>; readonly certMs: number }
  | { readonly type: 'counts'; readonly counts: Record<string, SimCounts> };

const forwardPhases = [
  Phase.Pulling,
  Phase.Cordoning,
  Phase.Draining,
  Phase.WritingSlot,
  Phase.VerifyingSlot,
  Phase.ArmingBootOnce,
  Phase.Rebooting,
] as const;

interface Follower {
  readonly res: ServerResponse;
  /** Only this operation's events, ending at its result (`/v1/events`). */
  readonly operation?: string;
}

interface Operation {
  readonly id: string;
  readonly kind: 'upgrade' | 'rollback';
  readonly image?: string;
  readonly startedAt: string;
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': text.length });
  res.end(text);
};

const error = (res: ServerResponse, status: number, code: string, message: string): void => {
  json(res, status, { code, message });
};

async function readBody(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text === '' ? {} : JSON.parse(text);
}

/** One simulated machine: its slots, journal, followers and listener. */
class SimMachine {
  readonly counts = { upgrades: {} as Record<string, number>, rollbacks: 0 };
  readonly #journal: AgentEvent[] = [];
  readonly #followers = new Set<Follower>();
  readonly #sockets = new Set<Socket>();
  #booted: 'A' | 'B' = 'A';
  #slots: Record<'A' | 'B', { digest: string | null; version: string | null }>;
  #bootId = randomUUID();
  #phase: string = Phase.Idle;
  #operation: Operation | null = null;
  #last: ResultView | null = null;
  #committed: 'A' | 'B' = 'A';
  readonly #server: Server;
  readonly id: string;
  readonly c: SimConfig;
  port = 0;

  constructor(id: string, tls: { cert: string; key: string; ca: string }, c: SimConfig) {
    this.id = id;
    this.c = c;
    this.#slots = {
      A: { digest: c.digest, version: c.releases[c.digest] ?? null },
      B: { digest: null, version: null },
    };
    this.#server = createServer(
      { ...tls, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
      (req, res) => {
        this.#route(req, res).catch((e: unknown) => {
          if (!res.headersSent) error(res, 500, 'MOLT_INTERNAL', String(e));
        });
      },
    );
    this.#server.keepAliveTimeout = 30_000;
    this.#server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.once('close', () => this.#sockets.delete(s));
    });
  }

  async listen(port = 0): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          this.#server.once('error', reject);
          this.#server.listen(port, '127.0.0.1', () => {
            this.#server.off('error', reject);
            resolve();
          });
        });
        const address = this.#server.address();
        if (address !== null && typeof address === 'object') this.port = address.port;
        return;
      } catch (e) {
        if (attempt >= 50) throw e;
        await sleep(100);
      }
    }
  }

  status(): AgentStatus {
    const slot = (s: 'A' | 'B') => ({
      slot: s,
      status: this.#slots[s].digest === null ? ('empty' as const) : ('ready' as const),
      version: this.#slots[s].version,
      digest: this.#slots[s].digest,
      generation: this.#slots[s].digest === null ? null : 1,
    });
    const trial = this.#operation !== null && this.#phase !== Phase.Pulling;
    return {
      node: this.id,
      role: 'worker',
      bootId: this.#bootId,
      bootedSlot: this.#booted,
      version: this.#slots[this.#booted].version,
      slots: [slot('A'), slot('B')],
      boot: {
        bootloader: 'grub',
        committed: this.#committed,
        oneShot: null,
        entries: [
          { slot: 'A', state: this.#committed === 'A' ? 'committed' : 'bootable' },
          {
            slot: 'B',
            state: this.#committed === 'B' ? 'committed' : trial ? 'trial' : 'bootable',
          },
        ],
      },
      phase: this.#phase,
      operation: this.#operation === null ? null : { ...this.#operation, phase: this.#phase },
      last: this.#last,
    };
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://sim');
    const peer = req.socket instanceof TLSSocket ? req.socket.getPeerCertificate() : undefined;
    const writer = ['molt:operator', 'molt:admin'].includes(String(peer?.subject.O));
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    if (route === 'GET /v1/status') json(res, 200, this.status());
    else if (route === 'GET /v1/operations') json(res, 200, []);
    else if (route === 'GET /v1/logs' || route === 'GET /v1/events') this.#stream(req, res, url);
    else if (req.method === 'POST' && !writer)
      error(res, 403, 'MOLT_FORBIDDEN', 'this certificate may only read');
    else if (route === 'POST /v1/upgrade') this.#upgrade(res, await readBody(req));
    else if (route === 'POST /v1/rollback') this.#rollback(res);
    else error(res, 404, 'MOLT_NOT_FOUND', `no route ${route}`);
  }

  #upgrade(res: ServerResponse, body: unknown): void {
    const image =
      typeof body === 'object' && body !== null ? (body as { image?: unknown }).image : undefined;
    if (typeof image !== 'string') {
      error(res, 400, 'MOLT_BAD_REQUEST', 'the body needs an image');
      return;
    }
    this.counts.upgrades[image] = (this.counts.upgrades[image] ?? 0) + 1;
    if (this.#operation !== null) {
      this.#busy(res);
      return;
    }
    const op = this.#begin('upgrade', image);
    json(res, 202, { operationId: op.id });
    void this.#runUpgrade(op, image.slice(image.indexOf('@') + 1));
  }

  #rollback(res: ServerResponse): void {
    this.counts.rollbacks++;
    if (this.#operation !== null) {
      this.#busy(res);
      return;
    }
    const op = this.#begin('rollback');
    json(res, 202, { operationId: op.id });
    void this.#runRollback(op);
  }

  #busy(res: ServerResponse): void {
    json(res, 409, {
      code: 'MOLT_AGENT_BUSY',
      message: `${this.id} is busy with operation ${this.#operation?.id ?? ''}`,
      details: { operation: this.#operation },
    });
  }

  #begin(kind: 'upgrade' | 'rollback', image?: string): Operation {
    const op = {
      id: `op-${randomUUID()}`,
      kind,
      ...(image !== undefined && { image }),
      startedAt: new Date().toISOString(),
    };
    this.#operation = op;
    return op;
  }

  #emit(op: Operation, e: Omit<AgentEvent, 'operationId' | 'seq' | 'time'>): void {
    const seq = this.#journal.filter((x) => x.operationId === op.id).length;
    const event: AgentEvent = { operationId: op.id, seq, time: new Date().toISOString(), ...e };
    this.#journal.push(event);
    if (this.#journal.length > 200) this.#journal.shift();
    for (const f of this.#followers) {
      if (f.operation !== undefined && f.operation !== op.id) continue;
      f.res.write(frame(event));
      if (f.operation !== undefined && e.kind === 'result') f.res.end();
    }
  }

  async #enter(op: Operation, phase: string): Promise<void> {
    this.#phase = phase;
    this.#emit(op, { kind: 'phase', phase, status: 'started', message: phase });
    await sleep(this.c.stepMs);
  }

  async #runUpgrade(op: Operation, digest: string): Promise<void> {
    const other = this.#booted === 'A' ? 'B' : 'A';
    for (const phase of forwardPhases) {
      await this.#enter(op, phase);
      if (phase === Phase.WritingSlot)
        this.#slots[other] = { digest, version: this.c.releases[digest] ?? null };
    }
    await this.#reboot();
    this.#booted = other;
    await this.#enter(op, Phase.HealthChecking);
    await this.#enter(op, Phase.Committing);
    this.#committed = other;
    this.#finish(op, 'Succeeded');
  }

  async #runRollback(op: Operation): Promise<void> {
    await this.#enter(op, Phase.RollingBack);
    await this.#reboot();
    this.#booted = this.#booted === 'A' ? 'B' : 'A';
    this.#committed = this.#booted;
    this.#finish(op, 'RolledBack', 'manual');
  }

  #finish(op: Operation, result: ResultView['result'], reason?: string): void {
    this.#phase = Phase.Idle;
    this.#operation = null;
    this.#last = {
      operationId: op.id,
      kind: op.kind,
      result,
      ...(reason !== undefined && { reason }),
      finishedAt: new Date().toISOString(),
    };
    this.#emit(op, {
      kind: 'result',
      phase: Phase.Idle,
      status: 'done',
      message: result,
      result: { result, ...(reason !== undefined && { reason }) },
    });
  }

  /** The machine goes away: listener closed, every connection cut, back after `rebootMs`. */
  async #reboot(): Promise<void> {
    const closed = new Promise<void>((resolve) =>
      this.#server.close(() => {
        resolve();
      }),
    );
    for (const s of this.#sockets) s.destroy();
    this.#followers.clear();
    await closed;
    await sleep(this.c.rebootMs);
    this.#bootId = randomUUID();
    await this.listen(this.port);
  }

  #stream(req: IncomingMessage, res: ServerResponse, url: URL): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    res.write('retry: 2000\n\n');
    const follow = url.searchParams.get('follow') === 'true';
    const events = url.pathname === '/v1/events';
    const operation = events
      ? (url.searchParams.get('operation') ??
        this.#operation?.id ??
        this.#journal.at(-1)?.operationId)
      : undefined;
    // `Last-Event-ID: <operationId>:<seq>` resumes after that event.
    const [afterOp, afterSeq] = String(req.headers['last-event-id'] ?? '').split(':');
    const tail = url.searchParams.get('tail');
    let replay = this.#journal.filter(
      (e) => operation === undefined || e.operationId === operation,
    );
    if (afterOp !== undefined && afterOp !== '' && afterSeq !== undefined)
      replay = replay.filter((e) => e.operationId !== afterOp || e.seq > Number(afterSeq));
    if (!events && tail !== null) replay = Number(tail) === 0 ? [] : replay.slice(-Number(tail));
    for (const e of replay) res.write(frame(e));
    const finished = events && replay.some((e) => e.kind === 'result');
    if (!follow || finished) {
      res.end();
      return;
    }
    const f: Follower = { res, ...(operation !== undefined && { operation }) };
    this.#followers.add(f);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    res.once('close', () => {
      clearInterval(keepAlive);
      this.#followers.delete(f);
    });
  }
}

const frame = (e: AgentEvent): string =>
  `id: ${e.operationId}:${String(e.seq)}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`;

/** Issue every machine's certificate, listen, tell the parent; then answer count requests. */
async function main(c: SimConfig): Promise<void> {
  const ca = await loadCa(c.caDir);
  const t0 = performance.now();
  const machines: SimMachine[] = [];
  for (const id of c.ids) {
    const pair = await issueCertificate({ ca, role: 'node', name: id, days: 1 });
    machines.push(new SimMachine(id, { ...pair, ca: ca.cert }, c));
  }
  const certMs = performance.now() - t0;
  for (const m of machines) await m.listen();
  const send = (m: SimMessage): void => {
    process.send?.(m);
  };
  send({
    type: 'ready',
    endpoints: Object.fromEntries(machines.map((m) => [m.id, m.port])),
    certMs,
  });
  process.on('message', (msg: { type?: string }) => {
    if (msg.type !== 'counts') return;
    const counts: Record<string, SimCounts> = {};
    for (const m of machines) counts[m.id] = { ...m.counts, version: m.status().version };
    send({ type: 'counts', counts });
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.send !== undefined) {
  process.once('message', (c: SimConfig) => {
    void main(c);
  });
}
