import {
  expireIdle,
  expiryIntervalMs,
  observe,
  type DomainWindow,
} from '../../stages/detector/domainator/domainator.ts';
import { MapStore } from './window-store.ts';

/** The Domainator's settings a replay runs with. */
export interface ReplaySettings {
  readonly minWindow: number;
  readonly maxWindow: number;
  readonly idleTimeoutSeconds: number;
  readonly searchDomains?: readonly string[];
}

/**
 * The Domainator over one time-ordered stream of queries, with the queries' own time as its clock:
 * windows go idle and are expired on the timer interval the stage uses, as if the stream were live.
 * Evaluations replay generated traffic through it (`evaluateDomainator`, the DGA host level).
 */
export class DomainatorReplay {
  readonly #store = new MapStore<DomainWindow>();
  readonly #idleMs: number;
  readonly #interval: number;
  #nextTick = -Infinity;

  constructor(private readonly settings: ReplaySettings) {
    this.#idleMs = settings.idleTimeoutSeconds * 1000;
    this.#interval = expiryIntervalMs(this.#idleMs);
  }

  /** The request's score once its window holds `minWindow` names; undefined before or when not windowed. */
  add(host: string, name: string, atMs: number): number | undefined {
    if (this.#nextTick === -Infinity) this.#nextTick = atMs + this.#interval;
    for (; this.#nextTick <= atMs; this.#nextTick += this.#interval)
      expireIdle(this.#store, this.#nextTick, this.#idleMs);
    const { minWindow, maxWindow, searchDomains } = this.settings;
    return observe(
      this.#store,
      { src_ip: host, domain_name: name },
      { minWindow, maxWindow, now: atMs, ...(searchDomains === undefined ? {} : { searchDomains }) },
    )?.score;
  }
}
