/**
 * Words in a trie of typed arrays (first child, next sibling): walking a label character by
 * character allocates nothing, where a map of word strings needs a new slice per lookup, which
 * made word segmentation the most expensive DGA feature.
 */
export class WordTrie {
  private child: Int32Array;
  private sibling: Int32Array;
  private symbol: Uint8Array;
  /** The word's rarity in [0, 1] where a word ends at this node, -1 elsewhere. */
  private value: Float32Array;
  private size = 1;

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
  }

  /** The child of `node` for character `code`, or -1. */
  next(node: number, code: number): number {
    let c = this.child[node] ?? -1;
    while (c >= 0 && this.symbol[c] !== code) c = this.sibling[c] ?? -1;
    return c;
  }

  /** The rarity of the word ending at `node`, or -1 when no word ends there. */
  rarity(node: number): number {
    return this.value[node] ?? -1;
  }

  private childOrAdd(node: number, code: number): number {
    const found = this.next(node, code);
    if (found >= 0) return found;
    const at = this.size++;
    this.symbol[at] = code;
    this.sibling[at] = this.child[node] ?? -1;
    this.child[node] = at;
    return at;
  }
}
