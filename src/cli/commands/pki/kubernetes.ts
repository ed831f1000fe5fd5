// SPDX-License-Identifier: Apache-2.0
/**
 * `molt pki kubernetes --cluster prod --out DIR --server https://10.232.0.10:6443`: a Kubernetes
 * cluster's whole PKI, laid out as kubeadm's `/etc/kubernetes` (docs/adr/0018 §3); and
 * `molt pki kubernetes --check DIR --cluster prod`: the check a machine's PKI must pass, which
 * prints the files or fails with `MOLT_KUBE_PKI_INVALID` naming the file and what is wrong.
 */
import { z } from 'zod';
import type { SubjectAltName } from '../../../platform/pki/certificates.ts';
import { checkKubernetesPki } from '../../../platform/pki/kubernetes-check.ts';
import {
  checkClusterName,
  checkDnsDomain,
  checkSan,
  checkServer,
  firstServiceAddress,
  type Checked,
} from '../../../platform/pki/kubernetes-input.ts';
import type { KubernetesPkiPaths } from '../../../platform/pki/kubernetes-layout.ts';
import {
  DefaultDnsDomain,
  DefaultServiceCidr,
  writeKubernetesPki,
  type WrittenKubernetesPki,
} from '../../../platform/pki/kubernetes.ts';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { outputFormats, renderData } from '../../output.ts';

/**
 * A flag kept as given, refused when one of `kubernetes-input.ts`'s checks refuses it; the
 * message names the value (`--service-cidr 10.96.0.1/12 is not a network address …`).
 */
const checked = <T>(check: (s: string) => Checked<T>) =>
  z.string().superRefine((s, ctx) => {
    const r = check(s);
    if (!r.ok) ctx.addIssue({ code: 'custom', message: `${s} ${r.reason}` });
  });

const schema = z.object({
  cluster: checked(checkClusterName),
  out: z.string().min(1, 'is empty').optional(),
  check: z.string().min(1, 'is empty').optional(),
  server: checked(checkServer).optional(),
  san: z
    .array(z.string())
    .default([])
    .transform((list, ctx): SubjectAltName[] => {
      const sans: SubjectAltName[] = [];
      for (const s of list) {
        const r = checkSan(s);
        if (r.ok) sans.push(r.value);
        else ctx.addIssue({ code: 'custom', message: `${s} ${r.reason}` });
      }
      return sans;
    }),
  serviceCidr: checked(firstServiceAddress).optional(),
  dnsDomain: checked(checkDnsDomain).optional(),
  days: z.coerce
    .number({ message: 'must be a number of days' })
    .int('must be a whole number of days')
    .min(1, 'must be at least 1')
    .max(3650, 'must be at most 3650 (the CAs’ ten years)')
    .optional(),
  force: z.boolean().default(false),
  output: z.enum(outputFormats).default('table'),
});

/** `molt pki kubernetes`. */
export async function runKubernetesPki(
  ctx: CommandContext,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(schema, raw);
  if (o.check !== undefined) {
    if (o.out !== undefined || o.server !== undefined)
      throw new MoltError(ErrorCode.BadFlag, '--check takes only --cluster (and -o)', {
        hint: 'check a PKI with --check DIR, or make one with --out DIR --server URL',
      });
    const paths = await checkKubernetesPki(o.check, { cluster: o.cluster });
    printChecked(ctx, o.output, o.cluster, paths);
    return;
  }
  if (o.out === undefined || o.server === undefined)
    throw new MoltError(
      ErrorCode.BadFlag,
      o.out === undefined
        ? 'give --out DIR to make a PKI, or --check DIR'
        : '--out needs --server URL',
      { hint: 'run `molt pki kubernetes --help`' },
    );
  const written = await writeKubernetesPki({
    cluster: o.cluster,
    dir: o.out,
    server: o.server,
    sans: o.san,
    serviceCidr: o.serviceCidr ?? DefaultServiceCidr,
    dnsDomain: o.dnsDomain ?? DefaultDnsDomain,
    ...(o.days !== undefined && { days: o.days }),
    force: o.force,
  });
  printWritten(ctx, o.output, written);
}

const files = (paths: KubernetesPkiPaths): string[] =>
  Object.entries(paths)
    .filter(([k]) => k !== 'dir')
    .map(([, path]) => path);

function printWritten(
  ctx: CommandContext,
  format: (typeof outputFormats)[number],
  w: WrittenKubernetesPki,
): void {
  if (format !== 'table') {
    ctx.io.out(renderData(format, { ...w, files: [...files(w.paths), w.bootstrapToken] }));
    return;
  }
  ctx.io.out(
    `wrote the Kubernetes PKI of cluster ${w.cluster} in ${w.paths.dir} (files mode 0600)\n` +
      `  CA sha256:   ${w.caFingerprint256}\n` +
      `  API server:  ${w.apiserverNames}\n` +
      `  expires:     ${w.notAfter} (the CAs ${w.caNotAfter})\n` +
      `  workers join with the bootstrap token in ${w.bootstrapToken}\n` +
      files(w.paths)
        .map((f) => `  ${f}\n`)
        .join(''),
  );
}

function printChecked(
  ctx: CommandContext,
  format: (typeof outputFormats)[number],
  cluster: string,
  paths: KubernetesPkiPaths,
): void {
  if (format !== 'table') {
    ctx.io.out(renderData(format, { ok: true, cluster, dir: paths.dir, files: files(paths) }));
    return;
  }
  ctx.io.out(
    `OK: ${paths.dir} is the Kubernetes PKI of cluster ${cluster}\n` +
      files(paths)
        .map((f) => `  ${f}\n`)
        .join(''),
  );
}
