import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/index.ts';
import { BUILTIN_STAGES } from '../../../src/app/builtin-stages.ts';
import { pipelineComponents, selectComponent } from '../../../src/stages/pipeline-components.ts';
import { cliAccepts, DEPLOY, readRepoFile, REPO } from './helpers.ts';

type Unit = Map<string, Map<string, string[]>>;

/** A unit file's sections and their keys, each key with every value it was given, in order. */
function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = new Map();
      unit.set(header[1]!, section);
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(section && eq > 0, `not a key=value line inside a section: ${line}`);
    const key = line.slice(0, eq);
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1)]);
  }
  return unit;
}

const unitFile = (name: string) => parseUnit(readRepoFile(`deploy/systemd/${name}`));
const service = (unit: Unit) => unit.get('Service') ?? new Map<string, string[]>();
const one = (unit: Unit, key: string) => {
  const values = service(unit).get(key) ?? [];
  assert.equal(values.length, 1, `[Service] ${key}= set ${values.length} times`);
  return values[0]!;
};

/** The Environment= assignments of a unit (no quoting is used in them). */
function environmentOf(unit: Unit): Record<string, string> {
  const pairs = (service(unit).get('Environment') ?? []).flatMap((v) => v.split(/\s+/));
  return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
}

/**
 * The argv systemd would exec for ExecStart: specifiers (%i, %%) first, then the words split with
 * systemd's quotes, then `$$` and `${VAR}` from `env`. A specifier or variable form the units do
 * not use fails the test rather than being guessed at.
 */
