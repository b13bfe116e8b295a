import type { HamstringConfig } from '../../config/index.ts';
import { errorText } from '../../errors/error-text.ts';
import type { AdminPort, GroupState } from '../../kafka/admin.ts';
import { componentGroup, pipelineComponents } from '../../stages/index.ts';

/** A stage whose instances the dashboard shows: its label and the consumer group its workers join. */
export interface StageGroup {
  /** `collector dga_collector`, or the kind alone when it is the component's name (`logserver`). */
  label: string;
  group: string;
}

/** One worker instance of a stage: its Kafka client id (`<stage>-<instance id>`) and partitions. */
export interface InstanceView {
  instance: string;
  /** `topic:partition`, sorted. */
  partitions: string[];
}

/** A stage's instances on one machine (the address the group coordinator sees). */
export interface MachineView {
  host: string;
  instances: InstanceView[];
}

export interface StageInstancesView {
  stage: string;
  group: string;
  /** The group's state: Stable, PreparingRebalance, CompletingRebalance, Empty, Dead, Unknown. */
  state: string;
  machines: MachineView[];
  /** Why the group could not be read (the other stages are still shown). */
  error?: string;
}

/** Every configured pipeline stage's consumer group, upstream first (the alert sinks have none). */
export function stageGroupsOf(config: HamstringConfig): StageGroup[] {
  return pipelineComponents(config).flatMap((c) => {
    const group = componentGroup(config, c);
    return group === undefined ? [] : [{ label: c.name === c.kind ? c.kind : `${c.kind} ${c.name}`, group }];
  });
}

/**
 * A group description as the page shows it: members by machine, each with its partitions. A
 * member joined but not yet assigned (a rebalance in progress) is listed with no partitions.
 */
export function instancesView(stage: StageGroup, g: GroupState): StageInstancesView {
  const machines = new Map<string, InstanceView[]>();
  for (const m of g.members) {
    const list = machines.get(m.host) ?? [];
    machines.set(m.host, list);
    list.push({
      instance: m.clientId,
      partitions: m.partitions
        .map((p) => `${p.topic}:${p.partition}`)
        .sort((a, b) => a.localeCompare(b, 'en', { numeric: true })),
    });
  }
  return {
    stage: stage.label,
    group: stage.group,
    state: g.state,
    machines: [...machines]
      .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
      .map(([host, instances]) => ({
        host,
        instances: instances.sort((a, b) => a.instance.localeCompare(b.instance)),
      })),
  };
}

/**
 * Reads every stage's group from Kafka for the pipeline page. The admin client is made at the
 * first read (a dashboard whose Kafka is down still serves its ClickHouse pages) and kept; a group
 * that cannot be described is shown with its error instead of failing the whole view.
 */
export class StageInstances {
  #admin: AdminPort | undefined;

  constructor(
    private readonly stages: readonly StageGroup[],
    private readonly admin: () => AdminPort,
    private readonly timeoutMs = 5_000,
  ) {}

  async read(): Promise<StageInstancesView[]> {
    this.#admin ??= this.admin();
    const admin = this.#admin;
    return Promise.all(
      this.stages.map(async (s) => {
        try {
          return instancesView(s, await admin.describeGroup(s.group, this.timeoutMs));
        } catch (e) {
          return { stage: s.label, group: s.group, state: 'Unknown', machines: [], error: errorText(e) };
        }
      }),
    );
  }

  close(): void {
    this.#admin?.close();
    this.#admin = undefined;
  }
}
