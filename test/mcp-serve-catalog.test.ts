/**
 * What `Mcp.serve` offers besides tools, read by the SDK's own client: resources (declared, a template, the
 * role's knowledge documents), prompts (the role's own and declared ones), completions, logging at the level
 * the client sets, progress, and sessions (unknown ids, requests without one, the cap). The conformance suite
 * (`npm run check:mcp`) checks the same methods against the specification; these pin Rolecraft's own choices.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, Progress, Role } from "@rolecraft/core"
import { Mcp, McpPrompt, McpResource } from "@rolecraft/mcp"
import { Effect, Schema } from "effect"
import * as RawHttp from "./support/rawHttp.ts"

const knowledge = mkdtempSync(join(tmpdir(), "rolecraft-serve-kb-"))
writeFileSync(join(knowledge, "refunds.md"), "Refunds within 30 days.")

const role = Role.make({
  identity: { name: "desk", goal: "Answer guests", domain: "travel" },
  spec: { goals: ["Be brief"], knowledge: [knowledge] },
  actions: {
    slow: Action.local({
      description: "Reports progress and logs",
      parameters: {},
      run: () =>
        Effect.gen(function* () {
          yield* Effect.logDebug("below the level")
          yield* Effect.logWarning("careful")
          for (const done of [1, 2, 3]) yield* Progress.report(done, { total: 3, message: `step ${done}` })
          return "done"
        })
    }),
    echo: Action.local({ description: "Echo", parameters: { text: Schema.String }, run: ({ text }) => text })
  }
})

const resources = [
  McpResource.make({ uri: "docs://policy", name: "policy", mimeType: "text/plain", read: () => "No pets." }),
  McpResource.template({
    uriTemplate: "rooms://{id}",
    name: "room",
    variables: { id: ["101", "102", "201"] },
    read: ({ id }) => `room ${id}`
  })
]
const prompts = [
  McpPrompt.make({
    name: "greet",
    arguments: { guest: { required: true }, tone: { values: ["warm", "formal"] } },
    messages: ({ guest, tone }) => [{ role: "user", content: `Greet ${guest}, ${tone ?? "warm"}.` }]
  })
]

const connect = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "reader", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const codeOf = (promise: Promise<unknown>) =>
  Effect.promise(() =>
    promise.then(
      () => 0,
      (error: { code: number }) => error.code
    )
  )

describe("Mcp.serve: resources, prompts, completions, logging, progress, sessions", () => {
  it.live("serves what the role and its author declare, and refuses what does not exist by the protocol's codes", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      const served = yield* Mcp.serve(agent, { transport: { http: {} }, resources, prompts })
      const client = yield* connect(served.url ?? "")

      const listed = yield* Effect.promise(() => client.listResources())
      const doc = pathToFileURL(join(knowledge, "refunds.md")).href
      assert.deepStrictEqual(
        listed.resources.map((resource) => resource.uri),
        ["docs://policy", doc]
      )
      const read = (uri: string) => Effect.promise(() => client.readResource({ uri }))
      assert.deepStrictEqual((yield* read(doc)).contents, [
        { uri: doc, mimeType: "text/markdown", text: "Refunds within 30 days." }
      ])
      assert.deepStrictEqual((yield* read("rooms://102")).contents[0], { uri: "rooms://102", text: "room 102" })
      assert.strictEqual(yield* codeOf(client.readResource({ uri: "docs://nope" })), -32002)

      const names = (yield* Effect.promise(() => client.listPrompts())).prompts.map((prompt) => prompt.name)
      assert.deepStrictEqual(names, ["desk", "greet"])
      const own = yield* Effect.promise(() => client.getPrompt({ name: "desk", arguments: { task: "Find a room" } }))
      const text = String((own.messages[0]?.content as { text?: string } | undefined)?.text)
      for (const part of ["You are desk", "Answer guests", "- Be brief", "Find a room"]) assert.include(text, part)
      assert.strictEqual(yield* codeOf(client.getPrompt({ name: "nope" })), -32602)
      assert.strictEqual(yield* codeOf(client.getPrompt({ name: "greet", arguments: {} })), -32602)

      const complete = (
        ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string },
        name: string,
        value: string
      ) => Effect.promise(() => client.complete({ ref, argument: { name, value } }))
      assert.deepStrictEqual(
        (yield* complete({ type: "ref/resource", uri: "rooms://{id}" }, "id", "10")).completion.values,
        ["101", "102"]
      )
      assert.deepStrictEqual((yield* complete({ type: "ref/prompt", name: "greet" }, "tone", "f")).completion.values, [
        "formal"
      ])
      assert.deepStrictEqual(
        (yield* complete({ type: "ref/prompt", name: "greet" }, "guest", "a")).completion.values,
        []
      )
    }).pipe(Effect.scoped)
  )

  it.live("a call's logs at the client's level and its progress reach the client during the call", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      const served = yield* Mcp.serve(agent, { transport: { http: {} } })
      const client = yield* connect(served.url ?? "")
      const logs: Array<{ level: string; data: unknown }> = []
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
        logs.push({ level: notification.params.level, data: notification.params.data })
      })
      // No level set: nothing is sent.
      yield* Effect.promise(() => client.callTool({ name: "slow", arguments: {} }))
      assert.deepStrictEqual(logs, [])
      yield* Effect.promise(() => client.setLoggingLevel("info"))
      const progress: Array<number> = []
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "slow", arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) })
      )
      assert.deepStrictEqual(result.content, [{ type: "text", text: "done" }])
      assert.deepStrictEqual(progress, [1, 2, 3])
      assert.deepStrictEqual(logs, [{ level: "warning", data: "careful" }])
    }).pipe(Effect.scoped)
  )

  it.live("sessions: a request without one that is not initialize is 400, an unknown id 404, past the cap 503", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      const served = yield* Mcp.serve(agent, { transport: { http: { maxSessions: 1 } } })
      const url = served.url ?? ""
      const host = new URL(url).host
      const headers = { host, "content-type": "application/json", accept: "application/json, text/event-stream" }
      const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      assert.strictEqual((yield* RawHttp.send("POST", url, headers, list)).status, 400)
      assert.strictEqual(
        (yield* RawHttp.send("POST", url, { ...headers, "mcp-session-id": "forged" }, list)).status,
        404
      )
      yield* connect(url)
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
      })
      const refused = yield* RawHttp.send("POST", url, headers, initialize)
      assert.strictEqual(refused.status, 503)
      assert.include(refused.body, "at most 1")
    }).pipe(Effect.scoped)
  )
})
