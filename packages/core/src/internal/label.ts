/**
 * The one name of a call's target that authority, errors, events and the toolkit's keys use: the action's
 * name, or `action/tool` for one tool of an mcpTool action's MCP server.
 */

/** `action`, or `action/tool` for an MCP server's tool. */
export const labelOf = (action: string, tool?: string | undefined): string =>
  tool === undefined ? action : `${action}/${tool}`
