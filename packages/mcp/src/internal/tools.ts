/**
 * A server's tools over one connection: `tools/list` followed over every
 * page, cached per connection and refetched after
 * `notifications/tools/list_changed` (a listed tool that is not a usable
 * definition is left out with a warning, the others are kept); `tools/call`
 * with its result read loosely — a content block of an unknown type is kept
 * (the SDK's own schema would reject the whole result) and
 * `structuredContent` is not validated here (the agent checks it against
 * the tool's `outputSchema`).
 */
import { PaginatedResultSchema, ResultSchema } from "@modelcontextprotocol/sdk/types.js"
import type * as Core from "@rolecraft/core/McpClient"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as z from "zod/v4"
import { request, toMillis } from "./request.ts"
import type { Session } from "./session.ts"

const maxPages = 1_000

const CallResult = ResultSchema.extend({
  content: z.array(z.looseObject({ type: z.string() })).default([]),
  structuredContent: z.unknown().optional(),
  isError: z.unknown().optional()
})

const ListResult = PaginatedResultSchema.extend({ tools: z.array(z.unknown()) })

/** A listed tool as a definition, or why it cannot be one. */
const toDefinition = (entry: unknown): Core.ToolDefinition | string => {
  if (!Predicate.isObject(entry)) return "a tool entry that is not an object"
  const { name, title, description, inputSchema, outputSchema } = entry
  if (typeof name !== "string" || name === "") return "a tool entry without a name"
  if (inputSchema !== undefined && !Predicate.isObject(inputSchema))
    return `tool ${name}: its inputSchema is not an object`
  return {
    name,
    ...(typeof title === "string" ? { title } : {}),
    ...(typeof description === "string" ? { description } : {}),
    inputSchema: inputSchema ?? { type: "object" },
    ...(Predicate.isObject(outputSchema) ? { outputSchema } : {})
  }
}

const page = (session: Session, cursor: string | undefined) =>
  request(session, "list", session.listTimeoutMs, (signal, timeout) =>
    session.client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, ListResult, {
      signal,
      timeout
    })
  )

// Every page of the list, each bounded by the list timeout; a repeated cursor ends it.
const fetchTools = (session: Session) =>
  Effect.gen(function* () {
    const tools: Array<Core.ToolDefinition> = []
    const names = new Set<string>()
    const cursors = new Set<string>()
    let cursor: string | undefined
    for (let index = 0; index < maxPages; index++) {
      const result = yield* page(session, cursor)
      for (const entry of result.tools) {
        const tool = toDefinition(entry)
        if (typeof tool === "string") yield* Effect.logWarning(`${session.who} listed ${tool}; it is left out`)
        else if (!names.has(tool.name)) {
          names.add(tool.name)
          tools.push(tool)
        }
      }
      cursor = result.nextCursor
      if (cursor === undefined || cursors.has(cursor)) break
      cursors.add(cursor)
    }
    return tools as ReadonlyArray<Core.ToolDefinition>
  })

/** The server's tools: the cached list, or (first, after a change, or with `refresh`) a fresh one. */
export const listTools =
  (session: Session): Core.Connection["listTools"] =>
  (listOptions) =>
    Effect.suspend(() => {
      const state = session.state
      if (listOptions?.refresh !== true && state.tools !== undefined) return Effect.succeed(state.tools)
      const generation = state.generation
      return Effect.tap(fetchTools(session), (tools) =>
        Effect.sync(() => {
          if (generation === state.generation) state.tools = tools
        })
      )
    })

/** Calls a tool, bounded by `timeout` (none when not given). */
export const callTool =
  (session: Session): Core.Connection["callTool"] =>
  (name, args, callOptions) =>
    Effect.map(
      request(session, "call", toMillis(callOptions.timeout, 0), (signal, timeout) =>
        session.client.request(
          // The SDK's request type wants a mutable record; the arguments are not changed.
          { method: "tools/call", params: { name, arguments: args as Record<string, unknown> } },
          CallResult,
          { signal, timeout, resetTimeoutOnProgress: false }
        )
      ),
      (result): Core.CallToolResult => ({
        content: result.content,
        ...(Predicate.isObject(result.structuredContent) ? { structuredContent: result.structuredContent } : {}),
        ...(result.isError === true ? { isError: true } : {})
      })
    )
