import { fullStageName, type HamstringConfig, type StageShortName } from '../config/index.ts';
import type { Stage } from '../runtime/index.ts';
import { componentGroupId } from './topics.ts';

/** A stage kind `hamstring run` and `hamstring up` know: the six pipeline stages and the alert sinks. */
export type ComponentKind = StageShortName | 'webhook' | 'syslog';

/** One configured instance of a stage kind: `collector` `dga_collector`, `alerter` `generic`, ... */
export interface PipelineComponent {
  readonly kind: ComponentKind;
  /** The config entry's `name` (the logserver has one, unnamed, entry: `logserver`). */
  readonly name: string;
}

/**
 * Every component the config describes, upstream first: the logserver, each collector, prefilter,
 * inspector and detector entry, each alerter some detector sends to (`produce_topics`), and the
 * webhook and syslog sinks when `pipeline.alerting.webhook` / `.syslog` are set.
 */
export function pipelineComponents(config: HamstringConfig): PipelineComponent[] {
  const p = config.pipeline;
  const alerters = [...new Set(p.data_analysis.flatMap((d) => d.produce_topics))];
  return [
    { kind: 'logserver', name: 'logserver' },
    ...p.log_collection.collectors.map((c) => ({ kind: 'collector' as const, name: c.name })),
    ...p.log_filtering.map((f) => ({ kind: 'prefilter' as const, name: f.name })),
    ...p.data_inspection.map((i) => ({ kind: 'inspector' as const, name: i.name })),
    ...p.data_analysis.map((d) => ({ kind: 'detector' as const, name: d.name })),
    ...alerters.map((name) => ({ kind: 'alerter' as const, name })),
    ...(p.alerting.webhook ? [{ kind: 'webhook' as const, name: 'webhook' }] : []),
    ...(p.alerting.syslog ? [{ kind: 'syslog' as const, name: 'syslog' }] : []),
  ];
}

/** The components of one kind, e.g. every configured collector. */
export function componentsOf(config: HamstringConfig, kind: ComponentKind): PipelineComponent[] {
  return pipelineComponents(config).filter((c) => c.kind === kind);
}

/**
 * The component of `kind` named `name`, or the only one when `name` is absent.
 * @throws Error naming the configured components when there is no match or several candidates.
 */
export function selectComponent(
  config: HamstringConfig,
  kind: ComponentKind,
  name: string | undefined,
): PipelineComponent {
  const all = componentsOf(config, kind);
  const names = all.map((c) => c.name).join(', ') || 'none';
  if (name !== undefined) {
    const found = all.find((c) => c.name === name);
    if (!found)
      throw new Error(`--name ${name}: no ${kind} of that name in the config (configured: ${names})`);
    return found;
  }
  const [only, ...more] = all;
  if (!only) throw new Error(`no ${kind} is configured`);
  if (more.length > 0)
    throw new Error(`${all.length} ${kind}s are configured (${names}): choose one with --name`);
  return only;
}

/**
 * The stage under the name its worker runs with. The consumer group, the transactional ids and the
 * state changelogs derive from the stage name, so two components of one kind (two collectors) must
 * not share it: when the config holds more than one of a kind, each gets `componentGroupId`'s name,
 * `<full name>-<component>`.
 * The rule reads only the config, so `hamstring run` on one machine and `hamstring up` on another
 * agree; the short name (batch and record-error settings) is kept.
 */
export function componentStage(config: HamstringConfig, component: PipelineComponent, stage: Stage): Stage {
  if (componentsOf(config, component.kind).length <= 1) return stage;
  const base = fullStageName(component.kind) ?? stage.name;
  return { ...stage, name: componentGroupId(base, component.name) };
}

/**
 * The consumer group a component's workers join: their stage name as {@link componentStage} makes
 * it (a single stage of its kind keeps its kind's full name). Undefined for the alert sinks, which
 * have no pipeline stage name.
 */
export function componentGroup(config: HamstringConfig, component: PipelineComponent): string | undefined {
  const full = fullStageName(component.kind);
  if (full === undefined) return undefined;
  return componentsOf(config, component.kind).length <= 1 ? full : componentGroupId(full, component.name);
}
