/**
 * The Rolecraft tour: one agent doing real work with every kind of action.
 *
 * It starts its own hotel and weather API on 127.0.0.1, spawns the published
 * MCP servers server-filesystem (on a temporary folder it fills) and
 * server-everything over stdio, builds two roles from capabilities and their
 * own actions, and runs, printing each step with its time: a local action; a
 * webService GET with a placeholder, a GET with a query and a POST with a JSON
 * body; an llm action; MCP tools called directly; an approval-guarded booking
 * refused, approved, run and refused on replay; a call that fails over to its
 * fallback; `ActionRequest`s whose failures come back in the `ActionResponse`;
 * and a chat turn in which the model calls tools of several kinds.
 *
 * The model is a real OpenAI-compatible endpoint when `OPENAI_API_KEY` is set
 * (`OPENAI_BASE_URL`, `OPENAI_MODEL` optional), else the offline scripted
 * model of `model.ts`; the transcript says which one answered. Nothing else
 * is simulated.
 *
 * Exit code 0 only when every step did what it must.
 *
 * Run: npm start   (or: node examples/tour/main.ts)
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { type Action, type ActionRequest, Agent, Capability, McpClient, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { ConfigProvider, Effect, Exit, Layer, Redacted, Ref } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Chat from "./chat.ts"
import * as Model from "./model.ts"
import { archivist, TravelAgent } from "./roles.ts"
import * as Service from "./service.ts"
import * as Transcript from "./transcript.ts"

// The API's bearer token: TOUR_API_KEY when set, else a fresh one for this run.
const tourKey = Redacted.make(process.env.TOUR_API_KEY?.trim() || `tour-${randomBytes(12).toString("hex")}`)
const environment = { ...process.env, TOUR_API_KEY: Redacted.value(tourKey) }
const openAiKey = process.env.OPENAI_API_KEY?.trim() ? [Redacted.make(process.env.OPENAI_API_KEY.trim())] : []

const transcript = Transcript.make({ secrets: () => [tourKey, ...openAiKey] })

/** A temporary folder holding the trip's notes, removed when the tour ends. */
const notesFolder = Effect.acquireRelease(
  Effect.sync(() => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), "rolecraft-tour-")))
    writeFileSync(
      join(folder, "trip-notes.md"),
      "# Lisbon, May 2026\n\n- Ask for a room away from the tram line.\n- Dinner at Zé da Mouraria on the 13th.\n"
    )
    writeFileSync(join(folder, "packing-list.md"), "- passport\n- charger\n- rain jacket\n")
    return folder
  }),
  (folder) => Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
)

/** Lists a server's tools over a short-lived connection of its own (the agent opens its own on first use). */
const listTools = (name: string, server: Action.McpServer) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* McpClient.McpClient
      const connection = yield* client.connect(server, { name })
      const tools = yield* connection.listTools()
      return {
        server: `${connection.server.name} ${connection.server.version}`,
        tools: tools.map((tool) => tool.name)
      }
    })
  ).pipe(Effect.catch((error) => Effect.succeed({ server: `could not list tools: ${error.message}`, tools: [] })))

/** A role's actions, each with its type and where it came from. */
const describeRole = (role: Role.Any): ReadonlyArray<string> =>
  Role.actions(role).map((entry) => {
    if (entry.source._tag === "Capability") return `${entry.name} (${entry.action._tag}, ${entry.source.capability})`
    const overridden = role.capabilities.find((capability) => Capability.flatten(capability).has(entry.name))
    return `${entry.name} (${entry.action._tag}, own${overridden === undefined ? "" : `, overrides ${overridden.name}`})`
  })

const failedWith =
  (category: string, detail?: string) =>
  (outcome: Transcript.Outcome): string | undefined => {
    if (outcome.ok) return `expected ${category}, but the call succeeded`
    if (outcome.category !== category) return `expected ${category}, got ${outcome.category}`
    if (detail !== undefined && outcome.detail !== detail)
      return `expected ${category} (${detail}), got (${outcome.detail})`
    return undefined
  }

const succeeded =
  (check: (value: any) => string | undefined = () => undefined) =>
  (outcome: Transcript.Outcome): string | undefined =>
    outcome.ok ? check(outcome.value) : `expected success, got ${outcome.category}: ${outcome.message}`

