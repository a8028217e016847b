/**
 * Nodes of a view, as a list until one is looked up. `openai-strict` marks
 * every optional property it makes nullable (walk.ts, `absentNulls`), four of
 * five properties of a listing; only a `tools/call` whose arguments hold a
 * `null` looks one up (way-back.ts). A set made for every view cost a tenth of
 * `openai-strict`'s views: the set is made at the first lookup.
 */
export class NodeSet {
  private set: ReadonlySet<object> | undefined;

  constructor(private readonly nodes: readonly object[]) {}

  get size(): number {
    return this.nodes.length;
  }

  has(node: object): boolean {
    this.set ??= new Set(this.nodes);
    return this.set.has(node);
  }
}
