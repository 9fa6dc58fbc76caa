/**
 * Secrets as one boundary, as a property: three random secrets — a webService's bearer token
 * (`authTokenEnv`), an mcpTool's credential (`apiKeyEnv`) and the model provider's key (declared by the
 * model) — are embedded, inside random text, in random places: a tool's result, an action's failure, a
 * result mapper's, a fallback's and a hook's failure, a service's echo of its token (answered or refused),
 * an MCP server's echo of its credential, the model's tool names and arguments (valid and not JSON), its
 * final reply (decoded against an output schema), an llm action's reply (decoded), refusal and model-call
 * failure. Whatever the places and wherever the secret falls against a cut, none of the three is visible,
 * in any encoded form, at any exit: errors, `agent.events`, spans exported through @effect/opentelemetry
 * (attributes, status, exception events), log lines, metric labels, and the tool messages of the returned
 * history — with content tracing on and off. Each case runs, in a chat turn and as direct calls, what its
 * places need.
 *
 * Two more secrets join the draw: an MCP client's obtained secret (an OAuth token) that the agent learns at a
 * random moment — before the case, or the moment the text quoting it is made, during the call that lets it
 * out — and the credential of a nested agent (a chain of one to three agents used as actions), which the
 * deepest agent's model may quote (place `nested`); and a served call's log line (place `servedLog`, an
 * `Mcp.serve` client reading its `notifications/message`).
 *
 * 1,000 cases here; `node scripts/fault-properties.ts` runs 100,000 (SECRETS_RUNS).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  LoggingMessageNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { describe, it } from "@effect/vitest"
import { Action, ActionError, Agent, Compose, LanguageModel, McpClient, Role } from "@rolecraft/core"
import { Mcp } from "@rolecraft/mcp"
import { HttpRoutes, InMemoryMcp } from "@rolecraft/testing"
import { ConfigProvider, Effect, Layer, Logger, Redacted, Schema } from "effect"
import * as fc from "fast-check"
import * as Exits from "../support/exits.ts"

const numRuns = Number(process.env.SECRETS_RUNS ?? 1000)

/** Where a secret is embedded: which of the three (for the places that quote one), inside what text. */
interface Placed {
  readonly secret: 0 | 1 | 2 | 3 | 4
  readonly before: string
  readonly after: string
}

/**
 * Each place, with the tool call of the chat turn that meets it and the direct call that does (either may
 * be absent; `tool` `"?"` is a name never offered, `"note!"` a call of `note` whose arguments are not JSON).
 */
const places = {
  result: { tool: "note", direct: undefined },
  failure: { tool: "broken", direct: "broken" },
  mapper: { tool: "mapped", direct: "mapped" },
  fallback: { tool: "fallen", direct: "fallen" },
  beforeHook: { tool: "hooked", direct: "hooked" },
  afterHook: { tool: "note", direct: "note" },
  webEcho: { tool: "web", direct: "web" },
  webRefusal: { tool: "webBad", direct: "webBad" },
  mcpEcho: { tool: "mcp", direct: "mcp" },
  toolName: { tool: "?", direct: undefined },
  arguments: { tool: "note", direct: undefined },
  badArguments: { tool: "note!", direct: undefined },
  reply: { tool: undefined, direct: undefined },
  llmReply: { tool: undefined, direct: "plan" },
  refusal: { tool: undefined, direct: "refuse" },
  modelFailure: { tool: undefined, direct: "flaky" },
  nested: { tool: "ask", direct: undefined },
  servedLog: { tool: undefined, direct: undefined }
} as const

type Place = keyof typeof places

interface Case {
  readonly secrets: readonly [web: string, mcp: string, model: string, learned: string, inner: string]
  readonly traceContent: boolean
  /** When the MCP client obtains the learned secret: before the case, or as the text quoting it is made. */
  readonly learnedAt: "before" | "during"
  /** How many agents deep the nested chain goes. */
  readonly depth: 1 | 2 | 3
  readonly placed: Partial<Record<Place, Placed>>
}

// A bearer token must fit in a header: printable ASCII. The others may be any text.
const printable = fc.constantFrom(...Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)))
const anyText = fc.string({ unit: "grapheme", minLength: 8, maxLength: 40 })

// Up to 260 characters before a secret: a preview cut at 200 (or 500) characters may fall inside it.
const placed: fc.Arbitrary<Placed> = fc.record({
  secret: fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const, 4 as const),
  before: fc.string({ maxLength: 260 }),
  after: fc.string({ maxLength: 40 })
})

