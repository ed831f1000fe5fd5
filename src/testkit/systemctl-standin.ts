// SPDX-License-Identifier: Apache-2.0
/**
 * A FAKE of `systemctl`, for tests only: no machine here runs systemd as PID 1 (the sandbox's
 * PID 1 is not systemd, so the real systemctl cannot answer), and the systemd adapters must still
 * be exercised through a process boundary with real argument arrays and exit codes. It is a
 * POSIX shell script keeping each unit's state in a file; it answers the calls molt makes
 * (`show -p LoadState --value`, `show -p ActiveState[,SubState],MainPID,ActiveEnterTimestamp`,
 * `show -p ConditionResult,ConditionTimestamp`, `is-active`,
 * `start`, `restart`, `stop`, `daemon-reload`, `is-system-running`,
 * `list-units --failed --plain --no-legend`) with systemctl's output format and exit codes. The
 * real systemctl is proven in the VM tests (docs/real-machines.md).
 */
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../platform/process/managed-process.ts';

const script = String.raw`#!/bin/sh
# FAKE systemctl (molt testkit): unit states live in files under state/ beside this script.
d="$(dirname "$0")/state"
echo "$*" >> "$d/calls"
unit_state() { if [ -f "$d/$1" ]; then cat "$d/$1"; else echo unknown; fi; }
case "$1" in
  show)
    [ "$2" = "--timestamp=unix" ] && shift
    if [ "$4" = "--value" ]; then
      # show -p LoadState --value UNIT
      if [ -f "$d/$5" ]; then echo loaded; else echo not-found; fi
    elif [ "$3" = "ConditionResult,ConditionTimestamp" ]; then
      # show -p ConditionResult,ConditionTimestamp UNIT: "no" once a start found a condition false
      if [ -f "$d/$4.nocondition" ] && [ -f "$d/$4.checked" ]; then echo ConditionResult=no; else echo ConditionResult=yes; fi
      echo "ConditionTimestamp=$(cat "$d/$4.checked" 2>/dev/null)"
    else
      # show -p ActiveState[,SubState],MainPID,ActiveEnterTimestamp UNIT; "auto-restart": the
      # process exited and Restart= starts it again after RestartSec (systemd says "activating")
      s=$(unit_state "$4"); [ "$s" = unknown ] && s=inactive
      case "$s" in
        auto-restart) echo "ActiveState=activating"; sub=auto-restart ;;
        active) echo "ActiveState=$s"; sub=running ;;
        activating) echo "ActiveState=$s"; sub=start ;;
        failed) echo "ActiveState=$s"; sub=failed ;;
        *) echo "ActiveState=$s"; sub=dead ;;
      esac
      case "$3" in *SubState*) echo "SubState=$sub" ;; esac
      if [ -f "$d/$4.pid" ]; then echo "MainPID=$(cat "$d/$4.pid")"; else echo "MainPID=0"; fi
      echo "ActiveEnterTimestamp=$(cat "$d/$4.since" 2>/dev/null)"
    fi ;;
  daemon-reload)
    # Units written to the unit directory (when there is one) become known, stopped.
    if [ -f "$d/unitdir" ]; then
      for f in "$(cat "$d/unitdir")"/*.service; do
        [ -f "$f" ] || continue
        u=$(basename "$f"); [ -f "$d/$u" ] || echo inactive > "$d/$u"
      done
    fi ;;
  restart)
    [ -f "$d/$2" ] || { echo "Failed to restart $2: Unit $2 not found." >&2; exit 5; }
    [ -f "$d/$2.nostart" ] && { echo "Job for $2 failed because the control process exited with error code." >&2; echo failed > "$d/$2"; exit 1; }
    echo "@$(date +%s)" > "$d/$2.since"
    echo active > "$d/$2" ;;
  is-active)
    shift; rc=0
    for u in "$@"; do
      s=$(unit_state "$u"); [ "$s" = unknown ] && s=inactive; [ "$s" = auto-restart ] && s=activating
      echo "$s"; [ "$s" = active ] || rc=3
    done
    exit $rc ;;
  start)
    [ -f "$d/$2" ] || { echo "Failed to start $2: Unit $2 not found." >&2; exit 5; }
    echo "@$(date +%s)" > "$d/$2.checked"
    # A false condition (ConditionPathExists=…): the start succeeds and the unit stays inactive.
    [ -f "$d/$2.nocondition" ] && { echo inactive > "$d/$2"; exit 0; }
    [ -f "$d/$2.nostart" ] && { echo "Job for $2 failed because the control process exited with error code." >&2; echo failed > "$d/$2"; exit 1; }
    echo "@$(date +%s)" > "$d/$2.since"
    echo active > "$d/$2" ;;
  stop)
    [ -f "$d/$2" ] || { echo "Failed to stop $2: Unit $2 not loaded." >&2; exit 5; }
    [ -f "$d/$2.stuck" ] && { echo deactivating > "$d/$2"; exec sleep 30; }
    if [ -f "$d/$2.pid" ]; then
      p=$(cat "$d/$2.pid"); kill -9 "$p" 2>/dev/null
      while [ -e "/proc/$p/cwd" ]; do sleep 0.05; done
      rm -f "$d/$2.pid"
    fi
    echo inactive > "$d/$2" ;;
  is-system-running)
    s=$(cat "$d/system" 2>/dev/null || echo running); echo "$s"; [ "$s" = running ] || exit 1 ;;
  list-units)
    for f in "$d"/*.service; do
      [ -f "$f" ] || continue
      [ "$(cat "$f")" = failed ] && echo "$(basename "$f") loaded failed failed $(basename "$f" .service)"
    done ;;
  *) echo "fake systemctl: unsupported: $*" >&2; exit 1 ;;
esac
`;

