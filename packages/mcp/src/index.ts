/**
 * @rolecraft/mcp — Rolecraft's `McpClient` over `@modelcontextprotocol/sdk`,
 * and serving a role (or an agent) as an MCP server.
 *
 * @since 0.1.0
 */
export * as Mcp from "./Mcp.ts"
export * as McpClientSdk from "./McpClientSdk.ts"
export * as McpElicitation from "./McpElicitation.ts"
export * as McpOAuth from "./McpOAuth.ts"
export * as McpSampling from "./McpSampling.ts"
export * as McpTokenStore from "./McpTokenStore.ts"
export * as McpTransport from "./McpTransport.ts"
export * as McpPeer from "./McpPeer.ts"
export * as McpPrompt from "./McpPrompt.ts"
export * as McpResource from "./McpResource.ts"
