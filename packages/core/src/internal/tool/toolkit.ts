/**
 * What a model is offered of an agent: the one builder behind a chat turn's tools and `agent.tools` (which
 * the effect/ai toolkit and `Mcp.serve` offer in turn). Each tool is an action — or one tool of an mcpTool
 * action's server — under a name valid and unique for the provider APIs, with its parameters projected for a
 * model and the action (and server tool) a call of that name runs.
 *
 * Pure: it builds from entries and the lists of tools it is given (the agent's toolkit, `agent/tools.ts`,
 * lists MCP servers and applies authority). `strict` asks for the provider's strict mode on every tool.
 * Refuses nothing: an entry that cannot be offered (an empty or repeated key, parameters a model cannot be
 * shown, a name clash left after hashing) is left out with its reason and a logged warning; the others are
 * still offered.
 */
import * as Effect from "effect/Effect"
import type * as Action from "../../Action.ts"
import type { ActionTool } from "../../ActionTool.ts"
import type * as LanguageModel from "../../LanguageModel.ts"
import type { ToolDefinition } from "../../McpClient.ts"
import { jsonSchema, type Parameters } from "./jsonSchema.ts"
import * as Naming from "./naming.ts"
import { labelOf } from "../label.ts"
import * as ToolHints from "../../ToolHints.ts"

/**
 * One thing that may be offered: its `key` (unique among the entries; the name is made from it), the
 * `description` and `parameters` the model is shown, `strict` (default `false`), and where a call goes —
 * `action` (default the key) and, for an MCP server's tool, its own name `tool` — with the action's
 * `approval` reason.
 */
export interface Entry {
  readonly key: string
  readonly description: string
  readonly parameters: Parameters
  readonly strict?: boolean | undefined
  readonly action?: string | undefined
  readonly tool?: string | undefined
  readonly approval?: { readonly reason: string } | undefined
  readonly hints?: ToolHints.Hints | undefined
}

/** An entry that is not offered, with the reason. */
export interface Excluded {
  readonly key: string
  readonly reason: string
}

/**
 * What a model is offered in one request.
 *
 * - `tools`: in entry order, without the excluded ones; names are unique.
 * - `forModel`: the same tools as a provider is sent them (`LanguageModel.Tool`).
 * - `excluded`: entries left out, each with its reason.
 * - `find(name)`: the tool offered under a name, `undefined` for a name that was never offered (the caller
 *   answers NOT_FOUND or AUTHORITY).
 */
export interface Toolkit {
  readonly tools: ReadonlyArray<ActionTool>
  readonly forModel: ReadonlyArray<LanguageModel.Tool>
  readonly excluded: ReadonlyArray<Excluded>
  readonly find: (name: string) => ActionTool | undefined
}

/**
 * Builds the tools offered to a model from entries; pure.
 *
 * - Names are model-safe and unique (see the naming module): a clash after mapping is resolved the same way
 *   whatever the entries' order, a key that is already a valid name keeping it.
 * - Callers namespace MCP tools in the key themselves (`weather/get_forecast` → `weather_get_forecast`), so
 *   each name is routed to the server whose schema was offered.
 * - Each schema is projected with `jsonSchema` (`strict` per entry). An entry with an empty key, a key
 *   already seen (the first one stays), or a schema that cannot be projected goes to `excluded`: one bad
 *   tool never breaks all.
 *
 * For example:
 * ```
 * const kit = build([
 *   { key: "srv-a/send_email", description: "Send (A)", parameters: { type: "object" }, action: "srv-a", tool: "send_email" },
 *   { key: "srv-b/send_email", description: "Send (B)", parameters: { type: "object" }, action: "srv-b", tool: "send_email" }
 * ])
 * kit.tools.map((tool) => tool.name) // ["srv-a_send_email", "srv-b_send_email"]
 * kit.find("srv-b_send_email") // { action: "srv-b", tool: "send_email", … }
 * ```
 */
export const build = (entries: ReadonlyArray<Entry>): Toolkit => {
  const excluded: Array<Excluded> = []
  const accepted: Array<{ readonly entry: Entry; readonly parameters: LanguageModel.JsonSchemaObject }> = []
  const seen = new Set<string>()
  for (const entry of entries) {
    if (entry.key.length === 0) {
      excluded.push({ key: entry.key, reason: "the key is empty, so the tool has no name" })
      continue
    }
    if (seen.has(entry.key)) {
      excluded.push({ key: entry.key, reason: `the key "${entry.key}" is offered twice; the first entry is kept` })
      continue
    }
    seen.add(entry.key)
    const projected = jsonSchema(entry.parameters, { strict: entry.strict ?? false })
    if (projected._tag === "Failure") {
      excluded.push({
        key: entry.key,
        reason: `its parameters cannot be offered to a model: ${projected.failure.message}`
      })
      continue
    }
    accepted.push({ entry, parameters: projected.success })
  }
  const { names, clashing } = Naming.assign(accepted.map(({ entry }) => entry.key))
  for (const key of clashing) excluded.push({ key, reason: "its model-facing name clashes with another tool's" })
  const tools = accepted
    .filter(({ entry }) => !clashing.has(entry.key))
    .map(({ entry, parameters }) => toolOf(entry, names.get(entry.key) ?? Naming.modelName(entry.key), parameters))
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  return {
    tools,
    forModel: tools.map(forModel),
    excluded,
    find: (name) => byName.get(name)
  }
}

