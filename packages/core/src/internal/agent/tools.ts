/**
 * `agent.tools`: an agent's actions as tools, for what offers them outside a chat turn (an MCP server, an
 * effect/ai toolkit). Built by the one toolkit builder, without expanding MCP servers: an mcpTool action is
 * one tool with its fixed `{ tool, arguments }` parameters. Registration has already refused parameters that
 * cannot be projected, so only a name clash the builder cannot resolve (repeated hash collisions) could leave
 * an action out.
 */
import * as Effect from "effect/Effect"
import type { ActionTool } from "../../ActionTool.ts"
import * as Toolkit from "../tool/toolkit.ts"

/** Every action not kept from the model whose name the agent's authority allows, in declaration order. */
export const toolsOf = (source: Toolkit.Source): Effect.Effect<ReadonlyArray<ActionTool>> =>
  Effect.map(Toolkit.make(source, { expandMcp: false })(false), (kit) => kit.tools)
