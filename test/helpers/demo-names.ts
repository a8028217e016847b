/**
 * The model-facing names of the demo origin's tools (demo/src/tools.ts) under
 * the default profile, written here once for every test.
 */

/** original → model-facing name under `openai` (docs/names.md; pinned: clients hold these). */
export const DEMO_NAMES = {
  "unity/health": "unity_health_9okte1",
  "files.read": "files_read_yqgun6",
  "catering.invoice": "catering_invoice_kb7ev1",
  "scope:action": "scope_action_rdowz5",
  "analytics_reporting_service.generate_quarterly_revenue_summary_by_region":
    "analytics_reporting_service_generate_quarterly_revenue_su_oshsl2",
  a_b: "a_b",
  "a/b": "a_b_g8wk3l",
  "21st_century": "21st_century",
  "reports.query": "reports_query_ytlkv2",
  "get-weather": "get-weather",
  "tasks.countdown": "tasks_countdown_o0ffbg",
  "catalog.refresh": "catalog_refresh_oi0qxl",
  "deploy:confirm": "deploy_confirm_5rag2c",
} as const;
