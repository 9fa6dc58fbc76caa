/**
 * `Mcp.serve` sessions against each other (cases C90, C91), seen by the MCP SDK's own clients over HTTP:
 *
 * - a pending approval belongs to the session that asked: two sessions asking for one call get two tokens,
 *   another session can neither use an approved token nor decline it in-band;
 * - the text a person reads in an elicitation escapes every character that could forge a line or hide text;
 * - names and URIs a client sends are looked up among own keys only and bounded, answered with the
 *   specification's codes (never -32603), and the server stays up.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type ElicitRequest, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, Role } from "@rolecraft/core"
import { Mcp, McpPrompt, McpResource } from "@rolecraft/mcp"
import { Effect, Schema } from "effect"

type Result = {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly isError?: boolean
  readonly structuredContent?: { readonly error?: Record<string, unknown> }
}

const makeAgent = Effect.gen(function* () {
  const booked: Array<string> = []
  const paid: Array<string> = []
  const role = Role.make({
    identity: { name: "desk", goal: "Book hotels", domain: "travel" },
    actions: {
      book: Action.local({
        description: "Book a hotel room and charge the card",
        parameters: { hotel: Schema.String },
        run: ({ hotel }) => {
          booked.push(hotel)
          return `booked ${hotel}`
        }
      }).pipe(Action.requireApproval({ reason: "Charges the card" })),
      pay: Action.local({
        description: "Pay an account",
        parameters: { to: Schema.String },
        run: ({ to }) => {
          paid.push(to)
          return `paid ${to}`
        }
      }).pipe(Action.requireApproval({ reason: "Moves money" }))
    }
  })
  const agent = yield* Agent.make({ id: "desk", roles: [role] })
  return { agent, booked, paid }
})

const connect = (url: string, name: string, answer?: (request: ElicitRequest) => ElicitResult) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client(
        { name, version: "1.0.0" },
        { capabilities: answer === undefined ? {} : { elicitation: {} } }
      )
      if (answer !== undefined) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request))
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const call = (client: Client, name: string, args: Record<string, unknown>, token?: string) =>
  Effect.promise(
    () =>
      client.callTool({
        name,
        arguments: args,
        ...(token === undefined ? {} : { _meta: { "rolecraft/approvalToken": token } })
      }) as Promise<Result>
  )

const pendingOf = (result: Result): string => {
  assert.isTrue(result.isError)
  const id = result.structuredContent?.error?.pendingTokenId
  assert.isString(id)
  return id as string
}

describe("Mcp.serve: a pending approval belongs to the session that asked (C90)", () => {
  it.live("two sessions asking for one call get two tokens; the other session's approved token runs nothing", () =>
    Effect.gen(function* () {
      const { agent, booked } = yield* makeAgent
      const served = yield* Mcp.serve(agent, { transport: { http: {} } })
      const alice = yield* connect(served.url ?? "", "alice-cli")
      const mallory = yield* connect(served.url ?? "", "mallory-cli")

      const aliceToken = pendingOf(yield* call(alice, "book", { hotel: "casa-alfama" }))
      const malloryToken = pendingOf(yield* call(mallory, "book", { hotel: "casa-alfama" }))
      assert.notStrictEqual(malloryToken, aliceToken, "B does not learn A's token")
      // Each session still reuses its own live token.
      assert.strictEqual(pendingOf(yield* call(alice, "book", { hotel: "casa-alfama" })), aliceToken)

      yield* agent.approvals.approve(aliceToken, "operator")
      for (const stolen of [
        call(mallory, "book", { hotel: "casa-alfama" }, aliceToken),
        call(mallory, "book", { hotel: "casa-alfama", _approval_token: aliceToken })
      ]) {
        const refused = yield* stolen
        assert.isTrue(refused.isError)
        assert.strictEqual(refused.structuredContent?.error?.category, "APPROVAL")
        assert.strictEqual(refused.structuredContent?.error?.check, "session")
        assert.include(refused.content[0]?.text ?? "", "another MCP session")
      }
      assert.deepStrictEqual(booked, [], "nothing ran for the other session")

      const done = yield* call(alice, "book", { hotel: "casa-alfama" }, aliceToken)
      assert.isUndefined(done.isError, done.content[0]?.text)
      assert.deepStrictEqual(booked, ["casa-alfama"], "the owner's call books once")
    }).pipe(Effect.scoped)
  )

  it.live("another session's in-band decline decides only its own token; the owner's approval still works", () =>
    Effect.gen(function* () {
      const { agent, booked } = yield* makeAgent
      const served = yield* Mcp.serve(agent, { transport: { http: {} } })
      const alice = yield* connect(served.url ?? "", "alice-cli")
      const asked: Array<string> = []
      const mallory = yield* connect(served.url ?? "", "mallory-desktop", (request) => {
        asked.push(request.params.message)
        return { action: "decline" }
      })

      const aliceToken = pendingOf(yield* call(alice, "book", { hotel: "ribeira-rooms" }))
      const declined = yield* call(mallory, "book", { hotel: "ribeira-rooms" })
      assert.isTrue(declined.isError)
      assert.strictEqual(asked.length, 1)
      // The operator's approval of A's token succeeds: B's decline did not reach it.
      const approved = yield* agent.approvals.approve(aliceToken, "operator")
      assert.strictEqual(approved.status, "approved")
      const done = yield* call(alice, "book", { hotel: "ribeira-rooms" }, aliceToken)
      assert.isUndefined(done.isError, done.content[0]?.text)
      assert.deepStrictEqual(booked, ["ribeira-rooms"])
    }).pipe(Effect.scoped)
  )

  it.live("no argument can forge a line or hide text in what the person is asked, nor in the store's listing", () =>
    Effect.gen(function* () {
      const { agent, paid } = yield* makeAgent
      const served = yield* Mcp.serve(agent, { transport: { http: {} } })
      const asked: Array<string> = []
      const client = yield* connect(served.url ?? "", "desk-client", (request) => {
        asked.push(request.params.message)
        return { action: "decline" }
      })
      const hostile = [
        "\u2028",
        "\u2029",
        "\r",
        "\n",
        "\u0085",
        "\u202e",
        "\u2066",
        "\u200b",
        "\u061c",
        "\ufeff",
        "\u{e0041}"
      ]
      const to = `acct-7${hostile.join("")}Why it needs approval: a routine refund TO you`
      yield* call(client, "pay", { to })
      assert.strictEqual(asked.length, 1)
      const message = asked[0] ?? ""
      const lines = message.split(/\r\n|[\n\r\u0085\u2028\u2029]/)
      assert.strictEqual(lines.length, 4, "the four lines the server writes, no more")
      assert.strictEqual(lines.filter((line) => line.startsWith("Why it needs approval:")).length, 1)
      for (const character of hostile.filter((c) => c !== "\n")) assert.notInclude(message, character)
      assert.include(message, "\\u2028")
      assert.include(message, "\\u202E")
      assert.include(message, "\\u{E0041}")
      // What the approval store keeps to show a person (the inbox) is escaped the same way.
      const plain = yield* connect(served.url ?? "", "plain-client")
      pendingOf(yield* call(plain, "pay", { to }))
      const listed = yield* agent.approvals.list()
      assert.isAbove(listed.length, 0)
      for (const pending of listed) {
        for (const character of hostile) assert.notInclude(pending.arguments ?? "", character)
      }
      assert.deepStrictEqual(paid, [])
    }).pipe(Effect.scoped)
  )
})

describe("Mcp.serve: names and URIs a client sends (C91)", () => {
  const knowledge = mkdtempSync(join(tmpdir(), "rolecraft-serve-names-"))
  writeFileSync(join(knowledge, "hotels.md"), "Casa Alfama, Pousada Sol.")
  const role = Role.make({
    identity: { name: "desk", goal: "Answer guests", domain: "travel" },
    spec: { knowledge: [knowledge] },
    actions: {
      echo: Action.local({ description: "Echo", parameters: { text: Schema.String }, run: ({ text }) => text })
    }
  })
  const resources = [
    McpResource.template({
      uriTemplate: "hotels://{hotel}",
      name: "hotel",
      variables: { hotel: ["casa-alfama", "pousada-sol"] },
      read: ({ hotel }) => `hotel ${hotel}`
    })
  ]
  const prompts = [
    McpPrompt.make({
      name: "plan_stay",
      arguments: { hotel: { values: ["casa-alfama", "pousada-sol"] } },
      messages: ({ hotel }) => [{ role: "user", content: `Plan a stay at ${hotel}.` }]
    })
  ]
  const hostileNames = [...Object.getOwnPropertyNames(Object.prototype), "__proto__"]

  const codeOf = (promise: Promise<unknown>) =>
    Effect.promise(() =>
      promise.then(
        () => 0,
        (error: { code: number }) => error.code
      )
    )

  it.live("every Object.prototype name, in every request that looks one up, is answered by the protocol", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      const served = yield* Mcp.serve(agent, { transport: { http: {} }, resources, prompts })
      const client = yield* connect(served.url ?? "", "names-client")
      const empty = { values: [], total: 0, hasMore: false }
      for (const name of hostileNames) {
        const byPrompt = yield* Effect.promise(() =>
          client.complete({ ref: { type: "ref/prompt", name: "plan_stay" }, argument: { name, value: "" } })
        )
        assert.deepStrictEqual(byPrompt.completion, empty, `prompt argument ${name}`)
        const byTemplate = yield* Effect.promise(() =>
          client.complete({ ref: { type: "ref/resource", uri: "hotels://{hotel}" }, argument: { name, value: "" } })
        )
        assert.deepStrictEqual(byTemplate.completion, empty, `template variable ${name}`)
        const byPromptName = yield* Effect.promise(() =>
          client.complete({ ref: { type: "ref/prompt", name }, argument: { name: "hotel", value: "" } })
        )
        assert.deepStrictEqual(byPromptName.completion, empty, `prompt ${name}`)
        assert.strictEqual(yield* codeOf(client.getPrompt({ name })), -32602, `prompts/get ${name}`)
        assert.strictEqual(
          yield* codeOf(client.getPrompt({ name: "plan_stay", arguments: { [name]: "x" } })),
          0,
          `prompts/get with an argument ${name}`
        )
        assert.strictEqual(yield* codeOf(client.readResource({ uri: name })), -32002, `resources/read ${name}`)
        assert.strictEqual(yield* codeOf(client.callTool({ name, arguments: {} })), -32602, `tools/call ${name}`)
      }
      // The declared values still complete.
      const real = yield* Effect.promise(() =>
        client.complete({ ref: { type: "ref/prompt", name: "plan_stay" }, argument: { name: "hotel", value: "casa" } })
      )
      assert.deepStrictEqual(real.completion.values, ["casa-alfama"])
      yield* Effect.promise(() => client.ping())
    }).pipe(Effect.scoped)
  )

  it.live("a 2 MB URI and oversized names are -32602 naming the cap, not -32603; the server stays up", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      const served = yield* Mcp.serve(agent, { transport: { http: {} }, resources, prompts })
      const client = yield* connect(served.url ?? "", "sizes-client")
      const huge = `${pathToFileURL(knowledge).href}/${"a".repeat(2_000_000)}`
      const messageOf = (promise: Promise<unknown>) =>
        Effect.promise(() =>
          promise.then(
            () => ({ code: 0, message: "" }),
            (error: { code: number; message: string }) => ({ code: error.code, message: error.message })
          )
        )
      const read = yield* messageOf(client.readResource({ uri: huge }))
      assert.strictEqual(read.code, -32602)
      assert.include(read.message, "8,192")
      const long = "n".repeat(300)
      for (const request of [
        client.complete({ ref: { type: "ref/prompt", name: long }, argument: { name: "hotel", value: "" } }),
        client.complete({ ref: { type: "ref/prompt", name: "plan_stay" }, argument: { name: long, value: "" } }),
        client.getPrompt({ name: long })
      ]) {
        const answer = yield* messageOf(request)
        assert.strictEqual(answer.code, -32602)
        assert.include(answer.message, "256")
      }
      // At the caps, the lookups answer as for any unknown name.
      assert.strictEqual(yield* codeOf(client.readResource({ uri: `hotels://${"a".repeat(8_000)}` })), 0)
      yield* Effect.promise(() => client.ping())
    }).pipe(Effect.scoped)
  )
})

describe("Mcp.serve: sessions per client", () => {
  const initialize = (url: string) =>
    Effect.promise(() =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "hog", version: "1" } }
        })
      }).then(async (response) => ({ status: response.status, body: await response.text() }))
    )

  it.live(
    "one client address holds at most maxSessionsPerClient sessions (429 beyond), whatever the listener's cap",
    () =>
      Effect.gen(function* () {
        const { agent } = yield* makeAgent
        const served = yield* Mcp.serve(agent, { transport: { http: { maxSessions: 100, maxSessionsPerClient: 2 } } })
        const url = served.url ?? ""
        assert.strictEqual((yield* initialize(url)).status, 200)
        assert.strictEqual((yield* initialize(url)).status, 200)
        const third = yield* initialize(url)
        assert.strictEqual(third.status, 429)
        assert.include(third.body, "at most 2")
      }).pipe(Effect.scoped)
  )

  it.live("pings alone do not keep a session alive past its idle timeout; requests do", () =>
    Effect.gen(function* () {
      const { agent } = yield* makeAgent
      const served = yield* Mcp.serve(agent, { transport: { http: { idleTimeout: "400 millis" } } })
      const pinger = yield* connect(served.url ?? "", "pinger")
      const worker = yield* connect(served.url ?? "", "worker")
      for (let i = 0; i < 12; i++) {
        yield* Effect.promise(() => pinger.ping().catch(() => undefined))
        yield* Effect.promise(() => worker.listTools())
        yield* Effect.sleep("100 millis")
      }
      const after = yield* Effect.promise(() =>
        pinger.listTools().then(
          () => "answered",
          (error: Error) => error.message
        )
      )
      assert.notStrictEqual(after, "answered", "the pinging session was closed")
      const tools = yield* Effect.promise(() => worker.listTools())
      assert.isAbove(tools.tools.length, 0, "the working session is alive")
    }).pipe(Effect.scoped)
  )
})
