import type { Codec, KeyValueStore, PartitionState } from './contract.ts';
import type { StateTransaction } from './state-transaction.ts';

/** One store of one partition as a stage sees it inside a transaction. */
class TransactionStore<V> implements KeyValueStore<V> {
  constructor(
    private readonly txn: StateTransaction,
    private readonly name: string,
    private readonly partition: number,
    private readonly codec: Codec<V>,
  ) {}

  get(key: string): V | undefined {
    const bytes = this.txn.read(this.name, this.partition, key);
    return bytes === undefined ? undefined : this.codec.decode(bytes);
  }

  has(key: string): boolean {
    return this.txn.read(this.name, this.partition, key) !== undefined;
  }

  put(key: string, value: V): void {
    if (value === undefined) throw new TypeError(`store ${this.name}: put(${key}) needs a value; use delete`);
    this.txn.write(this.name, this.partition, key, this.codec.encode(value));
  }

  delete(key: string): void {
    if (this.has(key)) this.txn.write(this.name, this.partition, key, null);
  }

  *range(bounds?: { from?: string; to?: string }): IterableIterator<[string, V]> {
    for (const [k, bytes] of this.txn.range(this.name, this.partition, bounds?.from, bounds?.to))
      yield [k, this.codec.decode(bytes)];
  }

  get size(): number {
    return this.txn.size(this.name, this.partition);
  }
}

/** The stores of one partition within a transaction; codecs by store name. */
export function partitionState(
  txn: StateTransaction,
  partition: number,
  codecs: ReadonlyMap<string, Codec<unknown>>,
): PartitionState {
  const opened = new Map<string, KeyValueStore<unknown>>();
  return {
    partition,
    store<V>(name: string): KeyValueStore<V> {
      let s = opened.get(name);
      if (!s) {
        const codec = codecs.get(name);
        if (!codec) throw new Error(`no store named ${name}; declared: ${[...codecs.keys()].join(', ')}`);
        s = new TransactionStore(txn, name, partition, codec);
        opened.set(name, s);
      }
      return s as KeyValueStore<V>;
    },
  };
}
