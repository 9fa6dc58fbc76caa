/**
 * Mcp.serve: a role's actions as MCP tools, listed and called by the SDK's own
 * Client over streamable HTTP and over stdio, every call through the agent's
 * pipeline; failures as isError results with their category.
 */
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Action, Agent, Role } from "@rolecraft/core"
import { Mcp, McpClientSdk } from "@rolecraft/mcp"
import { Effect } from "effect"
import { alive } from "./fixtures/mcp.ts"
import { TravelRole } from "./fixtures/travel-role.ts"

type Result = {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly isError?: boolean
  readonly structuredContent?: unknown
}

/** An SDK client over a transport, closed with the scope. */
const sdkClient = (transport: StdioClientTransport | StreamableHTTPClientTransport) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "sdk-test-client", version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<Result>)

/** The JSON-RPC error a call is refused with (a protocol error, not a tool result). */
const refusalOf = (client: Client, name: string) =>
  Effect.promise(() =>
    client.callTool({ name, arguments: {} }).then(
      () => ({ code: 0, message: "answered with a result" }),
      (error: { code: number; message: string }) => ({ code: error.code, message: error.message })
    )
  )

const errorOf = (result: Result) =>
  JSON.parse(result.content[0]?.text ?? "{}").error as { category: string; message: string }

/** The checks both transports must pass. */
const exercise = (client: Client) =>
  Effect.gen(function* () {
    const { tools } = yield* Effect.promise(() => client.listTools())
    assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), [
      "availability",
      "book",
      "nights",
      "quote",
      "rates_v2_eu"
    ])
    const nights = tools.find((tool) => tool.name === "nights")
    assert.deepStrictEqual(nights?.inputSchema.required, ["checkIn", "checkOut"])
    assert.strictEqual(nights?.description, "Count the nights between two dates")

    const counted = yield* call(client, "nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" })
    assert.deepStrictEqual(counted.content, [{ type: "text", text: "3" }])
    const quoted = yield* call(client, "quote", { nights: "3", guests: 2 })
    assert.deepStrictEqual(quoted.structuredContent, { total: 540, currency: "EUR" })
    assert.strictEqual((yield* call(client, "rates_v2_eu", {})).content[0]?.text, "rates")

    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      ["book", { hotelId: "h-1" }, "APPROVAL"],
      ["availability", { hotelId: "h-1" }, "TRANSIENT"],
      ["nights", { checkIn: "2026-11-02" }, "VALIDATION"],
      ["quote", { nights: "3.5", guests: 2 }, "VALIDATION"]
    ]
    for (const [name, args, category] of cases) {
      const result = yield* call(client, name, args)
      assert.isTrue(result.isError, name)
      assert.strictEqual(errorOf(result).category, category, name)
    }
    assert.include(errorOf(yield* call(client, "nights", { checkIn: "2026-11-02" })).message, "checkOut: missing")
    // A name that was not offered (an excluded action, or none at all) is the protocol's "unknown tool" error.
    for (const name of ["audit", "nope"]) {
      const refused = yield* refusalOf(client, name)
      assert.strictEqual(refused.code, -32602, name)
      assert.include(refused.message, `Unknown tool: ${name}`)
    }
  })

describe("Mcp.serve", () => {
  it.live("serves a role over streamable HTTP on 127.0.0.1: listed and called by an SDK client", () =>
    Effect.gen(function* () {
      const served = yield* Mcp.serve(TravelRole, { transport: { http: {} } })
      assert.match(served.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const client = yield* sdkClient(new StreamableHTTPClientTransport(new URL(served.url ?? "")))
      assert.strictEqual(client.getServerVersion()?.name, "travel")
      yield* exercise(client)
    }).pipe(Effect.scoped)
  )

  it.live(
    "serves a role over stdio: a child process listed and called by an SDK client, gone once the client closes",
    () =>
      Effect.gen(function* () {
        const transport = new StdioClientTransport({
          command: process.execPath,
          // The sources, not dist/: a test never runs a stale build.
          args: ["--conditions=@rolecraft/source", fileURLToPath(new URL("./fixtures/serve-role.ts", import.meta.url))],
          stderr: "pipe"
        })
        const pid = yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* sdkClient(transport)
            yield* exercise(client)
            return transport.pid ?? 0
          })
        )
        assert.isAbove(pid, 0)
        assert.isFalse(alive(pid))
      })
  )

  it.live(
    "serving an agent keeps its authority; a Rolecraft agent can call the served tools as an mcpTool action, and not a denied one",
    () =>
      Effect.gen(function* () {
        const server = yield* Agent.make({ id: "travel-desk", roles: [TravelRole], authority: { deny: ["quote"] } })
        const served = yield* Mcp.serve(server, { transport: { http: {} } })
        const caller = yield* Agent.make({
          id: "assistant",
          roles: [
            Role.make({
              identity: { name: "assistant", goal: "Help", domain: "travel" },
              actions: { desk: Action.mcpTool({ description: "The travel desk", server: served.url ?? "" }) }
            })
          ]
        })
        assert.strictEqual(
          yield* caller.executeAction("desk", {
            tool: "nights",
            arguments: { checkIn: "2026-11-02", checkOut: "2026-11-04" }
          }),
          "2"
        )
        const denied = yield* Effect.flip(
          caller.executeAction("desk", { tool: "quote", arguments: { nights: 1, guests: 1 } })
        )
        // The served list leaves out what the server's authority denies, so to the caller it does not exist.
        assert.strictEqual(denied._tag, "ActionNotFound")
      }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
  )

  it.live(
    "serving an agent offers only what its authority allows: denied actions are neither listed nor run when called",
    () =>
      Effect.gen(function* () {
        let refunds = 0
        const desk = Role.make({
          identity: { name: "desk", goal: "Help", domain: "travel" },
          actions: {
            nights: Action.local({ description: "Nights", parameters: {}, run: () => 3 }),
            refund: Action.local({
              description: "Refund a booking",
              parameters: {},
              run: () => {
                refunds += 1
                return "refunded"
              }
            }),
            "admin.purge": Action.local({ description: "Purge", parameters: {}, run: () => "purged" })
          }
        })
        const agent = yield* Agent.make({ id: "desk", roles: [desk], authority: { deny: ["refund", "admin.*"] } })
        const served = yield* Mcp.serve(agent, { transport: { http: {} } })
        assert.deepStrictEqual(served.tools, [{ name: "nights", key: "nights" }])
        const client = yield* sdkClient(new StreamableHTTPClientTransport(new URL(served.url ?? "")))
        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(
          tools.map((tool) => tool.name),
          ["nights"]
        )
        // A denied name was never offered: to the client it is an unknown tool (-32602), and nothing runs.
        const refused = yield* refusalOf(client, "refund")
        assert.strictEqual(refused.code, -32602)
        assert.include(refused.message, "authority does not allow it")
        assert.strictEqual(refunds, 0)
        assert.include((yield* refusalOf(client, "admin.unknown")).message, "authority does not allow it")
        assert.notInclude((yield* refusalOf(client, "unknown")).message, "authority")
        assert.deepStrictEqual((yield* call(client, "nights", {})).content, [{ type: "text", text: "3" }])
      }).pipe(Effect.scoped)
  )
})
