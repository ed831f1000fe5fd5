// SPDX-License-Identifier: Apache-2.0
/**
 * The environment to start an etcd server with (the agent's etcd service, the lab's etcd): the
 * parent's minus ETCD_* variables (etcd 3.4 refuses to start when a variable shadows a flag), plus
 * ETCD_UNSUPPORTED_ARCH on architectures 3.4 does not support (it exits at start otherwise).
 */
export function etcdEnv(
  parent: NodeJS.ProcessEnv = process.env,
  arch: string = process.arch,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(parent)) if (!k.startsWith('ETCD_')) env[k] = v;
  const goArch: Readonly<Record<string, string>> = {
    ia32: '386',
    arm: 'arm',
    s390x: 's390x',
    ppc64: 'ppc64le',
  };
  const unsupported = goArch[arch];
  if (unsupported !== undefined) env['ETCD_UNSUPPORTED_ARCH'] = unsupported;
  return env;
}
