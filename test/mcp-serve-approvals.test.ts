/**
 * C59: an approval-gated tool served by `Mcp.serve`, seen by the SDK's own MCP client.
 *
 * - A client that declares no elicitation gets a refusal that carries the pending token id, in
 *   `structuredContent` and in the text; repeating the call (missing or forged token) reuses that one live
 *   pending token; once a person approves it (`agent.approvals`), the client sends it back — as the request's
 *   `_meta["rolecraft/approvalToken"]`, or as the `_approval_token` argument declared only in the served schema
 *   of gated tools — and the call runs once.
 * - A client that declares elicitation is asked, in-band, about the exact call (action, arguments, what it
 *   does); accepting runs it once, declining runs nothing and rejects the token.
 * - With `approveInBand: false` an eliciting client gets the token refusal too.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type ElicitRequest, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, Role } from "@rolecraft/core"
import { Mcp } from "@rolecraft/mcp"
import { Effect, Schema } from "effect"

type Result = {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly isError?: boolean
  readonly structuredContent?: { readonly error?: Record<string, unknown> }
}

const makeAgent = Effect.gen(function* () {
  const booked: Array<string> = []
  const role = Role.make({
    identity: { name: "desk", goal: "Book hotels", domain: "travel" },
    actions: {
      book: Action.local({
        description: "Book a hotel room and charge the card",
        parameters: { hotelId: Schema.String },
        run: ({ hotelId }) => {
          booked.push(hotelId)
          return `booked ${hotelId}`
        }
      }).pipe(Action.requireApproval({ reason: "Books and charges a hotel" })),
      nights: Action.local({ description: "Count nights", parameters: { n: Schema.Int }, run: ({ n }) => n })
    }
  })
  const agent = yield* Agent.make({ id: "desk", roles: [role] })
  return { agent, booked }
})

const connect = (url: string, answer?: (request: ElicitRequest) => ElicitResult) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client(
        { name: "approver-client", version: "1.0.0" },
        { capabilities: answer === undefined ? {} : { elicitation: {} } }
      )
      if (answer !== undefined) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request))
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const call = (client: Client, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  Effect.promise(
    () =>
      client.callTool({
        name: "book",
        arguments: args,
        ...(meta === undefined ? {} : { _meta: meta })
      }) as Promise<Result>
  )

const pendingOf = (result: Result): string => {
  assert.isTrue(result.isError)
  const error = result.structuredContent?.error ?? {}
  assert.strictEqual(error.category, "APPROVAL")
  const id = error.pendingTokenId
  assert.isString(id)
  // The text carries it too, for a client that shows only text.
  const text = JSON.parse(result.content[0]?.text ?? "{}") as { error: { pendingTokenId?: string; message: string } }
  assert.strictEqual(text.error.pendingTokenId, id)
  assert.include(text.error.message, id as string)
  return id as string
}

describe("Mcp.serve: approvals over MCP", () => {
  it.live("a client without elicitation gets the pending token id, reused while live, and completes the cycle", () =>
    Effect.gen(function* () {
      const { agent, booked } = yield* makeAgent
      const served = yield* Mcp.serve(agent, { transport: { http: {} } })
      const client = yield* connect(served.url ?? "")

      const { tools } = yield* Effect.promise(() => client.listTools())
      const book = tools.find((tool) => tool.name === "book")
      const nights = tools.find((tool) => tool.name === "nights")
      // Only the gated tool's served schema declares the token; neither is open to other keys.
      assert.property(book?.inputSchema.properties ?? {}, "_approval_token")
      assert.notProperty(nights?.inputSchema.properties ?? {}, "_approval_token")
      assert.isFalse((book?.inputSchema as { additionalProperties?: unknown } | undefined)?.additionalProperties)
      // ... and none of it reaches a model: the agent's own tools (what a chat turn offers) are unchanged.
      const offered = agent.tools.find((tool) => tool.name === "book")
      assert.notProperty(offered?.parameters.properties ?? {}, "_approval_token")
      assert.notStrictEqual(offered?.parameters.additionalProperties, false)

      const id = pendingOf(yield* call(client, { hotelId: "h-1" }))
      // Repeated refusals — no token, a forged one in either place — reuse the one live pending token.
      assert.strictEqual(pendingOf(yield* call(client, { hotelId: "h-1" })), id)
      assert.strictEqual(pendingOf(yield* call(client, { hotelId: "h-1", _approval_token: "forged" })), id)
      assert.strictEqual(
        pendingOf(yield* call(client, { hotelId: "h-1" }, { "rolecraft/approvalToken": "forged" })),
        id
      )
      assert.deepStrictEqual(booked, [])

      // A person approves it; the client sends it back in _meta and the call runs once.
      yield* agent.approvals.approve(id, "ops")
      const done = yield* call(client, { hotelId: "h-1" }, { "rolecraft/approvalToken": id })
      assert.isUndefined(done.isError)
      assert.strictEqual(done.content[0]?.text, "booked h-1")
      const again = yield* call(client, { hotelId: "h-1" }, { "rolecraft/approvalToken": id })
      assert.strictEqual(again.structuredContent?.error?.check, "used")
      assert.deepStrictEqual(booked, ["h-1"])

      // A client that can only send arguments (the Inspector CLI) uses the declared argument.
      const second = pendingOf(yield* call(client, { hotelId: "h-2" }))
      yield* agent.approvals.approve(second, "ops")
      const viaArgument = yield* call(client, { hotelId: "h-2", _approval_token: second })
      assert.strictEqual(viaArgument.content[0]?.text, "booked h-2")
      assert.deepStrictEqual(booked, ["h-1", "h-2"])
    }).pipe(Effect.scoped)
  )

  it.live("a client with elicitation is asked about the exact call: accepted runs once, declined runs nothing", () =>
    Effect.gen(function* () {
      const { agent, booked } = yield* makeAgent
      const served = yield* Mcp.serve(agent, { transport: { http: {} } })
      const asked: Array<string> = []
      let approve = true
      const client = yield* connect(served.url ?? "", (request) => {
        asked.push(request.params.message)
        return { action: "accept", content: { approve } }
      })

      const done = yield* call(client, { hotelId: "h-9" })
      assert.isUndefined(done.isError)
      assert.strictEqual(done.content[0]?.text, "booked h-9")
      assert.deepStrictEqual(booked, ["h-9"])
      assert.lengthOf(asked, 1)
      for (const part of ["book", '{"hotelId":"h-9"}', "Book a hotel room and charge the card", "Books and charges"]) {
        assert.include(asked[0], part)
      }

      approve = false
      const declined = yield* call(client, { hotelId: "h-10" })
      assert.isTrue(declined.isError)
      assert.include(declined.content[0]?.text ?? "", "did not approve")
      assert.deepStrictEqual(booked, ["h-9"])
    }).pipe(Effect.scoped)
  )

  it.live("with approveInBand: false an eliciting client is not asked: it gets the pending token id", () =>
    Effect.gen(function* () {
      const { agent, booked } = yield* makeAgent
      const served = yield* Mcp.serve(agent, { transport: { http: {} }, approveInBand: false })
      let asked = 0
      const client = yield* connect(served.url ?? "", () => {
        asked += 1
        return { action: "accept", content: { approve: true } }
      })
      pendingOf(yield* call(client, { hotelId: "h-3" }))
      assert.strictEqual(asked, 0)
      assert.deepStrictEqual(booked, [])
    }).pipe(Effect.scoped)
  )
})
