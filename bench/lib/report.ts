/** What each section hands the report: its text for RESULTS.md, its numbers for results.json. */

export interface TargetCheck {
  /** What the target is about, in a few words. */
  name: string;
  goal: string;
  measured: string;
  met: boolean;
}

export interface SectionResult {
  title: string;
  /** Markdown under the section's heading. */
  markdown: string;
  targets: TargetCheck[];
  data: unknown;
}

export const mark = (met: boolean) => (met ? "✅" : "❌ missed");

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** A number with at most `digits` decimals and thousands separators. */
export function num(value: number, digits = 0): string {
  return value.toLocaleString("en-US", {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
}

/** A duration in ms, in the unit that reads best. */
export function duration(ms: number): string {
  if (ms < 0.001) return `${num(ms * 1e6, 0)} ns`;
  if (ms < 1) return `${num(ms * 1000, ms < 0.01 ? 2 : 1)} µs`;
  return `${num(ms, ms < 10 ? 2 : 1)} ms`;
}

export const mib = (bytes: number) => `${num(bytes / 2 ** 20, 1)} MiB`;