const program = Effect.gen(function* () {
  const { line } = transcript
  // One setup fact: a name, then text (or items) wrapped under it.
  const fact = (name: string, text: string | ReadonlyArray<string>) =>
    Effect.forEach(
      typeof text === "string" ? Transcript.wrap(text, 108, 6) : Transcript.wrapItems(text, 108),
      (part, i) => line(`  ${(i === 0 ? name : "").padEnd(8)} ${part}`),
      { discard: true }
    )
  yield* line("Rolecraft tour: one agent, every kind of action, on real input")
  yield* line()

  const model = yield* Model.choose
  yield* fact("model", model.description)
  const api = yield* Service.make(Redacted.value(tourKey))
  yield* fact("API", `hotel/weather API at ${api.baseURL} (node:http, started by the tour)`)
  yield* fact(
    "secret",
    `bearer token ${process.env.TOUR_API_KEY?.trim() ? "from TOUR_API_KEY" : "TOUR_API_KEY, generated for this run"}; ` +
      "printed as [REDACTED] wherever it would appear"
  )
  const folder = yield* notesFolder
  yield* fact("folder", `${folder} (trip-notes.md, packing-list.md), removed at the end`)

  const Archivist = archivist(folder)
  const { files, toolbox } = Archivist.actions
  const [filesystemTools, everythingTools] = yield* Effect.all(
    [listTools("files", files.server), listTools("toolbox", toolbox.server)],
    { concurrency: 2 }
  )
  const listing = (what: string, { server, tools }: { server: string; tools: ReadonlyArray<string> }) => {
    const [first = "", ...rest] = tools
    return [`${what}: ${server}, ${tools.length} tools: ${first}`, ...rest]
  }
  yield* fact("MCP", listing("server-filesystem over stdio, on the folder", filesystemTools))
  yield* fact("", listing("server-everything over stdio", everythingTools))
  for (const [i, role] of [TravelAgent, Archivist].entries()) {
    const [first = "", ...rest] = describeRole(role)
    yield* fact(i === 0 ? "roles" : "", [`${role.identity.name}: ${first}`, ...rest])
  }

  // The agent's own model: its llm action and chat turns use it, so no call of it needs a LanguageModel.
  const agent = yield* Agent.make({ id: "tour", roles: [TravelAgent, Archivist], model: model.layer })
  // The capabilities' endpoints are paths: this client resolves them against the API's base URL.
  const http = (yield* HttpClient.HttpClient).pipe(HttpClient.mapRequest(HttpClientRequest.prependUrl(api.baseURL)))
  const call = (request: ActionRequest.ActionRequest) =>
    agent.execute(request).pipe(
      Effect.provideService(HttpClient.HttpClient, http),
      Effect.map(Transcript.fromResponse),
      Effect.catch((error) =>
        Effect.succeed<Transcript.Outcome>({ ok: false, category: "RETRIEVAL", message: error.message })
      )
    )
  const step = transcript.step

  yield* transcript.heading("Actions, one of each kind")
  const stay = { checkIn: "2026-05-12", checkOut: "2026-05-15" }
  yield* step({
    title: "A local action runs in the agent's process",
    label: "local action",
    action: "nights",
    type: "local",
    args: stay,
    run: call({ action: "nights", params: stay }),
    must: succeeded((nights) => (nights === 3 ? undefined : `expected 3 nights, got ${nights}`))
  })
  yield* step({
    title: "webService GET with a {city} placeholder and a bearer token",
    label: "GET, placeholder",
    action: "forecast",
    type: "webService",
    about: "GET /v1/forecast/{city}, Authorization: Bearer $TOUR_API_KEY",
    args: { city: "Lisbon" },
    run: call({ action: "forecast", params: { city: "Lisbon" } }),
    must: succeeded((body) => (body?.days?.length === 3 ? undefined : "expected a three-day forecast"))
  })
  yield* step({
    title: "webService GET with a query string",
    label: "GET, query",
    action: "searchHotels",
    type: "webService",
    about: "GET /v1/hotels?city=…&maxPrice=…",
    args: { city: "Lisbon", maxPrice: 150 },
    run: call({ action: "searchHotels", params: { city: "Lisbon", maxPrice: 150 } }),
    must: succeeded((body) => (body?.hotels?.length === 2 ? undefined : "expected two hotels under 150 EUR"))
  })
  yield* step({
    title: "webService POST with a JSON body",
    label: "POST, JSON body",
    action: "quote",
    type: "webService",
    about: "POST /v1/quotes, content-type: application/json",
    args: { hotelId: "lis-belem", nights: 3, guests: 2 },
    run: call({ action: "quote", params: { hotelId: "lis-belem", nights: 3, guests: 2 } }),
    must: succeeded((body) => (body?.total === 360 ? undefined : `expected a total of 360 EUR, got ${body?.total}`))
  })
  yield* step({
    title: `An llm action answered by the ${model.offline ? "offline scripted" : "real"} model`,
    label: "llm action",
    action: "packingTip",
    type: "llm",
    args: { destination: "Lisbon", month: "May" },
    run: call({ action: "packingTip", params: { destination: "Lisbon", month: "May" } }),
    must: (outcome) =>
      succeeded((text) => (typeof text === "string" && text.trim() !== "" ? undefined : "expected some text"))(
        outcome
      ) ?? (outcome.ok && outcome.usage === undefined ? "expected the model's token usage to be counted" : undefined)
  })
  const notes = join(folder, "trip-notes.md")
  yield* step({
    title: "An MCP tool called directly: server-filesystem reads a file",
    label: "MCP tool (filesystem)",
    action: "files",
    type: "mcpTool",
    about: "server-filesystem over stdio, spawned on the first call",
    args: { tool: "read_text_file", arguments: { path: notes } },
    run: call({ action: "files", params: { tool: "read_text_file", arguments: { path: notes } } }),
    must: succeeded((result) =>
      String(result?.content).includes("away from the tram line") ? undefined : "expected the notes' text"
    )
  })
  yield* step({
    title: "An MCP tool called directly: server-everything adds (a string converted to a number)",
    label: "MCP tool (everything)",
    action: "toolbox",
    type: "mcpTool",
    about: "server-everything over stdio, spawned on the first call",
    args: { tool: "get-sum", arguments: { a: "120.5", b: 79.5 } },
    run: call({ action: "toolbox", params: { tool: "get-sum", arguments: { a: "120.5", b: 79.5 } } }),
    must: succeeded((text) => (String(text).includes("200") ? undefined : "expected the sum 200"))
  })

  yield* transcript.heading("Approvals: a booking needs an approved token, bound to its arguments, used once")
  yield* transcript.line(
    "(A chat turn paused for approval that must survive restarts and move between processes: @rolecraft/durable, docs/durable.md)"
  )
  const booking = { hotelId: "lis-belem", checkIn: "2026-05-12", nights: 3, guest: "Ada Lovelace" }
  const pending = yield* Ref.make<string | undefined>(undefined)
  yield* step({
    title: "Without a token: refused, and a pending token is requested",
    label: "approval: refused",
    action: "book",
    type: "webService",
    about: "POST /v1/bookings, requires approval",
    args: booking,
    run: agent.execute({ action: "book", params: booking }).pipe(
      Effect.provideService(HttpClient.HttpClient, http),
      Effect.tap((response) =>
        response.success || response.error._tag !== "ApprovalRequired"
          ? Effect.void
          : Ref.set(pending, response.error.pendingTokenId)
      ),
      Effect.map(Transcript.fromResponse),
      Effect.orDie
    ),
    must: failedWith("APPROVAL", "missing")
  })
  const token = (yield* Ref.get(pending)) ?? "no-pending-token"
  yield* step({
    title: "An approver (alice) approves the pending token",
    label: "approval: approved",
    action: "agent.approvals.approve",
    type: "approval",
    args: { approvalToken: token, approver: "alice" },
    run: agent.approvals.approve(token, "alice").pipe(
      Effect.map((approved): Transcript.Outcome => ({ ok: true, value: `${approved.status} by ${approved.approver}` })),
      Effect.catch((error) =>
        Effect.succeed<Transcript.Outcome>({ ok: false, category: "APPROVAL", message: error.message })
      )
    ),
    must: succeeded((status) => (String(status).startsWith("approved") ? undefined : "expected the token approved"))
  })
  yield* step({
    title: "With the approved token: the booking runs",
    label: "approval: run",
    action: "book",
    type: "webService",
    args: { ...booking, approvalToken: token },
    run: call({ action: "book", params: booking, approvalToken: token }),
    must: succeeded((body) => (typeof body?.bookingId === "string" ? undefined : "expected a booking id"))
  })
  yield* step({
    title: "The same token again (a replay): refused, nothing booked twice",
    label: "approval: replay",
    action: "book",
    type: "webService",
    args: { ...booking, approvalToken: token },
    run: call({ action: "book", params: booking, approvalToken: token }).pipe(
      Effect.flatMap((outcome) =>
        Effect.map(api.traffic, (traffic) => ({
          ...outcome,
          notes: [`the API recorded ${traffic.bookings.length} booking${traffic.bookings.length === 1 ? "" : "s"}`],
          facts: { bookings: traffic.bookings.length }
        }))
      )
    ),
    must: (outcome) =>
      failedWith("APPROVAL", "used")(outcome) ??
      (outcome.facts?.bookings === 1 ? undefined : `expected 1 booking on the API, saw ${outcome.facts?.bookings}`)
  })

  yield* transcript.heading("Failures: resilience, fallback, and errors reported in the response")
  yield* step({
    title: "The live radar answers 503: retried once, then the fallback answers",
    label: "fallback",
    action: "liveWeather",
    type: "webService",
    about: "GET /v1/radar/{city}; retry 1 after 100 ms; fallback",
    args: { city: "Lisbon" },
    run: call({ action: "liveWeather", params: { city: "Lisbon" } }).pipe(
      Effect.flatMap((outcome) =>
        Effect.map(api.traffic, (traffic) => ({
          ...outcome,
          notes: [`the radar route was called ${traffic.hits["GET /v1/radar"] ?? 0} times (1 attempt + 1 retry)`],
          facts: { radarCalls: traffic.hits["GET /v1/radar"] ?? 0 }
        }))
      )
    ),
    must: (outcome) =>
      succeeded((conditions) =>
        conditions?.source === "fallback" && conditions?.because === "TRANSIENT"
          ? undefined
          : "expected the fallback's answer after a TRANSIENT failure"
      )(outcome) ??
      (outcome.facts?.radarCalls === 2 ? undefined : `expected 2 calls to the radar, saw ${outcome.facts?.radarCalls}`)
  })
  yield* step({
    title: "An ActionRequest for an unknown city: the 404 comes back in the ActionResponse",
    label: "response: 404",
    action: "forecast",
    type: "webService",
    args: { city: "Atlantis" },
    run: call({ action: "forecast", params: { city: "Atlantis" }, correlationId: "tour-atlantis" }),
    must: (outcome) =>
      failedWith("EXECUTION", "404")(outcome) ??
      (!outcome.ok && outcome.message.includes("[REDACTED]")
        ? undefined
        : "expected the echoed bearer token to be redacted in the error")
  })
  yield* step({
    title: "An ActionRequest with an argument that is not a number: VALIDATION, nothing sent",
    label: "response: invalid",
    action: "quote",
    type: "webService",
    args: { hotelId: "lis-belem", nights: "three", guests: 2 },
    run: call({ action: "quote", params: { hotelId: "lis-belem", nights: "three", guests: 2 } }),
    must: failedWith("VALIDATION")
  })

  yield* transcript.heading("A chat turn: the model picks the tools, the agent runs each through its pipeline")
  const question =
    "I'm travelling to Lisbon from 2026-05-12 to 2026-05-15. How many nights is that, which hotels cost at most " +
    `150 EUR a night, and what do my notes in ${notes} say?`
  yield* step({
    title: model.offline
      ? "The scripted model calls a local action, a webService action and an MCP tool in one step, then answers"
      : "The real model chooses its tools; every call it makes is answered, whatever it says",
    label: "chat turn",
    action: "agent.chat",
    type: "chat",
    args: { input: question, maxSteps: 6 },
    run: Chat.turn(agent, question, { maxSteps: 6 }).pipe(Effect.provideService(HttpClient.HttpClient, http)),
    must: model.offline ? Chat.mustOffline : Chat.mustAlways
  })

  yield* transcript.heading("Streaming: a chat turn's text printed as it arrives")
  const streamQuestion = "How many nights is it from 2026-05-12 to 2026-05-15?"
  yield* step({
    title: "agent.chatStream: each text delta printed as it arrives, each tool call as it starts and is answered",
    label: "streamed turn",
    action: "agent.chatStream",
    type: "chat",
    args: { input: streamQuestion, maxSteps: 4 },
    live: true,
    run: Chat.streamed(agent, streamQuestion, { maxSteps: 4 }).pipe(Effect.provideService(HttpClient.HttpClient, http)),
    must: model.offline ? Chat.mustStreamOffline : Chat.mustStreamAlways
  })

  yield* transcript.heading("Structured output: the answer decoded with an Effect Schema")
  const summaryQuestion = "Summarise my stay in Lisbon from 2026-05-12 to 2026-05-15 as JSON."
  yield* step({
    title: "agent.chat with { output }: the model is asked for JSON matching the schema, the answer comes back typed",
    label: "structured output",
    action: "agent.chat",
    type: "chat",
    args: { input: summaryQuestion, output: "{ city: string, nights: int, cheapestHotel?: string }" },
    run: Chat.structured(agent, summaryQuestion).pipe(Effect.provideService(HttpClient.HttpClient, http)),
    must: model.offline ? Chat.mustStructuredOffline : Chat.mustStructuredAlways
  })

  const traffic = yield* api.traffic
  return yield* transcript.summary([
    `Model: ${model.offline ? "offline scripted model (no OPENAI_API_KEY)" : model.description}.`,
    `The API served ${Object.values(traffic.hits).reduce((sum, n) => sum + n, 0)} requests; ${traffic.bookings.length} booking made.`
  ])
}).pipe(Effect.scoped)

NodeRuntime.runMain(
  program.pipe(
    Effect.provide(
      Layer.mergeAll(
        McpClientSdk.layer(),
        NodeHttpClient.layerUndici,
        ConfigProvider.layer(ConfigProvider.fromEnv({ env: environment }))
      )
    )
  ),
  {
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? (exit.value ? 0 : 1) : 1)
  }
)
