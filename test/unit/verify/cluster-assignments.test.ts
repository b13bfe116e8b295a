import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdminPort, GroupState } from '../../../src/kafka/admin.ts';
import { AssignmentWatch, machineOfClient } from '../../../src/verify/cluster/assignments.ts';
import { parseInstances } from '../../../src/cli/commands/dev-machines.ts';

test('a member is placed on the machine its instance id names', () => {
  assert.equal(machineOfClient('log_collection.collector-m2-collector-dga_collector-i1-consumer-3'), 'm2');
  assert.equal(machineOfClient('log_storage.logserver-m12-logserver-i2-consumer-1'), 'm12');
  assert.equal(machineOfClient('hamstring-admin'), undefined);
});

/** An admin whose group descriptions follow `states`, one per call, the last one repeated. */
function scriptedAdmin(states: (GroupState | Error)[]): AdminPort {
  let i = 0;
  return {
    close: () => undefined,
    describeGroup: () => {
      const s = states[Math.min(i, states.length - 1)];
      i += 1;
      return s instanceof Error ? Promise.reject(s) : Promise.resolve(s as GroupState);
    },
  } as unknown as AdminPort;
}

const member = (machine: string, partitions: number[]) => ({
  memberId: `x-${machine}`,
  clientId: `stage-${machine}-stage-i1-consumer-1`,
  host: `10.214.0.${machine.slice(1)}`,
  partitions: partitions.map((partition) => ({ topic: 't', partition })),
});

test('partitions count as moved off a machine only once a stable group has them all elsewhere, and back once it holds one again; each description keeps its coordinator', async () => {
  const group = 'g';
  const states: (GroupState | Error)[] = [
    {
      groupId: group,
      state: 'Stable',
      coordinator: 2,
      members: [member('m1', [0, 1]), member('m2', [2, 3])],
    },
    new Error('coordinator moving'),
    // Rebalancing: the old assignment is still listed; not yet moved.
    { groupId: group, state: 'PreparingRebalance', members: [member('m1', [0, 1])] },
    { groupId: group, state: 'Stable', coordinator: 1, members: [member('m1', [0, 1, 2, 3])] },
    { groupId: group, state: 'Stable', members: [member('m1', [0, 1]), member('m2', [2, 3])] },
  ];
  // One script whichever admin asks: the watch replaces its admin after a failure.
  const admin = scriptedAdmin(states);
  let admins = 0;
  const watch = new AssignmentWatch(
    () => {
      admins += 1;
      return admin;
    },
    [{ label: 'stage', group, topics: ['t'] }],
    new Map([[group, 4]]),
    5,
  );
  const since = Date.now();
  // Every scripted state described (one failed, four kept), however slow this machine is.
  while (watch.snapshots.length < 4) await new Promise((r) => setTimeout(r, 5));
  await watch.stop();
  const off = watch.movedOffAt(group, 'm2', since);
  assert.ok(off !== undefined);
  const offSnapshot = watch.snapshots.find((s) => s.atMs === off);
  assert.deepEqual([...(offSnapshot?.owners.values() ?? [])], ['m1', 'm1', 'm1', 'm1']);
  const back = watch.movedBackAt(group, 'm2', off + 1);
  assert.ok(back !== undefined && back > off, 'back after it moved off');
  assert.equal(watch.coordinatorAt(group, off), 2, 'the coordinator before the move');
  assert.equal(watch.coordinatorAt(group, off + 1), 1, 'the one that took the group over');
  assert.equal(watch.failures.get(group), 1);
  assert.equal(admins, 2, 'a new admin after the failed description');
  assert.deepEqual(
    [...watch.holdings(group)],
    [
      ['m1', 2],
      ['m2', 2],
    ],
  );
});

test('--instances parses counts per stage kind and refuses nonsense', () => {
  assert.deepEqual(parseInstances('collector=2,detector=1'), { collector: 2, detector: 1 });
  assert.deepEqual(parseInstances(undefined), {});
  assert.throws(() => parseInstances('collector=0'), /kind=n/);
  assert.throws(() => parseInstances('collector'), /kind=n/);
});
