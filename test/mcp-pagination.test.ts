/**
 * C13, for its kind: every way a `tools/list` cursor can fail to advance, each served by a real MCP server (the
 * SDK's own low-level `Server`, over its in-memory transport, behind `McpClientSdk`) that paginates badly that
 * way: an empty-string or `null` `nextCursor` (the end), a cursor that repeats at once or after a cycle, the
 * same tools under a fresh cursor on every page, a cursor that is not a string, endless fresh pages (the page
 * limit), and the good cases beside them (101 tools in pages of 50; pages that overlap). The listing always
 * ends, with the tools found so far (each name once), and an unfinished one says why: `onListingStopped` on
 * the connection, and an `McpToolListingStopped` event in `agent.events` naming the server and the reason.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Events, McpClient, Role } from "@rolecraft/core"
import { InMemoryMcp } from "@rolecraft/testing"
import { Chunk, Effect, Fiber, Stream } from "effect"
import * as fc from "fast-check"

/** One page of a listing: the tool names on it and the `nextCursor` sent (left out when `undefined`). */
interface Page {
  readonly tools: ReadonlyArray<string>
  readonly nextCursor?: unknown
}

const names = (prefix: string, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${from + i}`)

interface Variant {
  readonly name: string
  /** The page for a request's cursor (`undefined` for the first) and its number (from 1). */
  readonly page: (cursor: string | undefined, request: number) => Page
  readonly tools: ReadonlyArray<string>
  readonly pages: number
  readonly stopped: McpClient.ListingStopped["reason"] | undefined
  readonly maxListPages?: number
}

const eight = names("t", 1, 8)

const variants: ReadonlyArray<Variant> = [
  {
    name: "101 tools in pages of 50",
    page: (cursor) => {
      const start = cursor === undefined ? 0 : Number(JSON.parse(atob(cursor)).offset)
      const next = start + 50
      return {
        tools: names("t", start + 1, Math.min(50, 101 - start)),
        ...(next < 101 ? { nextCursor: btoa(JSON.stringify({ offset: next })) } : {})
      }
    },
    tools: names("t", 1, 101),
    pages: 3,
    stopped: undefined
  },
  {
    name: 'an empty-string nextCursor is the end ("")',
    page: (cursor) => (cursor === undefined ? { tools: ["a", "b"], nextCursor: "" } : { tools: ["c"] }),
    tools: ["a", "b"],
    pages: 1,
    stopped: undefined
  },
  {
    name: "a null nextCursor is the end",
    page: (cursor) => (cursor === undefined ? { tools: ["a", "b"], nextCursor: null } : { tools: ["c"] }),
    tools: ["a", "b"],
    pages: 1,
    stopped: undefined
  },
  {
    name: "the same 8 tools and the same cursor on every page",
    page: () => ({ tools: eight, nextCursor: "eyJvZmZzZXQiOjh9" }),
    tools: eight,
    pages: 2,
    stopped: "RepeatedCursor"
  },
  {
    name: "the same 8 tools under a fresh cursor on every page",
    page: (_, request) => ({ tools: eight, nextCursor: `page-${request + 1}` }),
    tools: eight,
    pages: 2,
    stopped: "NoNewTools"
  },
  {
    name: "a cursor that comes back after a cycle (A, B, A), new tools on each page",
    page: (cursor) =>
      cursor === undefined
        ? { tools: ["a", "b"], nextCursor: "A" }
        : cursor === "A"
          ? { tools: ["c"], nextCursor: "B" }
          : { tools: ["d"], nextCursor: "A" },
    tools: ["a", "b", "c", "d"],
    pages: 3,
    stopped: "RepeatedCursor"
  },
  {
    name: "an empty page under a fresh cursor",
    page: (cursor) =>
      cursor === undefined
        ? { tools: ["a"], nextCursor: "2" }
        : cursor === "2"
          ? { tools: [], nextCursor: "3" }
          : { tools: ["b"] },
    tools: ["a"],
    pages: 2,
    stopped: "NoNewTools"
  },
  {
    name: "a cursor that is not a string",
    page: (cursor) => (cursor === undefined ? { tools: ["a", "b"], nextCursor: 7 } : { tools: ["c"] }),
    tools: ["a", "b"],
    pages: 1,
    stopped: "InvalidCursor"
  },
  {
    name: "pages that overlap: names repeat beside new ones",
    page: (cursor) =>
      cursor === undefined
        ? { tools: ["a", "b"], nextCursor: "1" }
        : cursor === "1"
          ? { tools: ["b", "c", "c"], nextCursor: "2" }
          : { tools: ["c", "d"] },
    tools: ["a", "b", "c", "d"],
    pages: 3,
    stopped: undefined
  },
  {
    name: "endless fresh pages, one new tool each: the default page limit (100)",
    page: (_, request) => ({ tools: [`t${request}`], nextCursor: `page-${request + 1}` }),
    tools: names("t", 1, 100),
    pages: 100,
    stopped: "PageLimit"
  },
  {
    name: "endless fresh pages under maxListPages 5",
    page: (_, request) => ({ tools: [`t${request}`], nextCursor: `page-${request + 1}` }),
    tools: names("t", 1, 5),
    pages: 5,
    stopped: "PageLimit",
    maxListPages: 5
  }
]

/** A server paginating as `variant` says; `requests.lists` counts its `tools/list` requests. */
const serverOf = (variant: Variant, requests: { lists: number }) => () => {
  const server = new Server({ name: "paged", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    requests.lists++
    const page = variant.page(request.params?.cursor, requests.lists)
    return {
      tools: page.tools.map((name) => ({ name, inputSchema: { type: "object" as const } })),
      ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor })
    } as { tools: Array<{ name: string; inputSchema: { type: "object" } }> }
  })
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: "text" as const, text: `ran ${request.params.name}` }]
  }))
  return server
}

const options = (variant: Variant) => (variant.maxListPages === undefined ? {} : { maxListPages: variant.maxListPages })

describe("C13: tools/list ends whatever the cursor does", () => {
  for (const variant of variants) {
    it.effect(`${variant.name}: the tools so far, each once, and why it stopped`, () => {
      const requests = { lists: 0 }
      const stops: Array<McpClient.ListingStopped> = []
      return Effect.gen(function* () {
        const client = yield* McpClient.McpClient
        const connection = yield* client.connect("memory://paged", {
          name: "paged",
          onListingStopped: (stopped) => Effect.sync(() => stops.push(stopped))
        })
        const listed = yield* connection.listTools()
        assert.deepStrictEqual(
          listed.map((tool) => tool.name),
          variant.tools
        )
        assert.strictEqual(requests.lists, variant.pages, "pages requested")
        assert.deepStrictEqual(
          stops.map((stop) => stop.reason),
          variant.stopped === undefined ? [] : [variant.stopped]
        )
        if (variant.stopped !== undefined) {
          assert.strictEqual(stops[0]?.pages, variant.pages)
          assert.strictEqual(stops[0]?.tools, variant.tools.length)
        }
      }).pipe(
        Effect.scoped,
        Effect.provide(InMemoryMcp.layer({ "memory://paged": serverOf(variant, requests) }, options(variant)))
      )
    })
  }
})

const stoppedEvents = (agent: Agent.Agent<any, any>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(
      Stream.runCollect(
        Stream.takeUntil(agent.events, (event) => event._tag === "ActionSucceeded" || event._tag === "ActionFailed")
      )
    )
    for (let i = 0; i < 10; i++) yield* Effect.yieldNow
    return Effect.map(Fiber.join(fiber), (events) =>
      Chunk.toReadonlyArray(Chunk.fromIterable(events)).filter(
        (event): event is Events.McpToolListingStopped => event._tag === "McpToolListingStopped"
      )
    )
  })

describe("C13: an agent says when a server's listing stopped early", () => {
  for (const variant of variants) {
    it.effect(`${variant.name}: ${variant.stopped ?? "no"} McpToolListingStopped event`, () => {
      const requests = { lists: 0 }
      return Effect.gen(function* () {
        const paged = Action.mcpTool({ description: "Paged tools", server: "memory://paged" })
        const role = Role.make({ identity: { name: "pager", goal: "Page", domain: "tests" }, actions: { paged } })
        const agent = yield* Agent.make({ id: "pager", roles: [role] })
        const events = yield* stoppedEvents(agent)
        const first = variant.tools[0] ?? ""
        assert.strictEqual(yield* agent.executeAction("paged", { tool: first }), `ran ${first}`)
        const stopped = yield* events
        if (variant.stopped === undefined) {
          assert.deepStrictEqual(stopped, [])
          return
        }
        assert.strictEqual(stopped.length, 1)
        const event = stopped[0] as Events.McpToolListingStopped
        assert.deepStrictEqual(
          { ...event, timestamp: 0, message: "" },
          {
            _tag: "McpToolListingStopped",
            agentId: "pager",
            action: "paged",
            server: "memory://paged",
            reason: variant.stopped,
            pages: variant.pages,
            tools: variant.tools.length,
            message: "",
            timestamp: 0
          }
        )
        assert.include(event.message, "memory://paged")
      }).pipe(
        Effect.scoped,
        Effect.provide(InMemoryMcp.layer({ "memory://paged": serverOf(variant, requests) }, options(variant)))
      )
    })
  }
})

const pool = ["a", "b", "c", "d", "e", "f"]

/** A page a server may send: some tools of a small pool, and any `nextCursor` (a reused one, a fresh one, an odd one). */
const pageArbitrary = (index: number): fc.Arbitrary<Page> =>
  fc.record({
    tools: fc.subarray(pool),
    nextCursor: fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.constant(""),
      fc.constantFrom("x", "y", "z"),
      fc.constant(`fresh-${index}`),
      fc.integer()
    )
  })

const scripts = fc
  .integer({ min: 1, max: 30 })
  .chain((length) => fc.tuple(...Array.from({ length }, (_, index) => pageArbitrary(index))))

describe("C13 property: any pagination ends, each name once, never following a cursor twice", () => {
  it("over generated servers (pages of a small pool of names, any cursors), maxListPages 20", async () => {
    await fc.assert(
      fc.asyncProperty(scripts, async (script) => {
        const asked: Array<string | undefined> = []
        const stops: Array<McpClient.ListingStopped> = []
        const factory = () => {
          const server = new Server({ name: "paged", version: "1.0.0" }, { capabilities: { tools: {} } })
          server.setRequestHandler(ListToolsRequestSchema, (request) => {
            asked.push(request.params?.cursor)
            const page = script[asked.length - 1] ?? { tools: [] }
            return {
              tools: page.tools.map((name) => ({ name, inputSchema: { type: "object" as const } })),
              ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor })
            } as { tools: Array<{ name: string; inputSchema: { type: "object" } }> }
          })
          return server
        }
        const listed = await Effect.runPromise(
          Effect.gen(function* () {
            const client = yield* McpClient.McpClient
            const connection = yield* client.connect("memory://paged", {
              name: "paged",
              onListingStopped: (stopped) => Effect.sync(() => stops.push(stopped))
            })
            return yield* connection.listTools()
          }).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://paged": factory }, { maxListPages: 20 })))
        )
        assert.isAtMost(asked.length, 20, "never past the page limit")
        const followed = asked.slice(1)
        assert.strictEqual(new Set(followed).size, followed.length, "no cursor followed twice")
        assert.isTrue(
          followed.every((cursor) => typeof cursor === "string" && cursor !== ""),
          "only string cursors, never the end marker"
        )
        const seen = [...new Set(script.slice(0, asked.length).flatMap((page) => page.tools))]
        assert.deepStrictEqual(
          listed.map((tool) => tool.name),
          seen,
          "each name once, in the order first listed"
        )
        const last = script[asked.length - 1]?.nextCursor
        const ended = last === undefined || last === null || last === "" || asked.length > script.length
        assert.strictEqual(stops.length, ended ? 0 : 1, `stopped early once, or ended: ${JSON.stringify(stops)}`)
      }),
      { numRuns: Number(process.env.FAULTS_RUNS ?? 100) }
    )
  })
})
