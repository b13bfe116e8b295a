import { execFileSync } from 'node:child_process';
import { ip, NetworkNamespace, tryIp } from './network-namespace.ts';

/**
 * Simulated machines on one host: N Linux network namespaces, each with its own address on one
 * bridge, joined to it by a veth pair. The host holds the bridge's address, so host processes (a
 * traffic source, ClickHouse, the monitoring agent) reach every machine and every machine reaches
 * the others and the host. Losing a machine sets its veth's bridge end down: every packet to and
 * from it is dropped silently, nothing is reset, as when its cable is pulled.
 *
 * Names and addresses derive from `tag`, so building again after a crashed run replaces the
 * leftovers (the processes still in the old namespaces are killed). Tags are kept apart from the
 * verifier's single namespaces (network-namespace.ts: `hsv<tag>`, 10.213.0.0/16): these are named
 * `hsm<tag>...` and take the /24 10.214.(tag % 256).0 — two builds at once need tags that differ
 * modulo 256 (the integration ports of concurrent helpers do).
 *
 * Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and iproute2; see {@link MachineNetwork.unavailableReason}.
 */
export interface SimulatedMachine {
  /** 1-based. */
  readonly index: number;
  /** `m1`, `m2`, ...: how reports and process labels name it. */
  readonly name: string;
  /** The network namespace the machine's processes run in. */
  readonly namespace: string;
  /** The machine's address on the bridge: what its servers bind to. */
  readonly address: string;
}

/** Interface names are at most 15 characters: `hsm` + 5 digits + `m` + 2 digits + 1 letter fits. */
const MAX_MACHINES = 20;

export class MachineNetwork {
  readonly bridge: string;
  /** The host's address on the bridge. */
  readonly hostAddress: string;
  readonly machines: readonly SimulatedMachine[];
  readonly #prefix: string;
  readonly #subnet: string;

  private constructor(tag: number, count: number) {
    if (!Number.isInteger(tag) || tag < 0 || tag > 99_999) throw new Error(`invalid machine tag ${tag}`);
    if (!Number.isInteger(count) || count < 1 || count > MAX_MACHINES)
      throw new Error(`machines: 1..${MAX_MACHINES}, not ${count}`);
    this.#prefix = `hsm${tag}`;
    this.#subnet = `10.214.${tag % 256}`;
    this.bridge = `${this.#prefix}b`;
    this.hostAddress = `${this.#subnet}.1`;
    this.machines = Array.from({ length: count }, (_, i) => this.#machine(i + 1));
  }

  #machine(index: number): SimulatedMachine {
    return {
      index,
      name: `m${index}`,
      namespace: `${this.#prefix}m${index}`,
      address: `${this.#subnet}.${10 + index}`,
    };
  }

  /** Why the machines cannot be built here, or undefined when they can. */
  static unavailableReason(): string | undefined {
    return NetworkNamespace.unavailableReason();
  }

  /**
   * Builds the bridge and `count` machines, removing the leftovers of an earlier build with this tag
   * first (up to {@link MAX_MACHINES} machines, whatever count that build had).
   */
  static create(tag: number, count: number): MachineNetwork {
    const net = new MachineNetwork(tag, count);
    MachineNetwork.remove(tag);
    try {
      ip(['link', 'add', net.bridge, 'type', 'bridge']);
      ip(['addr', 'add', `${net.hostAddress}/24`, 'dev', net.bridge]);
      ip(['link', 'set', net.bridge, 'up']);
      for (const m of net.machines) net.addMachine(m);
    } catch (e) {
      MachineNetwork.remove(tag);
      throw e;
    }
    return net;
  }

  /** The network of an earlier build with `tag` and `count` machines, without touching it. */
  static attach(tag: number, count: number): MachineNetwork {
    return new MachineNetwork(tag, count);
  }

  /**
   * Adds machine `index` (beyond the built ones: a machine joining a running pipeline). Returns it;
   * {@link machines} then lists it too.
   */
  grow(index: number): SimulatedMachine {
    const existing = this.machines.find((m) => m.index === index);
    if (existing) return existing;
    const m = this.#machine(index);
    this.addMachine(m);
    (this.machines as SimulatedMachine[]).push(m);
    return m;
  }

  private addMachine(m: SimulatedMachine): void {
    const [host, inside] = [`${m.namespace}h`, `${m.namespace}n`];
    ip(['netns', 'add', m.namespace]);
    ip(['link', 'add', host, 'type', 'veth', 'peer', 'name', inside]);
    ip(['link', 'set', inside, 'netns', m.namespace]);
    ip(['link', 'set', host, 'master', this.bridge]);
    ip(['link', 'set', host, 'up']);
    ip(['-n', m.namespace, 'addr', 'add', `${m.address}/24`, 'dev', inside]);
    ip(['-n', m.namespace, 'link', 'set', inside, 'up']);
    ip(['-n', m.namespace, 'link', 'set', 'lo', 'up']);
  }

  machine(name: string): SimulatedMachine {
    const m = this.machines.find((x) => x.name === name);
    if (!m) throw new Error(`no machine ${name}: there are ${this.machines.map((x) => x.name).join(', ')}`);
    return m;
  }

  /** Command prefix that runs a program on machine `m` (the program keeps its own pid). */
  static execPrefix(m: SimulatedMachine): string[] {
    return ['ip', 'netns', 'exec', m.namespace];
  }

  /** Cuts the machine off the bridge: every packet to and from it is dropped until {@link reconnect}. */
  disconnect(m: SimulatedMachine): void {
    ip(['link', 'set', `${m.namespace}h`, 'down']);
  }

  reconnect(m: SimulatedMachine): void {
    ip(['link', 'set', `${m.namespace}h`, 'up']);
  }

  /** Pids of every process running on machine `m`. */
  static pidsOn(m: SimulatedMachine): number[] {
    try {
      return execFileSync('ip', ['netns', 'pids', m.namespace], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .split('\n')
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  }

  /**
   * Kills (SIGKILL) every process still on the machines of `tag`, then removes the machines and the
   * bridge; what is gone already is skipped. Safe after a crash: nothing is left that names the tag.
   */
  static remove(tag: number): void {
    const net = new MachineNetwork(tag, MAX_MACHINES);
    for (const m of net.machines) {
      for (const pid of MachineNetwork.pidsOn(m)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      tryIp(['link', 'del', `${m.namespace}h`]);
      tryIp(['netns', 'del', m.namespace]);
    }
    tryIp(['link', 'del', net.bridge]);
  }
}
