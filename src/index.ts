/**
 * MCP Edge Rewriter: a Cloudflare Worker in front of one MCP server (the origin)
 * that makes every tool name legal for the client's LLM API and routes calls
 * back to the original tools. See README.md and DESIGN.md.
 */
import { createApp } from "./app";

export default createApp();