function execStartArgv(unit: Unit, instance: string | undefined, env: Record<string, string>): string[] {
  const line = one(unit, 'ExecStart').replace(/%(.)/g, (_, c: string) => {
    if (c === '%') return '%';
    if (c === 'i' && instance !== undefined) return instance;
    throw new Error(`unexpected specifier %${c}`);
  });
  const words = [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  return words.map((word) =>
    word.replace(/\$\$|\$\{(\w+)\}|\$(\w+)/g, (match, braced?: string, bare?: string) => {
      if (match === '$$') return '$';
      if (bare !== undefined) throw new Error(`unbraced $${bare} in ExecStart`);
      const value = env[braced!];
      if (value === undefined) throw new Error(`ExecStart uses \${${braced}}, which the unit does not set`);
      return value;
    }),
  );
}

const config = loadConfig({ path: `${REPO}config.yaml`, env: {} });
const instanceOf = (c: { kind: string; name: string }, kindCount: number) =>
  kindCount > 1 ? `${c.kind}-${c.name}` : c.kind;
const components = pipelineComponents(config);
const instances = components.map((c) => ({
  component: c,
  instance: instanceOf(c, components.filter((o) => o.kind === c.kind).length),
}));

/**
 * Runs a unit's ExecStart (`/bin/sh -c '... exec "$HAMSTRING_HOME/bin/hamstring" ...'`) with the
 * unit's Environment= against a stand-in bin/hamstring that execs node to print its argv and pid:
 * the argv is what the CLI would receive, and a pid equal to the shell's shows that the shell, the
 * command and node are one process, each exec'ing the next, with none left to hold a signal.
 */
function startedArgv(name: string, instance?: string, extraEnv: Record<string, string> = {}): string[] {
  const unit = unitFile(name);
  const argv = execStartArgv(unit, instance, {});
  assert.deepEqual(argv.slice(0, 2), ['/bin/sh', '-c'], `${name} starts through /bin/sh`);
  const script = argv[2]!;
  assert.equal(
    script.split('exec "$HAMSTRING_HOME/bin/hamstring" ').length,
    2,
    `${name}: the script execs bin/hamstring once`,
  );
  assert.doesNotMatch(script, /\bnode\b|hamstring\.js/, `${name}: starting node is bin/hamstring's job`);
  const env = { ...environmentOf(unit), HAMSTRING_HOME: stubRoot(), ...extraEnv };
  const run = spawnSync('/bin/sh', argv.slice(1), { encoding: 'utf8', env });
  assert.equal(run.status, 0, `${name}: ${run.stderr}`);
  const seen = JSON.parse(run.stdout) as { pid: number; argv: string[] };
  assert.equal(seen.pid, run.pid, `${name}: node runs in the process systemd started`);
  return seen.argv;
}
const templateArgv = (instance: string, extraEnv: Record<string, string> = {}) =>
  startedArgv('hamstring@.service', instance, extraEnv);

let stub: string | undefined;
/** An install root whose bin/hamstring, like the real one, ends by exec'ing node. */
function stubRoot(): string {
  if (stub) return stub;
  stub = mkdtempSync(join(tmpdir(), 'hamstring-systemd-'));
  mkdirSync(join(stub, 'bin'));
  const node = `'${process.execPath.replaceAll("'", "'\\''")}'`;
  const print = 'console.log(JSON.stringify({ pid: process.pid, argv: process.argv.slice(1) }))';
  writeFileSync(join(stub, 'bin/hamstring'), `#!/bin/sh\nexec ${node} -e '${print}' -- "$@"\n`, {
    mode: 0o755,
  });
  return stub;
}
after(() => {
  if (stub) rmSync(stub, { recursive: true, force: true });
});

/** The component a `hamstring run` argv runs, resolved the way the command resolves it. */
function componentOfRun(argv: readonly string[]) {
  assert.equal(argv[0], 'run');
  const kind = argv[1]!;
  assert.ok(BUILTIN_STAGES.has(kind), `${kind} is a built-in stage`);
  const at = argv.indexOf('--name');
  return selectComponent(config, kind as never, at === -1 ? undefined : argv[at + 1]);
}

describe('deploy/systemd', () => {
  const units = ['hamstring@.service', 'hamstring-monitoring.service', 'hamstring-dashboard.service'];

  it('passes systemd-analyze verify, for an instance of every configured component', (t) => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (probe.error) {
      t.skip(`systemd-analyze is not installed here (${probe.error.message})`);
      return;
    }
    const names = [
      ...instances.map(({ instance }) => `hamstring@${instance}.service`),
      'hamstring-monitoring.service',
      'hamstring-dashboard.service',
    ];
    const run = spawnSync('systemd-analyze', ['verify', '--man=no', ...names.map((n) => `./${n}`)], {
      cwd: `${DEPLOY}systemd`,
      encoding: 'utf8',
    });
    // Only complaints about these units count, not the host's own unit files.
    const ours = `${run.stdout}\n${run.stderr}`.split('\n').filter((l) => /hamstring/.test(l));
    assert.deepEqual(ours, [], `systemd-analyze verify:\n${run.stderr}`);
    assert.equal(run.status, 0, run.stderr);
  });

  for (const { component, instance } of instances) {
    it(`hamstring@${instance} runs \`hamstring run\` for ${component.kind} ${component.name}`, async () => {
      const argv = templateArgv(instance);
      assert.deepEqual(componentOfRun(argv), component);
      assert.deepEqual(argv.slice(-2), ['--config', '/etc/hamstring/config.yaml']);
      const cli = await cliAccepts(argv);
      assert.equal(cli.code, 0, cli.output);
      assert.match(cli.output, /^usage: hamstring run /);
    });
  }

  it('passes HAMSTRING_RUN_ARGS on as separate options the run command takes', async () => {
    const argv = templateArgv('detector-domainator', {
      HAMSTRING_RUN_ARGS: '--create-topics --partitions 6',
    });
    assert.deepEqual(argv, [
      'run',
      'detector',
      '--name',
      'domainator',
      '--create-topics',
      '--partitions',
      '6',
      '--config',
      '/etc/hamstring/config.yaml',
    ]);
    assert.equal((await cliAccepts(argv)).code, 0);
  });

  it('the instances docs/deploy.md names are components of the shipped config.yaml', () => {
    const named = [...readRepoFile('docs/deploy.md').matchAll(/hamstring@([\w-]+)\.service/g)].map(
      (m) => m[1]!,
    );
    assert.ok(named.length >= instances.length, `docs/deploy.md names ${named.length} stage instances`);
    for (const instance of new Set(named)) assert.doesNotThrow(() => componentOfRun(templateArgv(instance)));
    const covered = new Set(
      named.map((i) => componentOfRun(templateArgv(i))).map((c) => `${c.kind} ${c.name}`),
    );
    assert.equal(covered.size, components.length, 'every configured component runs somewhere');
  });

  for (const [name, path] of [
    ['hamstring-monitoring.service', 'monitoring run'],
    ['hamstring-dashboard.service', 'dashboard'],
  ] as const) {
    it(`${name} runs \`hamstring ${path}\` through bin/hamstring, in one process`, async () => {
      const args = startedArgv(name, undefined, { HAMSTRING_METRICS_URLS: 'http://node1:9464/metrics' });
      assert.equal(args.slice(0, path.split(' ').length).join(' '), path);
      const at = args.indexOf('--config');
      assert.deepEqual(args.slice(at, at + 2), ['--config', '/etc/hamstring/config.yaml']);
      const cli = await cliAccepts(args);
      assert.equal(cli.code, 0, cli.output);
      assert.ok(cli.output.startsWith(`usage: hamstring ${path}`), cli.output);
    });
  }

  for (const name of units) {
    it(`${name} restarts on failure, stops gracefully, runs unprivileged and sandboxed`, () => {
      const unit = unitFile(name);
      assert.equal(one(unit, 'Restart'), 'on-failure');
      assert.match(one(unit, 'RestartSec'), /^\d+s$/);
      assert.ok(
        Number(unit.get('Unit')?.get('StartLimitBurst')?.[0]) > 0,
        'a start limit bounds the restarts',
      );
      // One process (startedArgv checks the execs), so systemd's SIGTERM reaches hamstring itself, once.
      assert.equal(one(unit, 'KillMode'), 'control-group');
      assert.equal(one(unit, 'Type'), 'exec');
      assert.equal(service(unit).get('ExecStop'), undefined, 'stopped by the signal alone');
      // bin/hamstring execs the first node on PATH: here /usr/bin/node, which docs/deploy.md installs.
      assert.equal(environmentOf(unit).PATH, '/usr/bin:/bin');
      assert.equal(environmentOf(unit).HAMSTRING_HOME, one(unit, 'WorkingDirectory'), 'the install root');
      assert.notEqual(one(unit, 'User'), 'root');
      assert.ok(
        (service(unit).get('EnvironmentFile') ?? []).includes('-/etc/hamstring/secrets.env'),
        'secrets come from an EnvironmentFile',
      );
      for (const key of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'PrivateDevices'])
        assert.equal(one(unit, key), 'yes', key);
      assert.equal(one(unit, 'ProtectSystem'), 'strict');
      assert.equal(one(unit, 'CapabilityBoundingSet'), '');
      // V8 compiles code into memory it then executes.
      assert.equal(service(unit).get('MemoryDenyWriteExecute'), undefined);
      assert.match(one(unit, 'RestrictAddressFamilies'), /AF_INET6/);
    });
  }
});
