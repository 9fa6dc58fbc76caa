/**
 * The cost of an mcpTool action: 1,000 sequential calls of server-everything's
 * `echo` over stdio through `agent.executeAction` (the whole pipeline, the
 * executor and the SDK layer) next to the raw SDK `client.callTool` on the
 * same kind of connection, in this run. Also prints the connect time of each.
 * Prints figures; asserts nothing. Target (issue 5): median ≤ 1.10× the raw
 * SDK call.
 *
 * A second pair runs the same calls against the SDK's McpServer over its
 * InMemoryTransport (no process, no pipe): there the difference is Rolecraft's
 * own CPU cost per call (pipeline, executor, layer), apart from I/O.
 *
 * Run: node bench/mcp.ts
 */
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Action, Agent, McpClient, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { InMemoryMcp } from "@rolecraft/testing"
import { Effect } from "effect"
import { z } from "zod/v4"
import { type Figures, format } from "./measure.ts"

const entry = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url)
)
const server = { command: process.execPath, args: [entry, "stdio"] }

const calls = 1_000
const rounds = 5
const warmup = 200

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

const figures = (name: string, samples: ReadonlyArray<number>): Figures => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { name, medianUs: quantile(sorted, 0.5), p95Us: quantile(sorted, 0.95), samples: sorted.length }
}

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = process.hrtime.bigint()
    yield* effect
    return Number(process.hrtime.bigint() - start) / 1000
  })

const program = Effect.gen(function* () {
  // Raw SDK: one Client over one StdioClientTransport.
  const rawConnect = yield* timed(
    Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new Client({ name: "bench", version: "0.0.0" })
        await client.connect(new StdioClientTransport({ ...server, stderr: "pipe" }))
        rawClient = client
      }),
      () => Effect.promise(() => rawClient?.close() ?? Promise.resolve())
    )
  )
  const raw = rawClient
  if (raw === undefined) return yield* Effect.die("the raw client did not connect")

  // Rolecraft: the service's own connect, then an agent whose first call connects lazily.
  const service = yield* McpClient.McpClient
  const serviceConnect = yield* timed(service.connect(server, { name: "bench" }))
  const role = Role.make({
    identity: { name: "bench", goal: "Measure", domain: "bench" },
    actions: { everything: Action.mcpTool({ description: "server-everything", server, timeout: "10 seconds" }) }
  })
  const agent = yield* Agent.make({ id: "bench", roles: [role] })
  const params = { tool: "echo", arguments: { message: "hello" } }
  const firstCall = yield* timed(agent.executeAction("everything", params))

  const rawCall = Effect.promise(() => raw.callTool({ name: "echo", arguments: { message: "hello" } }))
  const agentCall = agent.executeAction("everything", params)
  for (let i = 0; i < warmup; i++) {
    yield* rawCall
    yield* agentCall
  }
  const rawSamples: Array<number> = []
  const agentSamples: Array<number> = []
  // Interleaved rounds, so drift (GC, the servers' own warm-up) hits both sides alike.
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < calls / rounds; i++) rawSamples.push(yield* timed(rawCall))
    for (let i = 0; i < calls / rounds; i++) agentSamples.push(yield* timed(agentCall))
  }

  const rawFigures = figures("raw SDK client.callTool (echo)", rawSamples)
  const agentFigures = figures("agent.executeAction (mcpTool echo)", agentSamples)
  console.log(`connect (spawn + initialize), raw SDK:              ${(rawConnect / 1000).toFixed(1)} ms`)
  console.log(`connect (spawn + initialize), McpClientSdk.connect: ${(serviceConnect / 1000).toFixed(1)} ms`)
  console.log(`first executeAction (connect + tools/list + call):  ${(firstCall / 1000).toFixed(1)} ms\n`)
  console.log(`${calls} sequential calls each:`)
  console.log(format([rawFigures, agentFigures]))
  const ratio = agentFigures.medianUs / rawFigures.medianUs
  console.log(
    `\nmedian ratio: ${ratio.toFixed(3)}× (target ≤ 1.10×); overhead ${(agentFigures.medianUs - rawFigures.medianUs).toFixed(1)} µs per call`
  )
}).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))

let rawClient: Client | undefined

const echoServer = () => {
  const server = new McpServer({ name: "echo", version: "1.0.0" })
  server.registerTool("echo", { inputSchema: { message: z.string() } }, ({ message }) => ({
    content: [{ type: "text", text: `Echo: ${message}` }]
  }))
  return server
}

const inMemory = Effect.gen(function* () {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: "bench", version: "0.0.0" })
  yield* Effect.promise(() => echoServer().connect(serverSide))
  yield* Effect.promise(() => client.connect(clientSide))
  const role = Role.make({
    identity: { name: "bench", goal: "Measure", domain: "bench" },
    actions: { echo: Action.mcpTool({ description: "echo", server: "memory://echo", timeout: "10 seconds" }) }
  })
  const agent = yield* Agent.make({ id: "bench-memory", roles: [role] })
  const rawCall = Effect.promise(() => client.callTool({ name: "echo", arguments: { message: "hello" } }))
  const agentCall = agent.executeAction("echo", { tool: "echo", arguments: { message: "hello" } })
  for (let i = 0; i < 2_000; i++) {
    yield* rawCall
    yield* agentCall
  }
  const rawSamples: Array<number> = []
  const agentSamples: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < calls / rounds; i++) rawSamples.push(yield* timed(rawCall))
    for (let i = 0; i < calls / rounds; i++) agentSamples.push(yield* timed(agentCall))
  }
  const raw = figures("raw SDK client.callTool (in memory)", rawSamples)
  const ours = figures("agent.executeAction (in memory)", agentSamples)
  console.log(`\nThe same over the SDK's InMemoryTransport (no process): Rolecraft's own CPU cost`)
  console.log(format([raw, ours]))
  console.log(`overhead ${(ours.medianUs - raw.medianUs).toFixed(1)} µs per call`)
  yield* Effect.promise(() => client.close())
}).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://echo": echoServer })))

Effect.runPromise(Effect.andThen(program, inMemory))