const cases: fc.Arbitrary<Case> = fc.record({
  secrets: fc.tuple(
    fc.string({ unit: printable, minLength: 8, maxLength: 40 }).map((s) => `wt-${s}`),
    anyText.map((s) => `mk-${s}`),
    anyText.map((s) => `sk-${s}`),
    anyText.map((s) => `ot-${s}`),
    fc.string({ unit: printable, minLength: 8, maxLength: 40 }).map((s) => `in-${s}`)
  ),
  traceContent: fc.boolean(),
  learnedAt: fc.constantFrom("before" as const, "during" as const),
  depth: fc.constantFrom(1 as const, 2 as const, 3 as const),
  // One to four places a case.
  placed: fc
    .uniqueArray(fc.tuple(fc.constantFrom(...(Object.keys(places) as Array<Place>)), placed), {
      minLength: 1,
      maxLength: 4,
      selector: ([place]) => place
    })
    .map((drawn) => Object.fromEntries(drawn) as Partial<Record<Place, Placed>>)
})

const Trip = Schema.Struct({ city: Schema.String, nights: Schema.Int })

// The case being run: the roles, routes and servers are made once and read it (cases run one at a time), so
// a case pays for its calls, not for compiling the same schemas again.
let current: Case = {
  secrets: ["wt-unset-000", "mk-unset-000", "sk-unset-000", "ot-unset-000", "in-unset-000"],
  traceContent: false,
  learnedAt: "before",
  depth: 1,
  placed: {}
}

// What the MCP client has obtained by itself in this case (an OAuth token, the learned secret).
const obtained: Array<Redacted.Redacted<string>> = []
const learn = () => {
  if (obtained.length === 0) obtained.push(Redacted.make(current.secrets[3]))
}

/** The text of a place, its secret inside (`plain` when the place was not drawn). */
const quote = (place: Place, plain = "plain"): string => {
  const where = current.placed[place]
  if (where === undefined) return plain
  // The learned secret is obtained by the client as the text holding it is made: during the call.
  if (where.secret === 3) learn()
  return `${where.before}${current.secrets[where.secret]}${where.after}`
}

/** An echo of a credential the agent sent, inside the place's text (`plain` when the place was not drawn). */
const echo = (place: Place, credential: string): string => {
  const where = current.placed[place]
  return where === undefined ? "plain" : `${where.before}${credential}${where.after}`
}

const failing = (message: string) => Effect.fail(new ActionError.ExecutionFailure({ action: "x", message }))
const local = (run: () => unknown) => Action.local({ description: "d", parameters: {}, run })
const web = (path: string) =>
  Action.webService({
    description: path,
    parameters: {},
    endpoint: `http://service.test${path}`,
    auth: "BEARER",
    authTokenEnv: "WEB_TOKEN"
  })

const actions = {
  note: local(() => ({ note: quote("result") })),
  broken: local(() => failing(quote("failure"))),
  mapped: web("/echo").pipe(
    Action.mapResult(() => {
      throw new Error(quote("mapper"))
    })
  ),
  fallen: local(() => failing("plain")).pipe(
    Action.fallback(() => {
      throw new Error(quote("fallback"))
    })
  ),
  hooked: local(() => "ok"),
  web: web("/echo"),
  webBad: web("/refuse"),
  plan: Action.llm({ description: "plan", parameters: {}, success: Trip }),
  refuse: Action.llm({ description: "refuse", parameters: {} }),
  flaky: Action.llm({ description: "flaky", parameters: {} })
}

const hooks: Role.Hooks = {
  before: (action, args) => {
    if (action === "hooked" && current.placed.beforeHook !== undefined) throw new Error(quote("beforeHook"))
    return args
  },
  after: (action) => {
    if (action === "note" && current.placed.afterHook !== undefined) return failing(quote("afterHook"))
    return undefined
  }
}

const identity = { name: "prop", goal: "leak nothing", domain: "tests" }
// With the MCP server only in the cases that need it: a chat turn lists an MCP server's tools at every turn.
const plainRole = Role.make({ identity, actions, hooks })
const mcpRole = Role.make({
  identity,
  actions: { ...actions, mcp: Action.mcpTool({ description: "m", server: "memory://echo", apiKeyEnv: "MCP_KEY" }) },
  hooks
})

