import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, posix } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { loadConfig, type HamstringConfig } from '../../../src/config/index.ts';
import { assertBindAllowed } from '../../../src/config/endpoint-access.ts';
import { runCommand } from '../../../src/cli/commands/run.ts';
import { pipelineComponents, selectComponent } from '../../../src/stages/pipeline-components.ts';
import { parseArgs } from 'node:util';
import { committedStageManifests, stageManifests } from '../../../scripts/kubernetes-stages.ts';
import {
  cliAccepts,
  containerfile,
  DEPLOY,
  IMAGE_ROOT,
  imageEntrypoint,
  readRepoFile,
  REPO,
} from './helpers.ts';

interface Mount {
  name: string;
  mountPath: string;
}
interface Probe {
  exec?: { command: string[] };
  tcpSocket?: { port: string | number };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args: string[];
  env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports?: { name: string; containerPort: number }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  securityContext?: { readOnlyRootFilesystem?: boolean };
  volumeMounts: Mount[];
}
interface Volume {
  name: string;
  secret?: { secretName: string };
  configMap?: { name: string };
  emptyDir?: object;
}
interface PodSpec {
  securityContext?: { runAsUser?: number; runAsNonRoot?: boolean };
  containers: Container[];
  volumes: Volume[];
}
interface Workload {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: {
    serviceName?: string;
    selector?: Record<string, unknown>;
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: { clusterIP?: string; selector?: Record<string, string>; ports?: { port: number }[] };
}

function documents(dir: string): Resource[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(readRepoFile(`${posix.relative(REPO, dir)}/${f}`)).map((doc) => {
        assert.deepEqual(doc.errors, [], `${f}: YAML errors`);
        return doc.toJS() as Resource;
      }),
    );
}

const resources = documents(`${DEPLOY}kubernetes`);
const secrets = documents(`${DEPLOY}kubernetes/example-secrets`).filter((r) => r.kind === 'Secret');
const workloads = resources.filter(
  (r) => r.kind === 'StatefulSet' || r.kind === 'Deployment',
) as unknown as Workload[];
const configMap = resources.find((r) => r.kind === 'ConfigMap' && r.metadata.name === 'hamstring-config');
const configText = configMap?.data?.['config.yaml'];
const config: HamstringConfig = loadConfig({
  text: configText ?? '',
  path: 'ConfigMap hamstring-config',
  env: {},
});

const container = (w: Workload) => {
  assert.equal(w.spec.template.spec.containers.length, 1, `${w.metadata.name}: one container`);
  return w.spec.template.spec.containers[0]!;
};
const argsOf = (w: Workload) => container(w).args.map(String);
const stages = workloads.filter((w) => argsOf(w)[0] === 'run');
const byCommand = (path: string) => {
  const found = workloads.filter((w) => argsOf(w).join(' ').startsWith(`${path} `));
  assert.equal(found.length, 1, `one workload runs hamstring ${path}`);
  return found[0]!;
};

/** The component a stage's args run, resolved as `hamstring run` resolves them. */
function componentOf(w: Workload) {
  const { values, positionals } = parseArgs({
    args: argsOf(w).slice(1),
    options: runCommand.options,
    allowPositionals: true,
    strict: true,
  });
  const { name } = values as Record<string, unknown>;
  return selectComponent(config, positionals[0] as never, typeof name === 'string' ? name : undefined);
}

/** Where a file the config names comes from in a pod: the volume mounted at its folder, and the key. */
function sourceOf(w: Workload, file: string): { volume: Volume; key: string } {
  const mount = container(w).volumeMounts.find((m) => m.mountPath === dirname(file));
  assert.ok(mount, `${w.metadata.name}: nothing mounted at ${dirname(file)} for ${file}`);
  const volume = w.spec.template.spec.volumes.find((v) => v.name === mount.name);
  assert.ok(volume, `${w.metadata.name}: no volume ${mount.name}`);
  return { volume, key: posix.basename(file) };
}

function assertSecretFile(w: Workload, file: string | undefined) {
  if (file === undefined) return;
  const { volume, key } = sourceOf(w, file);
  assert.ok(volume.secret, `${w.metadata.name}: ${file} comes from volume ${volume.name}, not a Secret`);
  const secret = secrets.find((s) => s.metadata.name === volume.secret!.secretName);
  assert.ok(secret, `Secret ${volume.secret.secretName} is among the example Secrets`);
  assert.ok(
    key in (secret.stringData ?? secret.data ?? {}),
    `Secret ${secret.metadata.name} has a key ${key}`,
  );
}

