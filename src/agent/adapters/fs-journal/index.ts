// SPDX-License-Identifier: Apache-2.0
/**
 * The journal on disk (docs/adr/0004 §2): `state/journal/current.json` is the write-ahead record,
 * replaced atomically; `state/journal/ops/<opId>.jsonl` holds each operation's events, one fsynced
 * line each, so "why did it roll back" can be answered after any number of reboots. A line torn by
 * a power cut is the last one of its file and is skipped when read.
 */
import { mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { AgentEvent } from '../../../protocol/agent.ts';
import {
  summariseOperations,
  type JournalRecord,
  type JournalStore,
  type NewAgentEvent,
} from '../../ports/journal-store.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';

/** How many operations' event files are kept; older ones are deleted on append of a new one. */
const KeptOperations = 50;
const SafeOperationId = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function createFsJournalStore(root: string): JournalStore {
  const dir = join(root, 'state', 'journal');
  const opsDir = join(dir, 'ops');
  const listeners = new Set<(event: AgentEvent) => void>();
  const nextSeq = new Map<string, number>();
  let appending: Promise<unknown> = Promise.resolve();

  const opFile = (operationId: string): string => {
    if (!SafeOperationId.test(operationId)) {
      throw new MoltError(
        ErrorCode.BadInput,
        `operation id ${JSON.stringify(operationId)} is not valid`,
      );
    }
    return join(opsDir, `${operationId}.jsonl`);
  };

  async function appendNow(event: NewAgentEvent): Promise<AgentEvent> {
    const file = opFile(event.operationId);
    let seq = nextSeq.get(event.operationId);
    if (seq === undefined) {
      seq = (await readEvents(file)).reduce((max, e) => Math.max(max, e.seq), 0) + 1;
      if (seq === 1) await pruneOld(opsDir);
    }
    const stored: AgentEvent = { ...event, seq };
    await mkdir(opsDir, { recursive: true });
    const handle = await open(file, 'a');
    try {
      await handle.write(`${JSON.stringify(stored)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    nextSeq.set(event.operationId, seq + 1);
    for (const listener of listeners) listener(stored);
    return stored;
  }

  return {
    async load() {
      let text: string;
      try {
        text = await readFile(join(dir, 'current.json'), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      return parseRecord(text, join(dir, 'current.json'));
    },
    save: (record: JournalRecord) =>
      writeFileAtomic(join(dir, 'current.json'), `${JSON.stringify(record, null, 2)}\n`),
    append(event: NewAgentEvent) {
      // Appends are serialised so seq numbers are dense even when callers do not await.
      const result = appending.then(() => appendNow(event));
      appending = result.catch(() => undefined);
      return result;
    },
    async events(operationId?: string, afterSeq = 0) {
      if (operationId !== undefined)
        return (await readEvents(opFile(operationId))).filter((e) => e.seq > afterSeq);
      return sortByTime(await readAll(opsDir));
    },
    async operations() {
      return summariseOperations(await readAll(opsDir));
    },
    subscribe(listener: (event: AgentEvent) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

function parseRecord(text: string, path: string): JournalRecord {
  try {
    const value = JSON.parse(text) as JournalRecord;
    if (
      typeof value.rev !== 'number' ||
      typeof value.state !== 'object' ||
      !Array.isArray(value.commands)
    ) {
      throw new Error('missing rev, state or commands');
    }
    return value;
  } catch (error) {
    // The record is written by rename, so a torn record means someone else edited it.
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `the agent journal ${path} is unreadable: ${String(error)}`,
      {
        hint: 'inspect or move the file aside; the agent will start from Idle without it',
        cause: error,
      },
    );
  }
}

async function readEvents(file: string): Promise<AgentEvent[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const events: AgentEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const parsed = AgentEvent.safeParse(safeJson(line));
    if (parsed.success) events.push(parsed.data);
  }
  return events;
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

async function listOpFiles(opsDir: string): Promise<string[]> {
  try {
    return (await readdir(opsDir))
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => join(opsDir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function readAll(opsDir: string): Promise<AgentEvent[]> {
  const lists = await Promise.all((await listOpFiles(opsDir)).map(readEvents));
  return lists.flat();
}

function sortByTime(events: AgentEvent[]): AgentEvent[] {
  return events.sort((a, b) => a.time.localeCompare(b.time) || a.seq - b.seq);
}

async function pruneOld(opsDir: string): Promise<void> {
  const files = await listOpFiles(opsDir);
  if (files.length < KeptOperations) return;
  const withTimes = await Promise.all(
    files.map(async (file) => ({ file, mtime: (await stat(file)).mtimeMs })),
  );
  withTimes.sort((a, b) => a.mtime - b.mtime);
  for (const { file } of withTimes.slice(0, files.length - KeptOperations + 1))
    await rm(file, { force: true });
}
