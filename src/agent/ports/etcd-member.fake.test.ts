// SPDX-License-Identifier: Apache-2.0
import { etcdMemberConformance } from '../../testkit/etcd-member-conformance.ts';
import { createFakeEtcdCluster, createFakeEtcdMember } from './etcd-member.fake.ts';

etcdMemberConformance({
  name: 'fake',
  start: () => {
    const names = ['cp-0', 'cp-1', 'cp-2'];
    const cluster = createFakeEtcdCluster(names);
    const service = (i: number) => cluster.services.get(names[i]!)!;
    return Promise.resolve({
      names,
      member: (i: number) => createFakeEtcdMember(cluster, names[i]!),
      down: (i: number) => service(i).stopAll(),
      up: (i: number) => service(i).startAll(),
      stop: () => Promise.resolve(),
    });
  },
});
