/**
 * Structured log lines: one JSON object per line, which Workers Logs and
 * `wrangler tail` index by field. Argument values and credentials never go here.
 */
export function logEvent(event: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ event, ...fields }));
}