const toolOf = (entry: Entry, name: string, parameters: LanguageModel.JsonSchemaObject): ActionTool => ({
  name,
  description: entry.description,
  parameters,
  strict: entry.strict ?? false,
  action: entry.action ?? entry.key,
  ...(entry.tool === undefined ? {} : { tool: entry.tool }),
  approval: entry.approval,
  ...(entry.hints === undefined ? {} : { hints: entry.hints })
})

/** A tool as a provider is sent it: no route, no approval. */
const forModel = (tool: ActionTool): LanguageModel.Tool => ({
  name: tool.name,
  description: tool.description,
  parameters: tool.parameters,
  strict: tool.strict
})

/** A toolkit narrowed to `names` (in its own order): what is not kept is neither offered nor found. */
export const narrow = (kit: Toolkit, names: ReadonlyArray<string>): Toolkit => {
  const kept = new Set(names)
  return {
    tools: kit.tools.filter((tool) => kept.has(tool.name)),
    forModel: kit.forModel.filter((tool) => kept.has(tool.name)),
    excluded: kit.excluded,
    find: (name) => (kept.has(name) ? kit.find(name) : undefined)
  }
}

// =============================================================================
// Entries
// =============================================================================

/** An action offered as itself. */
export const actionEntry = (name: string, action: Action.Any, strict: boolean): Entry => ({
  key: name,
  description: action.description,
  parameters: action.parameters,
  strict,
  action: name,
  approval: approvalOf(action)
})

/**
 * The tools one mcpTool action (or agent MCP server) offers: `action` is its key in the agent, `tools` what
 * its server listed (already filtered by the action's allow-list and the agent's authority).
 */
export interface ServerTools {
  readonly action: string
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly approval?: { readonly reason: string } | undefined
  /** Whether the approval covers a tool (an approval policy's `when`); absent: every tool. */
  readonly approves?: ((tool: ToolDefinition) => boolean) | undefined
}

/**
 * A server's tools as entries keyed `<action>/<tool>`, so `srv-a` and `srv-b` both listing `send_email`
 * give two distinct names (`srv-a_send_email`, `srv-b_send_email`), each routed to its own server. The
 * description is the tool's `description`, else its `title`, else `"<tool> (MCP tool of <action>)"`.
 */
export const serverEntries = (server: ServerTools, strict: boolean | undefined): ReadonlyArray<Entry> =>
  server.tools.map((tool) => ({
    key: labelOf(server.action, tool.name),
    description: tool.description ?? tool.title ?? `${tool.name} (MCP tool of ${server.action})`,
    parameters: tool.inputSchema,
    strict,
    action: server.action,
    tool: tool.name,
    approval: server.approves === undefined || server.approves(tool) ? server.approval : undefined,
    hints: ToolHints.of(tool.annotations)
  }))

/** The approval reason of an action that requires approval. */
export const approvalOf = (action: Action.Any): { readonly reason: string } | undefined => {
  const approval = action.policies.approval
  return approval === undefined ? undefined : { reason: approval.reason }
}

/**
 * Builds a toolkit of `actions` entries (placed first) and the tools of several MCP servers, and logs one
 * warning per excluded entry. `options.strict` is the servers' tools' strict mode (default `false`); action
 * entries carry their own. Never fails.
 *
 * For example:
 * ```
 * const kit = yield* offer([
 *   { action: "srv-a", tools: [{ name: "send_email", inputSchema: { type: "object" } }] },
 *   { action: "srv-b", tools: [{ name: "send_email", inputSchema: { type: "object" } }] }
 * ])
 * kit.find("srv-b_send_email") // { action: "srv-b", tool: "send_email", … }
 * ```
 */
export const offer = (
  servers: ReadonlyArray<ServerTools>,
  options?: { readonly strict?: boolean | undefined; readonly actions?: ReadonlyArray<Entry> | undefined }
): Effect.Effect<Toolkit> =>
  Effect.suspend(() => {
    const entries = [
      ...(options?.actions ?? []),
      ...servers.flatMap((server) => serverEntries(server, options?.strict))
    ]
    const kit = build(entries)
    if (kit.excluded.length === 0) return Effect.succeed(kit)
    const isServerTool = new Set(entries.flatMap((entry) => (entry.tool === undefined ? [] : [entry.key])))
    return Effect.as(
      Effect.forEach(kit.excluded, (excluded) =>
        Effect.logWarning(
          `${isServerTool.has(excluded.key) ? "MCP tool" : "Action"} ${excluded.key} is not offered to the model: ${excluded.reason}`
        )
      ),
      kit
    )
  })
