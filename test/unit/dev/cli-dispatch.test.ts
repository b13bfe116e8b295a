import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UsageError, type Command, type CommandInput } from '../../../src/cli/command.ts';
import { runCli } from '../../../src/cli/dispatch.ts';
import type { CommandEntry } from '../../../src/cli/registry.ts';
import { commands } from '../../../src/cli/registry.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

function entry(command: Partial<Command>, summary = 'does things'): CommandEntry {
  return { summary, load: () => Promise.resolve({ usage: '', run: () => Promise.resolve(), ...command }) };
}

describe('hamstring dispatcher', () => {
  test('runs the longest matching command path with its parsed options', async () => {
    let seen: CommandInput | undefined;
    const registry = {
      dlt: entry({}),
      'dlt replay': entry({
        usage: '<topic> [--limit N]',
        options: { limit: { type: 'string' } },
        positionals: { min: 1, max: 1 },
        run: (input) => {
          seen = input;
          return Promise.resolve(0);
        },
      }),
    };
    const { io } = capture();
    assert.equal(await runCli(['dlt', 'replay', 'dead-letters', '--limit', '5'], io, registry), 0);
    assert.deepEqual(seen?.positionals, ['dead-letters']);
    assert.equal(seen?.values.limit, '5');
  });

  test('an unknown command prints usage and exits 2', async () => {
    const { io, err } = capture();
    assert.equal(await runCli(['frobnicate'], io, { up: entry({}) }), 2);
    assert.match(err.join('\n'), /unknown command: frobnicate/);
    assert.match(err.join('\n'), /usage: hamstring <command>/);
  });

  test('no command at all prints usage and exits 2; --help exits 0', async () => {
    assert.equal(await runCli([], capture().io, { up: entry({}) }), 2);
    const help = capture();
    assert.equal(await runCli(['--help'], help.io, { up: entry({}) }), 0);
    assert.match(help.out.join('\n'), /up {2}does things/);
  });

  test('a command group without subcommand lists only that group', async () => {
    const { io, err } = capture();
    const registry = { 'dev kafka start': entry({}, 'starts'), 'dev clickhouse start': entry({}, 'ch') };
    assert.equal(await runCli(['dev', 'kafka'], io, registry), 2);
    const text = err.join('\n');
    assert.match(text, /missing subcommand/);
    assert.match(text, /dev kafka start/);
    assert.doesNotMatch(text, /dev clickhouse/);
  });

  test('an unknown option or a UsageError is a usage error (exit 2) with the command usage', async () => {
    const registry = {
      x: entry({
        usage: '--n N',
        options: { n: { type: 'string' } },
        run: () => Promise.reject(new UsageError('bad n')),
      }),
    };
    const unknown = capture();
    assert.equal(await runCli(['x', '--bogus'], unknown.io, registry), 2);
    assert.match(unknown.err.join('\n'), /usage: hamstring x --n N/);
    const bad = capture();
    assert.equal(await runCli(['x', '--n', '1'], bad.io, registry), 2);
    assert.match(bad.err[0]!, /^error: bad n/);
  });

  test('a failure prints one error line without a stack and exits 1', async () => {
    const { io, err } = capture();
    const registry = { boom: entry({ run: () => Promise.reject(new Error('port 9092 in use')) }) };
    assert.equal(await runCli(['boom'], io, registry, {}), 1);
    assert.deepEqual(err, ['error: port 9092 in use']);
  });

  test('unexpected positionals are rejected', async () => {
    const { io, err } = capture();
    assert.equal(await runCli(['up', 'now'], io, { up: entry({}) }), 2);
    assert.match(err[0]!, /unexpected argument: now/);
  });

  test('every registered command module loads and declares a usage', async () => {
    for (const [path, registered] of Object.entries(commands)) {
      const command = await registered.load();
      assert.equal(typeof command.run, 'function', path);
      assert.equal(typeof command.usage, 'string', path);
    }
  });
});