/** The model: the chat's tool calls, then its answer; the llm actions' replies, refusal and failure. */
const modelOf = (c: Case) => {
  const usage = { inputTokens: 1, outputTokens: 1 }
  return LanguageModel.make(
    ({ request }) => {
      switch (request.action) {
        case "plan":
          return { text: JSON.stringify({ city: quote("llmReply"), nights: "n/a" }), usage }
        case "refuse":
          return { text: "", refusal: quote("refusal"), usage }
        case "flaky":
          throw new Error(`provider failed: ${quote("modelFailure")}`)
        default: {
          // A nested agent's turn: the next one down is asked, the deepest answers (quoting `nested`).
          const system = request.messages.find((message) => message.role === "system")?.content ?? ""
          const level = [1, 2, 3].find((k) => system.includes(`inner agent ${k}.`))
          if (level !== undefined) {
            const told = request.messages.filter((message) => message.role === "tool").at(-1)
            if (level === c.depth) return { text: quote("nested", "inner done"), usage }
            if (told !== undefined) return { text: told.content, usage }
            return { toolCalls: [{ id: `n${level}`, name: "ask", arguments: JSON.stringify({ input: "go" }) }], usage }
          }
          const answered = request.messages.some((message) => message.role === "tool")
          const second = request.messages.some((message) => message.role === "user" && message.content === "answer")
          if (answered || second) return { text: quote("reply", "done"), usage }
          const mcpTool = (request.tools ?? []).find((tool) => tool.name.includes("echo"))?.name ?? "mcp"
          const tools = [...new Set(drawn(c).map((place) => places[place].tool))]
          const calls = tools.flatMap((tool, i) => {
            const id = `c${i}`
            switch (tool) {
              case undefined:
                return []
              case "?":
                return [{ id, name: quote("toolName"), arguments: "{}" }]
              case "note!":
                return [{ id, name: "note", arguments: `{"memo": ${quote("badArguments")}` }]
              case "note":
                return [{ id, name: "note", arguments: JSON.stringify({ memo: quote("arguments") }) }]
              case "ask":
                return [{ id, name: "ask", arguments: JSON.stringify({ input: "go" }) }]
              default:
                return [{ id, name: tool === "mcp" ? mcpTool : tool, arguments: "{}" }]
            }
          })
          return calls.length === 0 ? { text: "done", usage } : { toolCalls: calls, usage }
        }
      }
    },
    { name: "property", secrets: [Redacted.make(c.secrets[2])] }
  )
}

const drawn = (c: Case): ReadonlyArray<Place> => Object.keys(c.placed) as Array<Place>

const routes = HttpRoutes.layer({
  "GET /echo": (request) => HttpRoutes.json({ echo: echo("webEcho", request.headers.authorization ?? "") }),
  "GET /refuse": (request) => HttpRoutes.text(echo("webRefusal", request.headers.authorization ?? ""), { status: 400 })
})

const echoServers = InMemoryMcp.layer({
  "memory://echo": ({ credential }) => {
    const server = new Server({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: "echo", inputSchema: { type: "object" as const } }]
    }))
    server.setRequestHandler(CallToolRequestSchema, () => ({
      content: [
        { type: "text" as const, text: echo("mcpEcho", credential === undefined ? "" : Redacted.value(credential)) }
      ]
    }))
    return server
  }
})

// The MCP client, with the secrets it obtained by itself (read when the agent redacts).
const mcp = Layer.effect(
  McpClient.McpClient,
  Effect.map(Effect.service(McpClient.McpClient), (client) =>
    McpClient.McpClient.of({ ...client, secrets: () => obtained })
  )
).pipe(Layer.provide(echoServers))

/** A chain of `depth` agents used as actions, the deepest with its own credential (`INNER_TOKEN`). */
const nestedRole = (depth: number) =>
  Effect.gen(function* () {
    let below: Agent.Agent<any, any> | undefined
    for (let k = depth; k >= 1; k--) {
      const actions: Record<string, Action.Any> = {
        innerWeb: Action.webService({
          description: "inner",
          parameters: {},
          endpoint: "http://service.test/echo",
          auth: "BEARER",
          authTokenEnv: "INNER_TOKEN"
        })
      }
      if (below !== undefined) actions.ask = Compose.agent(below, { description: "Ask the next agent" })
      below = yield* Agent.make({
        id: `inner-${k}`,
        roles: [Role.make({ identity: { name: `inner${k}`, goal: `inner agent ${k}.`, domain: "tests" }, actions })]
      })
    }
    return Role.make({
      identity: { name: "asker", goal: "ask", domain: "tests" },
      actions: { ask: Compose.agent(below as Agent.Agent<any, any>, { description: "Ask the nested agents" }) }
    })
  })

