/**
 * One MCP server for one client session: the SDK's low-level `Server` (it
 * takes raw JSON Schemas) declaring tools, resources (with subscriptions),
 * prompts, completions and logging, each method answered from the served
 * agent and its catalog. The session's log level and resource
 * subscriptions live here.
 */
import { randomUUID } from "node:crypto"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import type * as Effect from "effect/Effect"
import type * as EffectSchema from "effect/Schema"
import * as Call from "./call.ts"
import * as Catalog from "./catalog.ts"
import type * as Log from "./log.ts"
import * as Schema from "./schema.ts"

/** A session's server and what it keeps. */
export interface Session {
  readonly server: Server
  /** Who this session is to the approval store: the scope of its calls (random, not the transport's session id). */
  readonly owner: string
  readonly logs: Log.Level
  readonly subscriptions: Set<string>
}

/** What every session serves. */
export interface Served extends Call.Serving {
  readonly info: { readonly name: string; readonly version: string }
  readonly catalog: Catalog.Catalog
  readonly runPlain: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  /** The Effect schema of each action's parameters, by action name (an agent's own MCP servers have none). */
  readonly sources: ReadonlyMap<string, EffectSchema.Top>
}

/** A new server for one session (or, over stdio, the one client). */
export const make = (served: Served): Session => {
  const server = new Server(served.info, {
    capabilities: {
      tools: {},
      resources: { subscribe: true },
      prompts: {},
      completions: {},
      logging: {}
    }
  })
  const session: Session = {
    server,
    owner: `mcp-session-${randomUUID()}`,
    logs: { current: undefined },
    subscriptions: new Set()
  }
  const tools = [...served.tools.values()].map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: Schema.served(served.sources.get(tool.action), tool.parameters, tool.approval)
  }))
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }) as never)
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    Call.call(served, server, session.logs, request, extra, session.owner)
  )
  Call.own(served, session.owner, server)
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    session.logs.current = request.params.level
    return {}
  })
  const { catalog, runPlain } = served
  server.setRequestHandler(ListResourcesRequestSchema, () => runPlain(Catalog.listResources(catalog)))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => Catalog.listTemplates(catalog))
  server.setRequestHandler(ReadResourceRequestSchema, (request) => runPlain(Catalog.read(catalog, request.params.uri)))
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    session.subscriptions.add(request.params.uri)
    return {}
  })
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    session.subscriptions.delete(request.params.uri)
    return {}
  })
  server.setRequestHandler(ListPromptsRequestSchema, () => Catalog.listPrompts(catalog))
  server.setRequestHandler(GetPromptRequestSchema, (request) =>
    runPlain(Catalog.getPrompt(catalog, request.params.name, request.params.arguments))
  )
  server.setRequestHandler(CompleteRequestSchema, (request) => Catalog.complete(catalog, request.params))
  return session
}
