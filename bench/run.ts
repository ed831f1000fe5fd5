// SPDX-License-Identifier: Apache-2.0
/**
 * `npm run bench` runs every known benchmark; `npm run bench -- P1` runs the named ones. Each
 * benchmark prints a human-readable table and then, as its last line, `BENCH <ID> key=value …`.
 * P1–P8 measure molt against peers, P9 a real VM upgrade against the boot it cannot avoid (issue
 * 15), P10 a gzip bomb against the pull, P11 a Kubernetes minor upgrade of the hosted control
 * plane under writes, P12 an image rebuild to the first workload spec updated and the
 * warm re-scan's blob GETs, P13 a real VM node upgraded under PodDisruptionBudgets by
 * molt against the same upgrade by hand (docs/adr/0015), P14 the self-hosted OS rollout of the VM
 * nodes the operator runs on against the same rollout driven from outside (docs/adr/0018), P15
 * the window a rollout needs with its release staged ahead against without (docs/adr/0019), P16
 * the CLI's answer times against kubectl's; R1 measures the operator under load.
 */
const benchmarks: Readonly<Record<string, () => Promise<void>>> = {
  P1: async () => {
    const { runP1 } = await import('./p1.ts');
    await runP1();
  },
  P2: async () => {
    const { runP2 } = await import('./p2.ts');
    await runP2();
  },
  P3: async () => {
    const { runP3 } = await import('./p3.ts');
    await runP3();
  },
  P4: async () => {
    const { runP4 } = await import('./p4.ts');
    await runP4();
  },
  P5: async () => {
    const { runP5 } = await import('./p5.ts');
    await runP5();
  },
  P6: async () => {
    const { runP6 } = await import('./p6.ts');
    await runP6();
  },
  P7: async () => {
    const { runP7 } = await import('./p7.ts');
    await runP7();
  },
  P8: async () => {
    const { runP8 } = await import('./p8.ts');
    await runP8();
  },
  P9: async () => {
    const { runP9 } = await import('./p9.ts');
    await runP9();
  },
  P10: async () => {
    const { runP10 } = await import('./p10.ts');
    await runP10();
  },
  P11: async () => {
    const { runP11 } = await import('./p11.ts');
    await runP11();
  },
  P12: async () => {
    const { runP12 } = await import('./p12.ts');
    await runP12();
  },
  P13: async () => {
    const { runP13 } = await import('./p13.ts');
    await runP13();
  },
  P14: async () => {
    const { runP14 } = await import('./p14.ts');
    await runP14();
  },
  P15: async () => {
    const { runP15 } = await import('./p15.ts');
    await runP15();
  },
  P16: async () => {
    const { runP16 } = await import('./p16.ts');
    await runP16();
  },
  R1: async () => {
    const { runR1 } = await import('./r1.ts');
    await runR1();
  },
};

const wanted = process.argv.slice(2).map((a) => a.toUpperCase());
const unknown = wanted.filter((id) => !(id in benchmarks));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(benchmarks).join(', ')}\n`,
  );
  process.exit(2);
}
for (const id of wanted.length > 0 ? wanted : Object.keys(benchmarks)) {
  const run = benchmarks[id];
  if (run !== undefined) await run();
}