/** A served call's log line (the `servedLog` place), read by an MCP client as its `notifications/message`. */
const servedLog = (roles: ReadonlyArray<Role.Any>) =>
  Effect.gen(function* () {
    const talker = Role.make({
      identity: { name: "talker", goal: "talk", domain: "tests" },
      actions: {
        talk: local(() =>
          Effect.as(
            Effect.suspend(() => Effect.logInfo(quote("servedLog"))),
            "said"
          )
        )
      }
    })
    const agent = yield* Agent.make({ id: "served", roles: [...roles, talker] })
    const served = yield* Mcp.serve(agent, { transport: { http: { port: 0 } } })
    const client = new Client({ name: "log-reader", version: "1.0.0" })
    const seen: Array<string> = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      seen.push(JSON.stringify(notification.params))
    })
    yield* Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(served.url ?? ""))))
    yield* Effect.promise(() => client.setLoggingLevel("info"))
    yield* Effect.promise(() => client.callTool({ name: "talk", arguments: {} }))
    yield* Effect.promise(() => client.close())
    return seen.join("\n")
  })

/** One case: a chat turn meeting its places, a turn asked for an output, the direct calls; what leaked. */
const run = (c: Case): Effect.Effect<ReadonlyArray<string>, unknown> =>
  // The nested agents are typed loosely (`Agent<any, any>`): what they need is provided below.
  Effect.gen(function* () {
    current = c
    obtained.length = 0
    if (c.learnedAt === "before") learn()
    const exits = Exits.make()
    const places_ = drawn(c)
    // The MCP credential is a secret of the agent when it has the mcpTool action that reads it.
    const role = places_.some((place) => place === "mcpEcho" || c.placed[place]?.secret === 1) ? mcpRole : plainRole
    // The nested agents' credential is a secret of the agent when it uses them.
    const nested = places_.some((place) => place === "nested" || c.placed[place]?.secret === 4)
    let served = ""
    yield* Effect.gen(function* () {
      const roles = nested ? [role, yield* nestedRole(c.depth)] : [role]
      const agent = yield* Agent.make({ id: "property", roles, traceContent: c.traceContent })
      // The served action's own log line is the user's, to the user's loggers: only what the client reads counts.
      if (c.placed.servedLog !== undefined) {
        served = yield* servedLog(roles).pipe(Effect.scoped, Effect.provideService(Logger.CurrentLoggers, new Set()))
      }
      yield* exits.listen(agent.events)
      if (places_.some((place) => places[place].tool !== undefined)) {
        const turn = yield* agent.chat("go")
        if (turn._tag !== "Completed") throw new Error(`the turn ended ${turn._tag}`)
        exits.messages.push(Exits.toolMessages(turn.messages))
      }
      if (c.placed.reply !== undefined) exits.errors.push(yield* Effect.flip(agent.chat("answer", { output: Trip })))
      for (const name of new Set(places_.map((place) => places[place].direct))) {
        if (name === undefined) continue
        const response = yield* agent.execute({ action: name, params: name === "mcp" ? { tool: "echo" } : {} })
        if (!response.success) exits.errors.push(response.error)
      }
      for (let i = 0; i < 5; i++) yield* Effect.yieldNow
    }).pipe(
      Effect.scoped,
      Effect.provideService(LanguageModel.LanguageModel, modelOf(c)),
      Effect.provide(routes),
      Effect.provide(mcp),
      Effect.provide(exits.layer),
      Effect.provideService(
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnv({ env: { WEB_TOKEN: c.secrets[0], MCP_KEY: c.secrets[1], INNER_TOKEN: c.secrets[4] } })
      )
    )
    return Exits.leaks({ ...exits.texts(), "served logs": served }, c.secrets)
  }) as Effect.Effect<ReadonlyArray<string>, unknown>

describe("secrets as one boundary (property)", () => {
  it(
    `no secret the agent knows is visible at any exit, wherever it was put (${numRuns} cases)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(cases, async (c) => {
          const leaks = await Effect.runPromise(run(c))
          if (leaks.length > 0) throw new Error(leaks.join("\n"))
        }),
        { numRuns }
      )
      // About 40 ms a case here; a generous bound for the nightly size too.
    },
    Math.max(600_000, numRuns * 200)
  )
})
