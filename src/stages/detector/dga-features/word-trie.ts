/** Nodes whose children are also kept in a dense table (26 slots each: about 1.7 MB). */
const DENSE_NODES = 16_384;

/**
 * Words in a trie of typed arrays (first child, next sibling): walking a label character by
 * character allocates nothing, where a map of word strings needs a new slice per lookup, which
 * made word segmentation the most expensive DGA feature. Nodes are numbered in the order the
 * words arrive, most common first, so the first {@link DENSE_NODES} nodes (every one- and
 * two-letter prefix and the common longer ones) also get a dense child table: most steps of a
 * word cover are then one array read instead of a walk along up to 26 siblings.
 */
export class WordTrie {
  private child: Int32Array;
  private sibling: Int32Array;
  private symbol: Uint8Array;
  /** The word's rarity in [0, 1] where a word ends at this node, -1 elsewhere. */
  private value: Float32Array;
  private size = 1;
  private dense: Int32Array;

  /** `words` most common first: a word's rarity is log(rank + 1) / log(count). */
  constructor(words: readonly string[]) {
    const capacity = words.reduce((sum, w) => sum + w.length, 0) + 1;
    this.child = new Int32Array(capacity).fill(-1);
    this.sibling = new Int32Array(capacity).fill(-1);
    this.symbol = new Uint8Array(capacity);
    this.value = new Float32Array(capacity).fill(-1);
    const n = words.length;
    words.forEach((word, rank) => {
      let node = 0;
      for (let i = 0; i < word.length; i += 1) node = this.childOrAdd(node, word.charCodeAt(i));
      if ((this.value[node] ?? -1) < 0) this.value[node] = n <= 1 ? 0 : Math.log(rank + 1) / Math.log(n);
    });
    const denseNodes = Math.min(DENSE_NODES, this.size);
    this.dense = new Int32Array(denseNodes * 26).fill(-1);
    for (let node = 0; node < denseNodes; node += 1)
      for (let c = this.child[node] ?? -1; c >= 0; c = this.sibling[c] ?? -1) {
        const letter = (this.symbol[c] ?? 0) - 97;
        if (letter >= 0 && letter < 26) this.dense[node * 26 + letter] = c;
      }
  }

  /** The child of `node` for character `code`, or -1. */
  next(node: number, code: number): number {
    const letter = code - 97;
    if (letter < 0 || letter >= 26) return -1;
    if (node < DENSE_NODES) return this.dense[node * 26 + letter] ?? -1;
    return this.walk(node, code);
  }

  private walk(node: number, code: number): number {
    let c = this.child[node] ?? -1;
    while (c >= 0 && this.symbol[c] !== code) c = this.sibling[c] ?? -1;
    return c;
  }

  /** The rarity of the word ending at `node`, or -1 when no word ends there. */
  rarity(node: number): number {
    return this.value[node] ?? -1;
  }

  private childOrAdd(node: number, code: number): number {
    const found = this.walk(node, code);
    if (found >= 0) return found;
    const at = this.size++;
    this.symbol[at] = code;
    this.sibling[at] = this.child[node] ?? -1;
    this.child[node] = at;
    return at;
  }
}