/** A stand-in systemctl with its units; remove it when done. */
export interface SystemctlStandIn {
  /** Path of the executable to pass as the adapters' systemctl. */
  readonly path: string;
  /** `auto-restart`: its process exited, and systemd starts it again after `RestartSec=`. */
  setUnit(
    unit: string,
    state: 'active' | 'inactive' | 'failed' | 'activating' | 'auto-restart',
  ): Promise<void>;
  unitState(unit: string): Promise<string | undefined>;
  /** `stop` of this unit hangs (a unit that does not stop in time). */
  jam(unit: string, jammed: boolean): Promise<void>;
  /** The unit's main process: `stop` kills it and waits until it is gone, as systemd does. */
  attach(unit: string, pid: number): Promise<void>;
  /** `start` of this unit fails. */
  breakStart(unit: string, broken: boolean): Promise<void>;
  /** A condition of this unit is false: `start` succeeds and leaves it inactive, as systemd does. */
  failCondition(unit: string, failing: boolean): Promise<void>;
  setSystem(state: string): Promise<void>;
  /** Every call made, one argument string per line. */
  calls(): Promise<readonly string[]>;
  remove(): Promise<void>;
}

export async function createSystemctlStandIn(
  units: Readonly<Record<string, 'active' | 'inactive' | 'failed'>>,
  options: {
    /** Units written here become known (stopped) at `daemon-reload`, as systemd loads them. */
    readonly unitDir?: string;
  } = {},
): Promise<SystemctlStandIn> {
  const dir = await tempDir('systemctl');
  const path = join(dir.path, 'systemctl');
  const state = join(dir.path, 'state');
  await writeFile(path, script);
  await chmod(path, 0o755);
  await mkdir(state);
  await writeFile(join(state, 'calls'), '');
  if (options.unitDir !== undefined) await writeFile(join(state, 'unitdir'), options.unitDir);
  const flag = async (name: string, on: boolean): Promise<void> => {
    if (on) await writeFile(join(state, name), '');
    else await rm(join(state, name), { force: true });
  };
  const s: SystemctlStandIn = {
    path,
    setUnit: (unit, st) => writeFile(join(state, unit), `${st}\n`),
    unitState: (unit) =>
      readFile(join(state, unit), 'utf8').then(
        (t) => t.trim(),
        () => undefined,
      ),
    jam: (unit, on) => flag(`${unit}.stuck`, on),
    attach: (unit, pid) => writeFile(join(state, `${unit}.pid`), `${String(pid)}\n`),
    breakStart: (unit, on) => flag(`${unit}.nostart`, on),
    failCondition: (unit, on) => flag(`${unit}.nocondition`, on),
    setSystem: (st) => writeFile(join(state, 'system'), `${st}\n`),
    calls: async () =>
      (await readFile(join(state, 'calls'), 'utf8')).split('\n').filter((l) => l !== ''),
    remove: () => dir.remove(),
  };
  for (const [unit, st] of Object.entries(units)) await s.setUnit(unit, st);
  return s;
}
