/**
 * An OpenAI Agents SDK app's MCP server, connected to the proxy at `url` for
 * the length of `use` and closed after it, as the node tests that drive the
 * Agents SDK through wrangler connect it.
 */
import { MCPServerStreamableHttp } from "@openai/agents";

export async function withAgentsSdkServer<T>(
  url: string,
  name: string,
  use: (server: MCPServerStreamableHttp) => Promise<T>,
): Promise<T> {
  // The SDK's 5 s for a request (its version probe among them) is a slow machine, not a hung
  // server: the suite's other files share the cores (the probe timed out twice at load 7).
  const server = new MCPServerStreamableHttp({ url, name, clientSessionTimeoutSeconds: 60 });
  await server.connect();
  try {
    return await use(server);
  } finally {
    await server.close();
  }
}
