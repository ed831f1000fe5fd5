// SPDX-License-Identifier: Apache-2.0
/** The help of `molt lab` and `molt lab machine` (main.ts). */
import { optionLines } from '../protocol/flags.ts';
import { LabMachineFlags, LabVerbFlags } from '../protocol/process-flags/lab.ts';

export const machineUsage = `Usage: molt lab machine --root DIR [options]

Run one lab machine: firmware and bootloader played by molt, the agent booted into the slot the
bootloader chooses, rebooted when it asks. Prepares DIR on first use.

Options:
${optionLines(LabMachineFlags)}

Signals: SIGTERM/SIGINT shut the machine down; SIGUSR1 cuts its power (crash tests).
`;

const upUsage = `Usage: molt lab up [--dir DIR] [--workers N] [--vms N] [--no-kubernetes] [--fast]
                    [--vm-control-planes M] [--dashboard-port P] [--network auto|netns|loopback]
                    [--operator host|cluster] [-o json]`;

const aLab = `A lab: a real registry, 3 control-plane and N worker lab machines (their etcd cluster holds the
operator's state), a real Kubernetes control plane with the machines as nodes and workloads under
PodDisruptionBudgets, and molt operator with its dashboard — all on this machine, in DIR
(default .molt/lab), kept running by one daemon until \`molt lab down\`.`;

const vmsText = `--vms N adds N VMs (QEMU, OVMF, a disk written by \`molt install\`, the real bootloader and
kernel) in pool \`vms\`, following channel \`vm\`; every machine then starts on the real OS release
1.0.0 built by \`molt image build\` (root; cached under .molt/images). With Kubernetes the VMs
are real nodes of the lab's cluster (containerd and a kubelet in the release, joined by a
bootstrap token; the first run builds them from the Go module proxy), and --workers 0 leaves them
the only workers: the lab's workloads then run as real containers on them. \`molt lab publish
VERSION --vm\` builds and publishes an OS release for them (channel \`vm\` by default; with
Kubernetes it carries the current kubelet, 1.0.0 the previous minor's); with --broken its kernel
panics at boot, so the VM falls back; with --broken-kubelet (needs Kubernetes) its kubelet exits
on an unknown flag, so the VM's health check fails at its deadline and it falls back by itself.`;

const vmControlPlanes = `--vm-control-planes M (1 to 3, with --vms N and --network netns) puts the cluster itself on VMs:
M control-plane VMs (vm-cp-1…, pool \`vm-control-plane\`) run etcd, kube-apiserver,
kube-controller-manager and kube-scheduler as systemd units their agents render, and a kubelet;
the cluster's PKI is made by molt (\`molt pki kubernetes\`, in DIR/kube-pki) and laid onto each
control plane by \`molt install --kube-pki\`; the first one bootstraps the cluster, and the N worker
VMs join it. No control plane runs on the host, and the lab machines are no nodes. Each control
plane takes 3 GiB of memory.`;

const networkText = `--network: netns gives each machine a network namespace and an address of its own (10.231.N.k on
a bridge moltbrN; needs root); loopback puts every machine on 127.0.0.1 at ports of its own; auto
(the default) is netns when run as root, loopback otherwise.`;

const operatorText = `--operator cluster runs the operator as a user installs it in a cluster (deploy/kubernetes): its
image built by \`molt image build --operator\` and pushed to the lab's registry, then
\`kubectl apply -k\` — two replicas on the VM nodes, leader by Lease, records in the cluster
(store: kubernetes). It then upgrades the nodes it runs on. Needs --vms N and --network netns;
\`molt lab env\` and the dashboard reach the leading replica through a relay on 127.0.0.1.
`;

export const labUsage = `Usage: molt lab up [--dir DIR] [--workers N] [--vms N] [--no-kubernetes] [--fast]
                    [--vm-control-planes M] [--dashboard-port P] [--network auto|netns|loopback]
                    [--operator host|cluster] [-o json]
       molt lab status [--dir DIR] [-o json]
       molt lab env [--dir DIR] [-o json]    # eval "$(molt lab env)": molt rollout … talks to the lab
       molt lab kubectl ARGS…                # the lab's kubectl on its admin kubeconfig (MOLT_LAB_DIR)
       molt lab publish VERSION [--vm] [--broken|--broken-kubelet] [--channels LIST] [--dir DIR] [-o json]
       molt lab down [--dir DIR] [-o json]
       molt lab machine --root DIR [options] # one machine (see molt lab machine --help)

${aLab}

${vmsText}

${vmControlPlanes}

${networkText}

${operatorText}
`;

/** `molt lab VERB --help`: that verb's usage and what it does, not every verb's. */
const verbUsage = {
  up: `${upUsage}

Options:
${optionLines(LabVerbFlags.up)}

${aLab}

${vmsText}

${vmControlPlanes}

${networkText}

${operatorText}
`,
  status: `Usage: molt lab status [--dir DIR] [-o json]

The lab's daemon, operator, dashboard and machines: each machine's version and slot, and for a VM
the last line of its console.

Options:
${optionLines(LabVerbFlags.status)}
`,
  env: `Usage: molt lab env [--dir DIR] [-o json]

The environment that points molt's operator commands at the lab: eval "$(molt lab env)", then
molt rollout …, molt plan, molt machine … talk to the lab's operator.

Options:
${optionLines(LabVerbFlags.env)}
`,
  publish: `Usage: molt lab publish VERSION [--vm] [--broken|--broken-kubelet] [--channels LIST] [--dir DIR] [-o json]

Push release VERSION into the lab's repository, labelled official and with its channels (LIST,
comma-separated), where the operator discovers it. A version is published once.

Without --vm: a lab release, small artifacts the lab machines install; --broken labels it never
to become healthy. With --vm: a real OS release built by \`molt image build\` for the lab's VMs
(channel \`vm\` by default; with Kubernetes it carries the current kubelet); with --broken its
kernel panics at boot, so the VM falls back; with --broken-kubelet (needs Kubernetes) its kubelet
exits on an unknown flag, so the VM's health check fails and it falls back by itself.

Options:
${optionLines(LabVerbFlags.publish)}
`,
  down: `Usage: molt lab down [--dir DIR] [-o json]

Stop the lab's daemon and everything it runs (machines, VMs, operator, registry, Kubernetes) and
remove its CLI context. DIR stays, with its logs.

Options:
${optionLines(LabVerbFlags.down)}
`,
};

/** The help of `molt lab VERB`, or undefined for a verb without its own. */
export function labVerbUsage(verb: string): string | undefined {
  return Object.hasOwn(verbUsage, verb) ? verbUsage[verb as keyof typeof verbUsage] : undefined;
}
