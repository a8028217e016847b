/**
 * The rules a view applied, in the order first applied (`ViewContext.applied`).
 * A list, not a `Set`: a view applies a few at most, and a set made for each
 * schema of a listing, added to at every object and spread into a list at
 * the end, cost three times as much (`openai-strict` adds two at every object).
 */
import type { SchemaRule } from "./pass";

export class RuleList implements Iterable<SchemaRule> {
  private readonly rules: SchemaRule[] = [];

  get size(): number {
    return this.rules.length;
  }

  add(rule: SchemaRule): void {
    if (!this.has(rule)) this.rules.push(rule);
  }

  has(rule: SchemaRule): boolean {
    return this.rules.includes(rule);
  }

  [Symbol.iterator](): Iterator<SchemaRule> {
    return this.rules[Symbol.iterator]();
  }

  /** The rules, as a list of their own. */
  toList(): SchemaRule[] {
    return this.rules.slice();
  }
}
