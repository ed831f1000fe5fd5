// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ComponentSupervisor} on a real machine (docs/adr/0012 §3): each component a systemd unit
 * the agent writes, `/run/systemd/system/molt-<name>.service`. Under `/run`, so the units vanish
 * at a reboot with everything else of the boot: the agent's record (`state/kubernetes/`) is the
 * truth, and its start after etcd writes them again. `Restart=always`, as kubelets' static pods
 * would restart them; the agent stops a unit with `systemctl stop`, which systemd never undoes.
 *
 * `run` writes the unit only when it changed, then `daemon-reload` and `restart`; a unit running
 * the spec asked for is left alone. The hash of the spec a unit was last (re)started on is kept
 * beside it in `<stateDir>/<name>.hash` (tmpfs too), written after the restart, so a crash
 * between writing a unit and restarting it is seen as "runs another spec" and repaired.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { controlCharacter } from '../../../core/kubernetes/insecure-flags.ts';
import type { ComponentSpec } from '../../../core/kubernetes/render.ts';
import type { ComponentState, ComponentSupervisor } from '../../ports/control-plane.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { firstLine, type Systemctl } from './systemctl.ts';

export interface SystemdComponentOptions {
  readonly systemctl: Systemctl;
  /** Runs `journalctl` (the same runner shape as systemctl; tests pass a stand-in). */
  readonly journalctl: Systemctl;
  /** @default /run/systemd/system */
  readonly unitDir?: string;
  /** Where the started specs' hashes are kept. @default /run/molt */
  readonly stateDir?: string;
  /** @default 120000 */
  readonly timeoutMs?: number;
}

export const componentUnitName = (name: string): string => `molt-${name}.service`;

/**
 * One argument of `ExecStart=` as systemd parses it: bare when it is plain, else double-quoted
 * with `\` and `"` escaped; `%` (specifiers) and `$` (variables) doubled either way. A control
 * character is refused, not escaped: a newline would end the line (systemd then refuses the whole
 * unit and the component stays down), and no flag means one.
 * @throws MoltError `MOLT_KUBE_FLAG_INVALID`
 */
export function systemdArg(arg: string): string {
  if (controlCharacter.test(arg))
    throw new MoltError(
      ErrorCode.KubeFlagInvalid,
      `the argument ${JSON.stringify(arg.slice(0, 80))} holds a control character: no unit is written`,
    );
  const literal = arg.replaceAll('%', '%%').replaceAll('$', '$$$$');
  if (/^[A-Za-z0-9_@+=:,./-]+$/.test(literal)) return literal;
  return `"${literal.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** The unit of `spec`: what `run` writes. */
export function componentUnit(spec: ComponentSpec): string {
  const env = Object.entries(spec.env).map(([k, v]) => `Environment=${systemdArg(`${k}=${v}`)}\n`);
  const exec = [spec.binary, ...spec.args].map(systemdArg).join(' \\\n    ');
  return `# molt: ${spec.name}, rendered by molt's agent from the cluster's configuration and this
# machine's; molt-hash ${spec.hash}. Do not edit: the next apply replaces it (docs/kubernetes.md).
[Unit]
Description=Kubernetes ${spec.name} (molt)
After=network-online.target etcd.service
Wants=network-online.target

[Service]
${env.join('')}ExecStart=${exec}
Restart=always
RestartSec=5
LimitNOFILE=65536
`;
}

/** `ActiveEnterTimestamp=@1700000000` (`--timestamp=unix`) → ISO time. */
function since(value: string | undefined): string | undefined {
  const seconds = Number(value?.replace(/^@/, ''));
  return value !== undefined && value !== '' && Number.isFinite(seconds) && seconds > 0
    ? new Date(seconds * 1000).toISOString()
    : undefined;
}

export function createSystemdComponents(o: SystemdComponentOptions): ComponentSupervisor {
  const unitDir = o.unitDir ?? '/run/systemd/system';
  const stateDir = o.stateDir ?? '/run/molt';
  const timeoutMs = o.timeoutMs ?? 120_000;
  const hashFile = (name: string): string => join(stateDir, `${name}.hash`);
  const unitFile = (name: string): string => join(unitDir, componentUnitName(name));
  const call = async (args: string[], what: string): Promise<string> => {
    const r = await o.systemctl.run(args, { timeoutMs });
    if (r.code !== 0)
      throw new MoltError(
        what === 'stop' ? ErrorCode.ServiceStopFailed : ErrorCode.ServiceStartFailed,
        `systemctl ${args.join(' ')}: ${r.timedOut ? 'timed out' : firstLine(r)}`,
        { hint: `see systemctl status ${args.at(-1) ?? ''}`, retryable: true },
      );
    return r.stdout;
  };
  const state = async (name: string): Promise<ComponentState> => {
    const r = await o.systemctl.run([
      'show',
      '--timestamp=unix',
      '-p',
      'ActiveState,SubState,MainPID,ActiveEnterTimestamp',
      componentUnitName(name),
    ]);
    const props = new Map(
      r.stdout
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
    );
    const active = props.get('ActiveState');
    // `Restart=always` keeps a unit whose process exited "activating" (sub-state `auto-restart`)
    // until its next start: its process is gone, and a binary that refuses a flag would otherwise
    // look alive, and be waited for, until the whole health bound ran out.
    const restarting = props.get('SubState') === 'auto-restart';
    if ((active !== 'active' && active !== 'activating' && active !== 'reloading') || restarting)
      return { running: false };
    const pid = Number(props.get('MainPID'));
    const hash = (await readFile(hashFile(name), 'utf8').catch(() => '')).trim();
    const at = since(props.get('ActiveEnterTimestamp'));
    return {
      running: true,
      ...(pid > 0 && { pid }),
      ...(at !== undefined && { since: at }),
      ...(hash !== '' && { hash }),
    };
  };
  return {
    state,
    async run(spec) {
      const unit = componentUnit(spec);
      const now = await state(spec.name);
      const written = await readFile(unitFile(spec.name), 'utf8').catch(() => '');
      if (now.running && now.hash === spec.hash && written === unit) return;
      if (written !== unit) {
        await writeFileAtomic(unitFile(spec.name), unit);
        await call(['daemon-reload'], 'start');
      }
      await call(['restart', componentUnitName(spec.name)], 'start');
      await mkdir(stateDir, { recursive: true });
      await writeFileAtomic(hashFile(spec.name), `${spec.hash}\n`);
    },
    async stop(name) {
      if ((await readFile(unitFile(name), 'utf8').catch(() => undefined)) === undefined) return;
      await call(['stop', componentUnitName(name)], 'stop');
      await rm(hashFile(name), { force: true });
    },
    async logTail(name, lines) {
      const r = await o.journalctl.run(
        ['-u', componentUnitName(name), '-n', String(lines), '--no-pager', '-o', 'cat'],
        { timeoutMs: 10_000 },
      );
      return r.code === 0 ? r.stdout.trimEnd() : `(journalctl: ${firstLine(r)})`;
    },
  };
}
