/** Arguments each demo tool accepts, keyed by its original name (see demo/src/tools.ts). */
export const VALID_ARGUMENTS: Record<string, Record<string, unknown>> = {
  "unity/health": {},
  "files.read": { path: "src/main.ts", max_bytes: 512 },
  "catering.invoice": { payload_json: { invoice_id: "INV-1042", amount: 19.5 } },
  "scope:action": { scope: "billing" },
  "analytics_reporting_service.generate_quarterly_revenue_summary_by_region": { quarter: 3 },
  a_b: {},
  "a/b": {},
  "21st_century": {},
  "reports.query": { limit: 10, priority: 2, since: null, filters: { team: "core" } },
  "get-weather": { city: "Oslo" },
  "tasks.countdown": { steps: 1, delay_ms: 0 },
  "catalog.refresh": {},
  "deploy:confirm": { target: "staging" },
};
