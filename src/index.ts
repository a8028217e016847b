/**
 * MCP Edge Rewriter: a Cloudflare Worker in front of one MCP server (the origin)
 * that makes every tool name legal for the client's LLM API and routes calls
 * back to the original tools. README.md says what it does; ARCHITECTURE.md
 * says where each part lives.
 */
import { createApp } from "./app";

export { SignInBudget } from "./auth/sign-in-budget-object";

export default createApp() satisfies ExportedHandler<Env>;