const kafkaFiles = () => {
  const s = config.environment.kafka_security;
  return [s?.ca_file, s?.certificate_file, s?.key_file, s?.key_password_file, s?.sasl?.password_file];
};
const clickhouseFiles = () => {
  const ch = config.environment.monitoring.clickhouse_server;
  return [ch.password_file, ch.tls.ca_file];
};

describe('deploy/kubernetes', () => {
  it("the ConfigMap's config.yaml passes the project's config loader", () => {
    assert.ok(configText, 'ConfigMap hamstring-config has a config.yaml');
    assert.ok(config.runtime.health_port > 0, 'the stages serve a health port');
  });

  it('every resource is in the hamstring namespace, which a manifest creates', () => {
    assert.ok(resources.some((r) => r.kind === 'Namespace' && r.metadata.name === 'hamstring'));
    for (const r of [...resources, ...secrets].filter((r) => r.kind !== 'Namespace'))
      assert.equal(r.metadata.namespace, 'hamstring', `${r.kind} ${r.metadata.name}`);
  });

  it('the stage StatefulSets are what scripts/kubernetes-stages.ts writes from the ConfigMap (npm run kubernetes:stages)', () => {
    const wanted = stageManifests(config);
    const committed = committedStageManifests();
    assert.deepEqual([...committed.keys()].sort(), [...wanted.keys()].sort());
    for (const [file, text] of wanted) assert.equal(committed.get(file), text, file);
  });

  it('every configured component runs in exactly one StatefulSet, and each stage workload is one', () => {
    const run = stages.map((w) => {
      assert.equal(w.kind, 'StatefulSet', `${w.metadata.name}: stable pod names are the instance ids`);
      const c = componentOf(w);
      return `${c.kind} ${c.name}`;
    });
    const configured = pipelineComponents(config).map((c) => `${c.kind} ${c.name}`);
    assert.deepEqual([...run].sort(), [...configured].sort());
  });

  it("every container's args are a command line the CLI takes, to the image's entrypoint", async () => {
    // The hamstring command, which execs node (containerfile.test.ts): the args reach the CLI as they are.
    assert.deepEqual(imageEntrypoint(), [`${IMAGE_ROOT}bin/hamstring`]);
    for (const w of workloads) {
      const c = container(w);
      assert.equal(c.command, undefined, `${w.metadata.name} keeps the image's entrypoint`);
      const cli = await cliAccepts(c.args.map(String));
      assert.equal(cli.code, 0, `${w.metadata.name}: ${cli.output}`);
    }
    byCommand('monitoring run');
    byCommand('dashboard');
  });

  it('stage instance ids are the StatefulSet pod names', () => {
    for (const w of stages) {
      const id = container(w).env?.find((e) => e.name === 'HAMSTRING_INSTANCE_ID');
      assert.equal(id?.valueFrom?.fieldRef?.fieldPath, 'metadata.name', w.metadata.name);
    }
  });

  it('the config file every container reads is the ConfigMap', () => {
    for (const w of workloads) {
      const args = argsOf(w);
      const path = args[args.indexOf('--config') + 1];
      assert.ok(path, `${w.metadata.name} names --config`);
      const { volume, key } = sourceOf(w, path);
      assert.equal(volume.configMap?.name, 'hamstring-config', w.metadata.name);
      assert.equal(key, 'config.yaml');
    }
  });

  it('probes reach /livez and /readyz on the configured health port, with the access token', () => {
    const { health_port: port, health_host: host } = config.runtime;
    const tokenFile = config.endpoints.access_token_file;
    // The same rule the health server applies at start: beyond loopback only with a token.
    assert.doesNotThrow(() =>
      assertBindAllowed(host, tokenFile === undefined ? undefined : 'x'.repeat(16), 'runtime.health_host'),
    );
    const copied = containerfile()
      .all.filter(([k]) => k === 'COPY')
      .map(([, rest]) => rest);
    const ignore = readRepoFile('.dockerignore');
    for (const w of stages) {
      const c = container(w);
      assert.deepEqual(c.ports, [{ name: 'health', containerPort: port }], w.metadata.name);
      for (const [kind, path] of [
        ['startupProbe', '/livez'],
        ['livenessProbe', '/livez'],
        ['readinessProbe', '/readyz'],
      ] as const) {
        const command = c[kind]?.exec?.command;
        assert.ok(command, `${w.metadata.name}: ${kind} is an exec probe (loopback, token from a file)`);
        const [node, script, url, token] = command;
        assert.equal(node, 'node');
        assert.ok(script?.startsWith(IMAGE_ROOT), `${kind} runs a script of the image`);
        const file = (script ?? '').slice(IMAGE_ROOT.length);
        assert.ok(existsSync(`${REPO}${file}`), `${file} exists`);
        assert.ok(
          copied.some((rest) => rest.startsWith(`${file} `)),
          `the Containerfile copies ${file}`,
        );
        assert.ok(ignore.split('\n').includes(`!${file}`), `.dockerignore lets ${file} into the context`);
        assert.equal(url, `http://127.0.0.1:${port}${path}`, `${w.metadata.name} ${kind}`);
        assert.equal(token, tokenFile, `${w.metadata.name} ${kind} sends the configured token`);
      }
    }
  });

  it('every secret file a process reads is a key of a mounted Secret', () => {
    for (const w of stages)
      [...kafkaFiles(), config.endpoints.access_token_file].forEach((f) => assertSecretFile(w, f));
    const agent = byCommand('monitoring run');
    [...kafkaFiles(), ...clickhouseFiles()].forEach((f) => assertSecretFile(agent, f));
    const dashboard = byCommand('dashboard');
    [...clickhouseFiles(), config.endpoints.access_token_file].forEach((f) => assertSecretFile(dashboard, f));
    assert.ok(
      config.environment.kafka_security?.sasl?.password_file,
      'the example uses a Kafka password file',
    );
    assert.ok(config.endpoints.access_token_file, 'the example sets an access token file');
  });

  it('the root file system is read-only and the state, temp and model paths still work', () => {
    const uid = containerfile()
      .final.find(([k]) => k === 'USER')?.[1]
      .split(':')[0];
    assert.ok(config.runtime.state.dir.startsWith('/'), 'runtime.state.dir is absolute');
    for (const w of workloads) {
      const c = container(w);
      assert.equal(c.securityContext?.readOnlyRootFilesystem, true, w.metadata.name);
      assert.equal(
        String(w.spec.template.spec.securityContext?.runAsUser),
        uid,
        `${w.metadata.name} runs as USER`,
      );
      // tsx compiles the sources into the temporary folder.
      const tmp = sourceOf(w, '/tmp/x').volume;
      assert.ok(tmp.emptyDir, `${w.metadata.name}: /tmp is writable`);
    }
    for (const w of stages) {
      const mount = container(w).volumeMounts.find((m) =>
        config.runtime.state.dir.startsWith(`${m.mountPath}/`),
      );
      const volume = w.spec.template.spec.volumes.find((v) => v.name === mount?.name);
      assert.ok(volume?.emptyDir, `${w.metadata.name}: ${config.runtime.state.dir} is on a writable volume`);
    }
    // Models resolve against the working directory, which the image sets to its install root.
    assert.equal(containerfile().final.find(([k]) => k === 'WORKDIR')?.[1], IMAGE_ROOT.replace(/\/$/, ''));
  });

  it("the workers' Service governs the StatefulSets, and the dashboard reads each one's /metrics", () => {
    const service = resources.find((r) => r.kind === 'Service' && r.spec?.clusterIP === 'None');
    assert.ok(service?.spec?.selector, 'a headless Service selects the stage pods');
    const dashboardArgs = argsOf(byCommand('dashboard'));
    const urls = dashboardArgs[dashboardArgs.indexOf('--metrics') + 1]?.split(',') ?? [];
    for (const w of stages) {
      assert.equal(w.spec.serviceName, service.metadata.name, w.metadata.name);
      const labels = w.spec.template.metadata.labels;
      const selector: Record<string, string> = service.spec.selector;
      for (const [k, v] of Object.entries(selector)) assert.equal(labels[k], v, w.metadata.name);
      const url = `http://${w.metadata.name}-0.${service.metadata.name}:${config.runtime.health_port}/metrics`;
      assert.ok(urls.includes(url), `the dashboard reads ${url}`);
    }
    assert.equal(urls.length, stages.length);
  });
});
