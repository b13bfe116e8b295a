import type { HamstringConfig } from '../config/index.ts';
import type { Stage } from '../runtime/index.ts';
import { createAlerter, createSyslogSink, createWebhookSink } from '../stages/alerter/index.ts';
import { createDetectorStage } from '../stages/detector/index.ts';
import {
  createCollectorStage,
  createInspectorStage,
  createLogserverStage,
  createPrefilterStage,
} from '../stages/index.ts';
import { componentStage, selectComponent, type ComponentKind } from '../stages/pipeline-components.ts';
import { StageResources } from './stage-resources.ts';

/** What a built-in factory gets besides the config. */
export interface StageFactoryOptions {
  /** Which configured component to run (`--name`); default the only one of its kind. */
  readonly component?: string;
  /** Shared by the stages of one process (alert file, scoring pool); its creator closes it. */
  readonly resources?: StageResources;
}

/**
 * Makes a stage from the loaded config (topics, names and settings come from it). Module stages
 * take only the config; built-in ones also which component to run and the process's resources.
 */
export type StageFactory = (config: HamstringConfig, options?: StageFactoryOptions) => Stage | Promise<Stage>;

type Build = (config: HamstringConfig, name: string, resources: StageResources) => Stage | Promise<Stage>;

const BUILDERS: Record<ComponentKind, Build> = {
  logserver: (config) => createLogserverStage({ config }),
  collector: (config, name) => createCollectorStage({ config, collectorName: name }),
  prefilter: (config, name) => createPrefilterStage({ config, prefilterName: name }),
  inspector: (config, name) => createInspectorStage({ config, inspectorName: name }),
  detector: (config, name, resources) => {
    const detector = config.pipeline.data_analysis.find((d) => d.name === name);
    if (!detector) throw new Error(`no detector named "${name}" in pipeline.data_analysis`);
    return createDetectorStage(config, detector, {
      ...(detector.detector_class_name === 'DGADetector' ? { pool: resources.scoringPool() } : {}),
      instanceName: name,
    });
  },
  alerter: async (config, name, resources) => {
    const alerting = config.pipeline.alerting;
    return createAlerter({
      config,
      name,
      ...(alerting.log_to_file ? { file: await resources.alertFile(alerting.log_file_path) } : {}),
    });
  },
  webhook: (config) => createWebhookSink({ config }),
  syslog: (config) => createSyslogSink({ config }),
};

/** Runs in at-least-once mode (side effects outside Kafka, then the commit); every other kind exactly once. */
export const AT_LEAST_ONCE_KINDS: ReadonlySet<string> = new Set<ComponentKind>(['webhook', 'syslog']);

/** The stage of one configured component, under its worker's name (see `componentStage`). */
export async function buildComponentStage(
  config: HamstringConfig,
  kind: ComponentKind,
  options: StageFactoryOptions & { resources: StageResources },
): Promise<Stage> {
  const component = selectComponent(config, kind, options.component);
  const stage = await BUILDERS[kind](config, component.name, options.resources);
  return componentStage(config, component, stage);
}

function factory(kind: ComponentKind): StageFactory {
  return (config, options = {}) =>
    buildComponentStage(config, kind, { ...options, resources: options.resources ?? new StageResources() });
}

/**
 * The stages `hamstring run <name> [--name <component>]` knows by short name (`detector`); the
 * full name (`data_analysis.detector`) is accepted too.
 */
export const BUILTIN_STAGES: ReadonlyMap<string, StageFactory> = new Map<string, StageFactory>(
  (Object.keys(BUILDERS) as ComponentKind[]).map((kind) => [kind, factory(kind)]),
);
