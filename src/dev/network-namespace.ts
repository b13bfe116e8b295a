import { execFileSync } from 'node:child_process';

/**
 * A Linux network namespace joined to the host by a veth pair, so that processes started in it
 * reach the host (a local Kafka's namespace listener) over a link the host can cut. Cutting sets
 * the host end down: packets are dropped silently in both directions, open connections stall and
 * new ones time out, as when a cable or a switch port goes; nothing is reset.
 *
 * Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2's `ip`. Names derive from `tag`, so
 * creating it again (after a crashed run) replaces the old one.
 */
export class NetworkNamespace {
  readonly name: string;
  /** The host end's address: what a listener for the namespace binds to. */
  readonly hostAddress: string;
  /** The namespace end's address. */
  readonly namespaceAddress: string;
  readonly #hostLink: string;
  readonly #nsLink: string;

  private constructor(tag: number) {
    this.name = `hsv${tag}`;
    this.#hostLink = `hsv${tag}h`;
    this.#nsLink = `hsv${tag}n`;
    // A /30 of 10.213.0.0/16 per tag: concurrent runs with different tags never share a subnet.
    const block = (tag % 16_384) * 4;
    const net = `10.213.${Math.floor(block / 256)}.${block % 256}`;
    const base = net.split('.').map(Number);
    this.hostAddress = [...base.slice(0, 3), base[3]! + 1].join('.');
    this.namespaceAddress = [...base.slice(0, 3), base[3]! + 2].join('.');
  }

  /**
   * Why a namespace cannot be made here, or undefined when it can (root and a working `ip netns`).
   */
  static unavailableReason(): string | undefined {
    if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
    if (process.getuid?.() !== 0) return 'network namespaces need root (CAP_NET_ADMIN)';
    // Listing works unprivileged; only making one (and a veth pair) proves it can be done. The probe
    // gets no addresses, so it cannot disturb a namespace of a running verification.
    const name = `hsvp${process.pid}`;
    try {
      ip(['netns', 'add', name]);
      ip(['link', 'add', `${name}h`, 'type', 'veth', 'peer', 'name', `${name}n`]);
      return undefined;
    } catch (e) {
      return `cannot make a network namespace here (iproute2, CAP_NET_ADMIN and CAP_SYS_ADMIN needed): ${(e as Error).message.split('\n')[0]}`;
    } finally {
      tryIp(['link', 'del', `${name}h`]);
      tryIp(['netns', 'del', name]);
    }
  }

  /** Creates the namespace, the veth pair and the addresses (replacing leftovers of the same tag). */
  static create(tag: number): NetworkNamespace {
    const ns = new NetworkNamespace(tag);
    ns.remove();
    const run = (args: string[]) => ip(args);
    run(['netns', 'add', ns.name]);
    try {
      run(['link', 'add', ns.#hostLink, 'type', 'veth', 'peer', 'name', ns.#nsLink]);
      run(['link', 'set', ns.#nsLink, 'netns', ns.name]);
      run(['addr', 'add', `${ns.hostAddress}/30`, 'dev', ns.#hostLink]);
      run(['link', 'set', ns.#hostLink, 'up']);
      run(['-n', ns.name, 'addr', 'add', `${ns.namespaceAddress}/30`, 'dev', ns.#nsLink]);
      run(['-n', ns.name, 'link', 'set', ns.#nsLink, 'up']);
      // Processes in the namespace may serve health endpoints on 127.0.0.1.
      run(['-n', ns.name, 'link', 'set', 'lo', 'up']);
    } catch (e) {
      ns.remove();
      throw e;
    }
    return ns;
  }

  /** Command prefix that runs a program inside the namespace (the program keeps its own pid). */
  execPrefix(): string[] {
    return ['ip', 'netns', 'exec', this.name];
  }

  /** Drops every packet between the namespace and the host until {@link heal}. */
  cut(): void {
    ip(['link', 'set', this.#hostLink, 'down']);
  }

  heal(): void {
    ip(['link', 'set', this.#hostLink, 'up']);
  }

  get isCut(): boolean {
    const out = execFileSync('ip', ['-o', 'link', 'show', this.#hostLink], { encoding: 'utf8' });
    return !/[<,]UP[,>]/.test(out);
  }

  /** Removes the namespace and the veth pair; nothing happens when they are gone already. */
  remove(): void {
    tryIp(['link', 'del', this.#hostLink]);
    tryIp(['netns', 'del', this.name]);
  }
}

/** Runs `ip <args>`; its stderr becomes the error. */
export function ip(args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: 'pipe' });
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`ip ${args.join(' ')} failed: ${stderr || (e as Error).message}`);
  }
}

/** Runs `ip <args>` where failing means it is done already (removing what is gone). */
export function tryIp(args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: 'ignore' });
  } catch {
    // Already gone.
  }
}
